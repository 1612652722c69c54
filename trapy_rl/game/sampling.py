"""Uniformly random legal moves for many games at once (the random baseline's policy).

Random play in this toolkit means: uniform over the legal placements, and the swap, when legal,
taken with probability ``swap_probability`` (1/2 by default, as docs/rules.md
says of random games).
"""

from __future__ import annotations

import numpy as np

__all__ = ["random_legal_actions"]

# Rejection rounds before the exact fallback; each round draws one cell per unfinished row.
_REJECTION_ROUNDS = 6


def random_legal_actions(
    legal_mask: np.ndarray, rng: np.random.Generator, *, swap_probability: float = 0.5
) -> np.ndarray:
    """One uniformly random legal action per row.

    Rejection sampling: draw a cell per row and redraw the rows whose cell is not legal, a few
    rounds, then resolve the rows left (nearly full boards) with random noise over their legal
    cells. Both steps are exactly uniform; the draws touch O(B) memory instead of O(B K).

    Args:
        legal_mask: [B, A] bool, the last column the swap. Rows with no legal action get 0.
        rng: the random generator to draw from.
        swap_probability: chance of taking the swap where it is legal.

    Returns:
        [B] int64 action indices.
    """
    cells = legal_mask[:, :-1]
    num_rows, num_cells = cells.shape
    actions = rng.integers(0, num_cells, num_rows)
    pending = np.flatnonzero(~cells[np.arange(num_rows), actions])
    for _ in range(_REJECTION_ROUNDS):
        if not pending.size:
            break
        draws = rng.integers(0, num_cells, len(pending))
        hit = cells[pending, draws]
        actions[pending[hit]] = draws[hit]
        pending = pending[~hit]
    if pending.size:
        rest = cells[pending]
        # Legal cells get noise in [1, 2), the others [0, 1): the argmax is uniform over the
        # legal cells (float64 noise: ties are practically impossible).
        noise = rng.random(rest.shape) + rest
        actions[pending] = np.where(rest.any(axis=1), noise.argmax(axis=1), 0)
    swap = legal_mask[:, -1]
    if swap.any():
        take = swap & (rng.random(num_rows) < swap_probability)
        actions[take] = legal_mask.shape[1] - 1
    return actions
