"""The agent that plays by search: any evaluator guiding the project's batched PUCT search.

`RolloutMCTSAgent` (random-playout leaves) and `NetworkMCTSAgent` (a trained net's leaves) are
this agent with their evaluators; there is one search agent, as there is one search.

Shapes: B games in the batch, n games to move, A actions.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.mcts.policies import select_actions
from trapy_rl.mcts.search import MCTS, Evaluator

__all__ = ["SearchAgent"]


class SearchAgent:
    """Searches each position afresh and plays the most visited root action.

    No noise; ties between equally visited actions are broken at random. The tree is built anew
    for every move (no state between moves), so ``reset`` is not needed.

    Args:
        evaluator: ``(batch, games) -> (logits [n, A] float32, values [n] float32)``, illegal
            actions at ``-inf``.
        num_simulations: simulations per move.
        c_puct: the exploration constant of PUCT.
        seed: seeds tie-breaking (None: fresh entropy).
        name: the label in tables and records.
        search_options: further keyword arguments of `trapy_rl.mcts.search.MCTS`
            (``fpu_reduction``, ``capacity``).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        num_simulations: int,
        c_puct: float = 1.25,
        seed: int | np.random.SeedSequence | None = None,
        name: str,
        **search_options,
    ) -> None:
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {type(evaluator).__name__}")
        if isinstance(num_simulations, bool) or not isinstance(num_simulations, (int, np.integer)):
            raise ValueError(f"num_simulations must be an integer >= 1, got {num_simulations!r}")
        if num_simulations < 1:
            raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
        if not c_puct > 0:
            raise ValueError(f"c_puct must be > 0, got {c_puct}")
        self.evaluator = evaluator
        self.num_simulations = int(num_simulations)
        self.c_puct = float(c_puct)
        self.rng = np.random.default_rng(seed)
        self.name = name
        self.search_options = search_options
        self._searches: dict[tuple[Board, int], MCTS] = {}

    def _search(self, board: Board, num_games: int) -> MCTS:
        key = (board, num_games)
        search = self._searches.get(key)
        if search is None:
            search = MCTS(
                self.evaluator,
                board,
                num_games=num_games,
                num_simulations=self.num_simulations,
                c_puct=self.c_puct,
                **self.search_options,
            )
            self._searches = {key: search}  # keep one: the trees are large
        return search

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: the most visited root action of a fresh search in each of ``games``."""
        games = np.asarray(games, dtype=np.intp)
        if len(games) == 0:
            return np.zeros(0, dtype=np.int64)
        search = self._search(batch.board, batch.num_games)
        search.reset(games)
        result = search.search(batch, games=games, add_noise=False)
        return select_actions(result.visit_counts, 0.0, self.rng)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_simulations={self.num_simulations}, "
            f"c_puct={self.c_puct}, name={self.name!r})"
        )
