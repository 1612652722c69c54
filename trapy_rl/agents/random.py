"""The random agent: uniform over the legal placements, the swap with probability 1/2.

>>> from trapy_rl.game import BatchGame
>>> batch = BatchGame(3, side=3)
>>> RandomAgent(seed=0).act(batch, np.arange(3)).shape
(3,)
"""

from __future__ import annotations

import numpy as np

from trapy_rl.agents.base import AgentSpec
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.sampling import random_legal_actions

__all__ = ["RandomAgent"]


class RandomAgent:
    """Plays a uniformly random legal placement; takes the swap with ``swap_probability``.

    Args:
        seed: seeds the agent's generator (None: fresh entropy).
        swap_probability: the chance of swapping where the swap is legal.
        name: the label in tables and records.
    """

    def __init__(
        self, seed: int | None = None, swap_probability: float = 0.5, *, name: str = "random"
    ) -> None:
        if not 0.0 <= swap_probability <= 1.0:
            raise ValueError(f"swap_probability must be in [0, 1], got {swap_probability}")
        self.name = name
        self.swap_probability = float(swap_probability)
        self.rng = np.random.default_rng(seed)

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: a random legal action for each of ``games`` [n] int."""
        games = np.asarray(games, dtype=np.intp)
        legal = batch.legal_mask()[games]
        return random_legal_actions(legal, self.rng, swap_probability=self.swap_probability)

    def __repr__(self) -> str:
        return f"RandomAgent(swap_probability={self.swap_probability})"


USAGE = "random[,swap_probability=P]"


def from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> RandomAgent:
    spec.check_args(0, 0, "'random' with no arguments (option: swap_probability=P)")
    options = spec.typed_options({"swap_probability": 0.5})
    return RandomAgent(seed, name=spec.text, **options)
