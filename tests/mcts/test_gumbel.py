"""Gumbel root search: the halving schedule, closed-form bandits, the improved policy, and the
batched search against the slow reference."""

from __future__ import annotations

import numpy as np
import pytest
from mcts_helpers import BanditEvaluator, HashEvaluator, UniformTestEvaluator, random_positions

from trapy_rl.game import BatchGame, Board
from trapy_rl.mcts import MCTS, ReferenceSearch, SearchSettings
from trapy_rl.mcts.gumbel import (
    completed_q,
    considered_visit_sequence,
    improved_policy,
    sigma,
    top_k_mask,
)


def gumbel_settings(num_simulations: int, **changes) -> SearchSettings:
    return SearchSettings(num_simulations=num_simulations, search="gumbel", **changes)


@pytest.mark.parametrize(
    ("k", "n", "visits"),
    [
        (4, 16, [6, 6, 2, 2]),  # 2 rounds: 4 actions x 2 visits, then the best 2 x 4 more
        (4, 8, [3, 3, 1, 1]),  # 4 x 1, then 2 x 2
        (2, 5, [3, 2]),  # one round repeated: alternate
        (1, 4, [4]),  # one action takes every simulation
        (8, 24, [7, 7, 3, 3, 1, 1, 1, 1]),  # 8 x 1, 4 x 2, 2 x 4
    ],
)
def test_sequential_halving_visits(k, n, visits):
    """The schedule, followed with the best actions first, gives the halving visit counts."""
    counts = [0] * k
    for required in considered_visit_sequence(k, n):
        action = next(a for a in range(k) if counts[a] == required)  # the best eligible
        counts[action] += 1
    assert counts == visits and sum(counts) == n


def test_the_search_follows_the_schedule_on_a_bandit():
    """Root Q-values known in closed form: the search keeps the better half each round."""
    board = Board(2)  # five cells
    w = np.array([0.1, -0.2, 0.9, 0.3, -0.5, 0.0], dtype=np.float32)
    search = MCTS(
        BanditEvaluator(0, w), board, num_games=1, settings=gumbel_settings(16, max_considered=4)
    )
    result = search.search(BatchGame(1, board))
    # No noise and a uniform prior: the four lowest actions are sampled (ties to the lower);
    # round 1 gives each 2 visits, round 2 the two best by Q (c1, a2) 4 more.
    np.testing.assert_array_equal(result.visit_counts[0], [2, 2, 6, 6, 0, 0])
    assert result.selected_actions[0] == 2  # c1: w = 0.9
    policy = result.improved_policy[0]
    assert policy[2] > policy[3] > policy[0] > policy[1] and policy[5] == 0.0
    assert policy.sum() == pytest.approx(1.0)


def test_the_best_arm_is_chosen_without_noise_and_mostly_with_it():
    """Without noise the search plays the best arm; with Gumbel noise its move is a sample
    that favours the best arm: it is the most played, and bad arms (w < 0) never are."""
    board = Board(3)
    rng = np.random.default_rng(5)
    w = rng.uniform(-0.8, 0.8, board.num_actions).astype(np.float32)
    w[7], w[9] = 0.95, 0.8
    settings = gumbel_settings(200, max_considered=20)  # all 12 legal actions considered
    search = MCTS(BanditEvaluator(0, w), board, num_games=64, settings=settings, seed=3)
    plain = search.search(BatchGame(64, board))
    assert (plain.selected_actions == 7).all()
    noisy = search.search(BatchGame(64, board), add_noise=True).selected_actions
    assert np.bincount(noisy).argmax() == 7 and (noisy == 7).mean() > 0.5
    assert (w[noisy] > 0).all()


