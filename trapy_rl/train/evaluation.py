"""What a training run measures about its net: matches, and the values of the opening moves.

Shapes: n games, K cells, A actions.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.agents import RandomAgent, RolloutMCTSAgent, register_agent_kind
from trapy_rl.agents.base import AgentSpec
from trapy_rl.eval import MatchResult, play_match
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.mcts.policies import select_actions
from trapy_rl.mcts.search import MCTS

__all__ = ["NetworkMCTSAgent", "evaluate", "opening_values", "opening_values_figure"]


class NetworkMCTSAgent:
    """A net guiding PUCT search; plays the most visited action (no noise, fresh tree per move).

    Args:
        evaluator: ``(batch, games) -> (logits [n, A], values [n])``, e.g. `Evaluator(net)`.
        num_simulations: simulations per move.
        c_puct: the exploration constant.
        seed: seeds tie-breaking between equally visited actions.
        name: the label in match tables.
    """

    def __init__(
        self,
        evaluator,
        *,
        num_simulations: int = 64,
        c_puct: float = 1.25,
        seed: int | None = None,
        name: str | None = None,
    ):
        if num_simulations < 1:
            raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
        self.evaluator = evaluator
        self.num_simulations = int(num_simulations)
        self.c_puct = float(c_puct)
        self.rng = np.random.default_rng(seed)
        self.name = name or f"net+mcts:{self.num_simulations}"
        self._search: MCTS | None = None

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: the most visited root action in each of ``games``."""
        games = np.asarray(games, dtype=np.intp)
        if len(games) == 0:
            return np.zeros(0, dtype=np.int64)
        search = self._search
        if search is None or search.board is not batch.board or search.num_games != batch.num_games:
            search = self._search = MCTS(
                self.evaluator,
                batch.board,
                num_games=batch.num_games,
                num_simulations=self.num_simulations,
                c_puct=self.c_puct,
            )
        search.reset(games)
        result = search.search(batch, games=games, add_noise=False)
        return select_actions(result.visit_counts, 0.0, self.rng)


def evaluate(
    agent, board: Board, *, num_games: int, uct_simulations: int, seed: int
) -> dict[str, MatchResult]:
    """Matches of ``agent`` against random play and against rollout MCTS (UCT).

    Returns:
        ``{"random": MatchResult, "uct": MatchResult}``.
    """
    random_agent = RandomAgent(seed=seed)
    uct_agent = RolloutMCTSAgent(uct_simulations, seed=seed + 1)
    return {
        "random": play_match(agent, random_agent, num_games=num_games, board=board, seed=seed),
        "uct": play_match(agent, uct_agent, num_games=num_games, board=board, seed=seed),
    }


def opening_values(evaluator, board: Board) -> np.ndarray:
    """The net's value of each first move for blue, all K positions in one call.

    For each cell c: the position after blue plays c (yellow to move); the value for blue, the
    owner of the stone, is minus the net's value for yellow.

    Returns:
        [K] float32 in [-1, 1].
    """
    k = board.num_cells
    batch = BatchGame(k, board)
    batch.step(np.arange(k))
    _, values = evaluator(batch, np.arange(k))
    return -np.asarray(values, dtype=np.float32)


def opening_values_figure(evaluator, board: Board, *, title: str | None = None):
    """A heatmap of blue's win probability (v + 1) / 2 after each first move: a Figure."""
    from trapy_rl.game.render import draw_board

    win_probability = (opening_values(evaluator, board) + 1.0) / 2.0
    return draw_board(
        np.zeros(board.num_cells, dtype=np.int8),
        board,
        values=win_probability,
        center=0.5,
        vmin=0.0,
        vmax=1.0,
        colorbar_label="blue's win probability after blue's first move",
        title=title,
    )


def _make_network_agent(spec: AgentSpec, *, board: Board, seed: int | None):
    """``mcts:PATH[:SIMULATIONS][,c_puct=C]``: a checkpoint's net with search."""
    from trapy_rl.nn import Evaluator
    from trapy_rl.train.checkpoint import load_network

    usage = "'mcts:PATH' or 'mcts:PATH:SIMULATIONS' (options: c_puct=C, device=D)"
    if not spec.args or not spec.args[0]:
        raise ValueError(f"agent spec {spec.text!r}: expected {usage}")
    num_simulations, path = 200, spec.rest(0)
    if len(spec.args) > 1 and spec.args[-1].isdigit():
        num_simulations, path = int(spec.args[-1]), ":".join(spec.args[:-1])
    options = spec.typed_options({"c_puct": 1.25, "device": "cpu"})
    net, info = load_network(path, device=options.get("device", "cpu"))
    if info["side"] != board.side:
        raise ValueError(
            f"agent spec {spec.text!r}: the net was trained on side {info['side']}, "
            f"the match is on side {board.side}"
        )
    return NetworkMCTSAgent(
        Evaluator(net, device=options.get("device", "cpu")),
        num_simulations=num_simulations,
        c_puct=options.get("c_puct", 1.25),
        seed=seed,
        name=spec.text,
    )


register_agent_kind(
    "mcts",
    _make_network_agent,
    usage="mcts:PATH[:SIMULATIONS][,c_puct=C,device=D]",
    replace=True,
)
