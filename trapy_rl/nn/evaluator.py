"""Evaluators: the function search calls on the leaves, ``(batch, games) -> (logits, values)``.

Shapes: B games in the batch, n evaluated games, A actions.

An evaluator is called as ``evaluator(batch, games)`` with ``games`` [n] int indices into
``batch`` and returns ``(logits [n, A] float32, values [n] float32)``: prior logits with
illegal actions at ``-inf`` (a finished game has every action at ``-inf``) and the value of
each position in [-1, 1] for the player to move.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.batch import BatchGame

__all__ = ["UniformEvaluator"]


class UniformEvaluator:
    """Zero logits on the legal actions (a uniform prior) and a zero value everywhere."""

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``games`` [n] int of ``batch``.

        Returns:
            logits [n, A] float32 (0 legal, -inf illegal), values [n] float32 (all 0).
        """
        games = np.asarray(games, dtype=np.intp)
        legal = batch.legal_mask()[games]
        logits = np.where(legal, np.float32(0.0), np.float32(-np.inf)).astype(np.float32)
        values = np.zeros(len(games), dtype=np.float32)
        return logits, values
