"""Priors, PUCT choice, root noise and the temperature that turns visit counts into moves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trapy_rl.mcts import add_dirichlet_noise, select_actions, select_puct, softmax_priors
from trapy_rl.mcts.policies import mask_logits, normalize_logits, select_opening_actions


def test_softmax_priors_masks_and_normalises():
    logits = np.array([[1.0, 2.0, 50.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    legal = np.array([[True, True, False, True], [False, True, True, False]])
    priors = softmax_priors(logits, legal)
    e = np.exp([1.0 - 2.0, 0.0, 0.0, 0.0 - 2.0])
    np.testing.assert_allclose(priors[0], np.array([e[0], e[1], 0, e[3]]) / (e[0] + 1 + e[3]))
    np.testing.assert_allclose(priors[1], [0, 0.5, 0.5, 0])
    marked = softmax_priors(logits, legal, illegal_value=-np.inf)
    assert np.isneginf(marked[~legal]).all()
    with pytest.raises(ValueError, match="finite maximum"):
        softmax_priors(np.full((1, 4), -np.inf, np.float32), legal[:1])
    with pytest.raises(ValueError, match="NaN"):
        softmax_priors(np.array([[0.0, np.nan, 0, 0]], np.float32), legal[:1])
    with pytest.raises(ValueError, match="shape"):
        softmax_priors(logits, legal[:, :3])


def test_a_legal_action_with_minus_inf_logit_stays_legal_with_prior_zero():
    logits = np.array([[0.0, -np.inf, 1.0, 5.0]], dtype=np.float32)
    legal = np.array([[True, True, True, False]])
    masked = mask_logits(logits, legal)
    assert np.isfinite(masked[0, :3]).all() and masked[0, 3] == -np.inf
    priors = normalize_logits(masked, illegal_value=-np.inf)
    assert priors[0, 1] == 0.0 and priors[0, 3] == -np.inf
    np.testing.assert_array_equal(priors[0, :3], softmax_priors(logits, legal)[0, :3])


def test_select_puct_follows_the_formula():
    rng = np.random.default_rng(0)
    m, a = 50, 7
    priors = rng.dirichlet(np.ones(a), size=m).astype(np.float32)
    priors[rng.random((m, a)) < 0.2] = -np.inf
    priors[:, 0] = 0.1  # at least one legal action
    visits = rng.integers(0, 4, (m, a)).astype(np.float32)
    visits[np.isneginf(priors)] = 0
    q = np.where(visits > 0, rng.uniform(-1, 1, (m, a)), 0).astype(np.float32)
    node_visits = visits.sum(axis=1).astype(np.int32) + 1
    node_sums = rng.uniform(-1, 1, m) * node_visits
    chosen = select_puct(priors, visits, q, node_visits, node_sums, c_puct=1.5, fpu_reduction=0.1)
    for row in range(m):
        fpu = node_sums[row] / node_visits[row] - 0.1
        scores = [
            (q[row, b] if visits[row, b] else fpu)
            + priors[row, b] * 1.5 * math.sqrt(node_visits[row]) / (1 + visits[row, b])
            if priors[row, b] > -np.inf
            else -np.inf
            for b in range(a)
        ]
        best = max(scores)
        assert scores[chosen[row]] == pytest.approx(best, abs=1e-5)
        assert np.isfinite(scores[chosen[row]])


def test_temperature_zero_plays_the_most_visited_with_random_ties():
    rng = np.random.default_rng(1)
    counts = np.array([[0, 5, 2, 5], [9, 0, 0, 1]])
    picks = np.array([select_actions(counts, 0.0, rng) for _ in range(400)])
    assert set(picks[:, 0]) == {1, 3}
    assert 120 < (picks[:, 0] == 1).sum() < 280
    assert (picks[:, 1] == 0).all()


def test_positive_temperature_samples_counts_to_the_power():
    rng = np.random.default_rng(2)
    counts = np.array([[1, 0, 3, 6]] * 20000)
    picks = select_actions(counts, 1.0, rng)
    freq = np.bincount(picks, minlength=4) / len(picks)
    np.testing.assert_allclose(freq, [0.1, 0, 0.3, 0.6], atol=0.015)
    picks = select_actions(counts, 0.5, rng)  # counts squared: 1, 9, 36 of 46
    freq = np.bincount(picks, minlength=4) / len(picks)
    np.testing.assert_allclose(freq, np.array([1, 0, 9, 36]) / 46, atol=0.015)
    assert (select_actions(counts[:50], 0.01, rng) == 3).all()


def test_opening_moves_are_drawn_and_later_moves_take_the_most_visited():
    """Rows whose game has played fewer than ``temperature_moves`` moves draw at temperature
    1; the others play the most visited action, with the stream of `select_actions`."""
    counts = np.array([[1, 0, 3, 6]] * 20000)
    move_counts = np.arange(20000) % 4  # 0, 1, 2, 3, 0, ...
    picks = select_opening_actions(counts, move_counts, 2, np.random.default_rng(4))
    early = move_counts < 2
    assert (picks[~early] == 3).all()
    freq = np.bincount(picks[early], minlength=4) / early.sum()
    np.testing.assert_allclose(freq, [0.1, 0, 0.3, 0.6], atol=0.02)
    assert (select_opening_actions(counts, move_counts, 0, np.random.default_rng(4)) == 3).all()
    # All rows early: the same draws as select_actions at temperature 1, seed for seed.
    drawn = select_opening_actions(counts[:50], np.zeros(50), 12, np.random.default_rng(5))
    expected = select_actions(counts[:50], 1.0, np.random.default_rng(5))
    np.testing.assert_array_equal(drawn, expected)


def test_select_actions_rejects_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="no visits"):
        select_actions(np.array([[0, 0], [1, 0]]), 1.0, rng)
    with pytest.raises(ValueError, match="temperature"):
        select_actions(np.array([[1, 0]]), -1.0, rng)
    with pytest.raises(ValueError, match=r"\[m, A\]"):
        select_actions(np.array([1, 0]), 1.0, rng)


def test_dirichlet_noise_stays_on_the_legal_actions():
    rng = np.random.default_rng(3)
    legal = rng.random((2000, 9)) < 0.6
    legal[:, 4] = True
    priors = np.where(legal, 1.0, 0.0)
    priors = (priors / priors.sum(axis=1, keepdims=True)).astype(np.float32)
    kwargs = {"dirichlet_alpha": 0.3}
    mixed = add_dirichlet_noise(priors, legal, rng, dirichlet_fraction=0.25, **kwargs)
    assert (mixed[~legal] == 0).all()
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0, rtol=1e-5)
    assert (mixed[legal] >= 0.75 * priors[legal] - 1e-7).all()
    same = add_dirichlet_noise(priors, legal, rng, dirichlet_fraction=0.0, **kwargs)
    np.testing.assert_allclose(same, priors)
    noise = add_dirichlet_noise(priors, legal, rng, dirichlet_fraction=1.0, **kwargs)
    # Symmetric Dirichlet: on average each legal action gets 1 / (number of legal actions).
    np.testing.assert_allclose(noise.mean(axis=0)[4], priors.mean(axis=0)[4], rtol=0.1)
    with pytest.raises(ValueError, match="dirichlet_alpha"):
        add_dirichlet_noise(priors, legal, rng, dirichlet_alpha=0.0, dirichlet_fraction=0.25)
