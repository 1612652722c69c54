"""Uniformly random legal moves for many games at once (the random baseline's policy).

Random play in this toolkit means: uniform over the legal placements, and the swap, when legal,
taken with probability ``swap_probability`` (1/2 by default, as in RULES.md's random-play fact).
"""

from __future__ import annotations

import numpy as np

__all__ = ["random_legal_actions"]


def random_legal_actions(
    legal_mask: np.ndarray, rng: np.random.Generator, *, swap_probability: float = 0.5
) -> np.ndarray:
    """One random legal action per row.

    Args:
        legal_mask: [B, A] bool, the last column the swap. Rows with no legal action get 0.
        rng: the random generator to draw from.
        swap_probability: chance of taking the swap where it is legal.

    Returns:
        [B] int64 action indices.
    """
    cells = legal_mask[:, :-1]
    # argmax of uniform noise over the legal cells is a uniform choice among them.
    noise = rng.random(cells.shape, dtype=np.float32)
    noise[~cells] = -1.0
    actions = noise.argmax(axis=1)
    swap = legal_mask[:, -1]
    if swap.any():
        take = swap & (rng.random(len(swap)) < swap_probability)
        actions[take] = legal_mask.shape[1] - 1
    return actions
