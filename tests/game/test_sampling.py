"""Random legal moves: only legal, uniform over the legal cells, the swap at its rate."""

import numpy as np
from scipy import stats

from trapy_rl.game.sampling import random_legal_actions


def test_only_legal_and_uniform():
    rng = np.random.default_rng(0)
    num_rows, num_actions = 4000, 30
    mask = np.zeros((num_rows, num_actions), dtype=bool)
    # Rows from nearly empty to nearly full exercise both the rejection and the fallback paths.
    for i in range(num_rows):
        legal = rng.choice(num_actions - 1, size=1 + i % (num_actions - 1), replace=False)
        mask[i, legal] = True
    mask[-1] = False  # a row with no legal action
    counts = np.zeros((num_actions - 1, num_actions - 1))
    for _ in range(30):
        actions = random_legal_actions(mask, rng)
        assert mask[np.arange(num_rows - 1), actions[:-1]].all() and actions[-1] == 0
        # Chi-square per number of legal cells: the rank of the chosen cell among the legal ones.
        for i in range(num_rows - 1):
            legal = np.flatnonzero(mask[i])
            counts[len(legal) - 1, np.searchsorted(legal, actions[i])] += 1
    for size in (1, 5, 15, 29):
        observed = counts[size - 1, :size]
        if size > 1:
            assert stats.chisquare(observed).pvalue > 1e-4


def test_swap_rate():
    rng = np.random.default_rng(1)
    mask = np.ones((20000, 10), dtype=bool)
    actions = random_legal_actions(mask, rng, swap_probability=0.3)
    assert abs((actions == 9).mean() - 0.3) < 0.015
    mask[:, -1] = False
    assert (random_legal_actions(mask, rng) != 9).all()
    assert (random_legal_actions(np.ones((50, 10), bool), rng, swap_probability=0.0) < 9).all()