def test_the_improved_policy_rises_with_q():
    """Equal priors, all actions visited equally: the target orders actions as Q does, and a
    higher Q never lowers an action's probability (monotonicity in Q)."""
    legal = np.ones((1, 5), dtype=bool)
    priors = np.full((1, 5), 0.2)
    visits = np.full((1, 5), 3.0)
    q = np.array([[0.1, -0.3, 0.5, 0.2, 0.0]])
    completed = completed_q(q, visits, priors, np.zeros(1), legal)
    policy = improved_policy(
        np.log(priors), sigma(completed, visits, c_visit=50, c_scale=0.1), legal
    )
    assert list(np.argsort(-policy[0])) == list(np.argsort(-q[0]))
    for action in range(5):
        raised = q.copy()
        raised[0, action] += 0.1
        again = completed_q(raised, visits, priors, np.zeros(1), legal)
        bonus = sigma(again, visits, c_visit=50, c_scale=0.1)
        assert improved_policy(np.log(priors), bonus, legal)[0, action] >= policy[0, action]


def test_completed_q_fills_unvisited_actions_with_the_mixed_value():
    legal = np.array([[True, True, True, False]])
    priors = np.array([[0.5, 0.25, 0.25, 0.0]])
    visits = np.array([[2.0, 0.0, 2.0, 0.0]])
    q = np.array([[0.6, 0.0, -0.2, 0.0]])
    # mixed = (raw + 4 * (0.5 * 0.6 + 0.25 * -0.2) / 0.75) / 5 = (0.1 + 4/3) / 5 = 0.28667
    completed = completed_q(q, visits, priors, np.array([0.1]), legal)
    mixed = (0.1 + 4 * (0.5 * 0.6 - 0.25 * 0.2) / 0.75) / 5
    np.testing.assert_allclose(completed[0], [1.0, (mixed + 0.2) / 0.8, 0.0, 0.0])


def test_top_k_keeps_the_highest_legal_scores():
    scores = np.array([[3.0, 1.0, 2.0, 5.0], [0.0, 0.0, 0.0, 0.0]])
    legal = np.array([[True, True, True, False], [True, True, True, True]])
    np.testing.assert_array_equal(
        top_k_mask(scores, legal, 2), [[True, False, True, False], [True, True, False, False]]
    )


@pytest.mark.parametrize(
    ("leaves", "compiled", "virtual"),
    [(1, False, "visits"), (1, True, "visits"), (3, True, "visits"), (8, True, "visits"),
     (8, True, "loss")],
)  # fmt: skip
@pytest.mark.parametrize("side", [3, 4])
def test_batched_gumbel_search_equals_the_reference(side, leaves, compiled, virtual):
    board = Board(side)
    batch = random_positions(board, [0, 1, 3, 5], seed=side)
    evaluator = HashEvaluator(board, seed=side)
    settings = gumbel_settings(24, max_considered=6, leaves=leaves, virtual=virtual)
    search = MCTS(evaluator, board, num_games=4, settings=settings, seed=11, compiled=compiled)
    noise = np.random.default_rng(11).gumbel(size=(4, board.num_actions))
    search.rng = np.random.default_rng(11)  # the search draws this same noise
    result = search.search(batch, add_noise=True)
    for game in range(4):
        reference = ReferenceSearch(evaluator, settings=settings)
        reference.search(batch.to_state(game), 24, gumbel_noise=noise[game])
        np.testing.assert_array_equal(
            result.visit_counts[game], reference.visit_counts(board.num_actions)
        )
        assert result.selected_actions[game] == reference.selected_action()
        np.testing.assert_allclose(
            result.improved_policy[game], reference.improved_policy(board.num_actions), atol=1e-6
        )


def test_masked_actions_are_never_considered():
    board = Board(4)
    batch = random_positions(board, [1, 6, 9], seed=2)
    search = MCTS(UniformTestEvaluator(), board, num_games=3, settings=gumbel_settings(40))
    result = search.search(batch, add_noise=True)
    legal = batch.legal_mask()
    assert (result.visit_counts[~legal] == 0).all() and (result.improved_policy[~legal] == 0).all()
    assert legal[np.arange(3), result.selected_actions].all()


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="search must be one of"):
        SearchSettings(search="alphabeta")
    with pytest.raises(ValueError, match="max_considered"):
        SearchSettings(max_considered=0)
