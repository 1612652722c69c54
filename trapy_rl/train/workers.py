"""The worker side of the worker/learner boundary: who plays the self-play games.

A backend takes weights in and hands positions and game records out:

    backend.play(num_moves, seed=...) -> SelfPlayResult   # samples, records, rates
    backend.weights_changed()                             # the learner updated the net
    backend.state_dict() / load_state_dict(state)         # the games in progress
    backend.close()

`LocalSelfPlay` plays in the training process with the learner's own net (``num_workers=0``).
Another backend (worker processes, a cluster) only has to honour these five methods.
"""

from __future__ import annotations

from typing import Protocol

from torch import nn

from trapy_rl.game.board import Board
from trapy_rl.train.selfplay import SelfPlay, SelfPlayResult

__all__ = ["LocalSelfPlay", "SelfPlayBackend", "make_selfplay_backend"]


class SelfPlayBackend(Protocol):
    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult: ...
    def weights_changed(self) -> None: ...
    def state_dict(self) -> dict: ...
    def load_state_dict(self, state: dict) -> None: ...
    def close(self) -> None: ...


class LocalSelfPlay:
    """Self-play in this process; the evaluator holds the learner's net, so it is always
    current and `weights_changed` has nothing to do."""

    def __init__(self, selfplay: SelfPlay):
        self.selfplay = selfplay

    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult:
        return self.selfplay.play(num_moves, seed=seed)

    def weights_changed(self) -> None:
        pass

    def state_dict(self) -> dict:
        return self.selfplay.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.selfplay.load_state_dict(state)

    def close(self) -> None:
        pass


def make_selfplay_backend(net: nn.Module, evaluator, board: Board, config: dict) -> SelfPlayBackend:
    """The backend ``config["selfplay"]["num_workers"]`` asks for (0: in this process)."""
    sp, mc = config["selfplay"], config["mcts"]
    if sp["num_workers"] != 0:
        raise ValueError(
            f"selfplay.num_workers={sp['num_workers']}: only 0 (self-play in the training "
            "process) is available"
        )
    selfplay = SelfPlay(
        evaluator,
        board,
        num_games=sp["num_games"],
        num_simulations=mc["num_simulations"],
        c_puct=mc["c_puct"],
        dirichlet_alpha=mc["dirichlet_alpha"],
        dirichlet_fraction=mc["dirichlet_fraction"],
        temperature_moves=sp["temperature_moves"],
        resign_threshold=sp["resign_threshold"],
        resign_playout_fraction=sp["resign_playout_fraction"],
        seed=[int(config["seed"]), 0],
    )
    return LocalSelfPlay(selfplay)
