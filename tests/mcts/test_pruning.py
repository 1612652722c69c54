"""Forced playouts and policy target pruning (KataGo): the rules by hand, the batched search
against the reference, one simulation at a time against `forced_children`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mcts_helpers import HashEvaluator, random_positions

from trapy_rl.game import Board
from trapy_rl.mcts import MCTS, ReferenceSearch, SearchSettings, add_dirichlet_noise
from trapy_rl.mcts.pruning import forced_children, prune_policy_target

K = 2.0  # KataGo's k


def test_forced_children_by_hand():
    # sum N = 10: n_forced = sqrt(2 * P * 10) = sqrt(8), sqrt(5), sqrt(1.6), sqrt(0.4)
    # = 2.83, 2.24, 1.26, 0.63. Child 0 has 6 (not forced); child 1 has 2 < 2.24 (forced);
    # child 2 has 2 > 1.26 (not); child 3 has none (never forced); child 4 is illegal.
    priors = np.array([[0.4, 0.25, 0.08, 0.27, -np.inf]], np.float32)
    counts = np.array([[6, 2, 2, 0, 0]], np.float32)
    np.testing.assert_array_equal(
        forced_children(priors, counts, forced_playouts=K), [[False, True, False, False, False]]
    )
    # With 3 visits child 1 is past sqrt(2 * 0.25 * 11) = 2.35; child 2 still is not forced.
    counts = np.array([[6, 3, 2, 0, 0]], np.float32)
    assert not forced_children(priors, counts, forced_playouts=K).any()


def test_pruned_target_by_hand():
    """c_puct 1, N = 49 root visits (sqrt 7), sum N(c) = 48, k = 2.

    c* = child 0: PUCT = 0.2 + 0.4 * 7 / 25 = 0.312.
    child 1 (P 0.3, Q 0.1, 12 visits): at most sqrt(2 * 0.3 * 48) = 5.37 -> 5 taken, while
        0.1 + 2.1 / (1 + n) < 0.312: n = 11, 10, 9 hold (0.275, 0.291, 0.310), 8 does not
        (0.333): 9 remain.
    child 2 (P 0.15, Q -0.5, 8): at most sqrt(14.4) = 3.79 -> 3, and -0.5 + 1.05 / (1 + n)
        stays far below: 5 remain.
    child 3 (P 0.1, Q -0.1, 3): at most sqrt(9.6) = 3.10 -> 3; -0.1 + 0.7 / (1 + n) is
        0.133 at 2, 0.25 at 1, 0.6 at 0: 1 remains, dropped.
    child 4 (P 0.05, Q 0.3, 1): 0.3 + 0.35 / 1 is above 0.312 already: keeps its 1, dropped.
    child 5: illegal. Target: (24, 9, 5, 0, 0, 0) / 38.
    """
    priors = np.array([[0.4, 0.3, 0.15, 0.1, 0.05, -np.inf]], np.float32)
    counts = np.array([[24, 12, 8, 3, 1, 0]], np.float32)
    q = np.array([[0.2, 0.1, -0.5, -0.1, 0.3, 0.0]], np.float32)
    target = prune_policy_target(priors, counts, q, np.array([49]), c_puct=1.0, forced_playouts=K)
    np.testing.assert_allclose(target[0], np.array([24, 9, 5, 0, 0, 0]) / 38, rtol=1e-6)
    assert target.dtype == np.float32
    # Without forced playouts to take back (k tiny) only the single visits are dropped.
    target = prune_policy_target(
        priors, counts, q, np.array([49]), c_puct=1.0, forced_playouts=1e-9
    )
    np.testing.assert_allclose(target[0], np.array([24, 12, 8, 3, 0, 0]) / 47, rtol=1e-6)


def test_the_most_visited_child_keeps_its_visits_and_ties_go_to_the_lowest_action():
    priors = np.array([[0.2, 0.6, 0.2]], np.float32)
    counts = np.array([[5, 5, 1]], np.float32)
    q = np.array([[0.0, 0.0, -0.9]], np.float32)
    # c* = child 0 (the lowest of the two with 5): PUCT 0 + 0.2 * 3 / 6 = 0.1. Child 1's PUCT
    # at 5 visits is 0.6 * 3 / 6 = 0.3, above: nothing taken. Child 2's single visit: dropped.
    target = prune_policy_target(priors, counts, q, np.array([9]), c_puct=1.0, forced_playouts=K)
    np.testing.assert_allclose(target[0], [0.5, 0.5, 0.0])


def pruning_oracle(priors, counts, q, node_visits, c_puct, k):
    """The pruning rule child by child, for one root (a third writing of it)."""
    best = int(np.argmax(counts))
    sqrt_n = math.sqrt(node_visits)

    def puct(a, n):
        return float(q[a]) + c_puct * float(priors[a]) * sqrt_n / (1 + n)

    pruned = counts.astype(np.float64).copy()
    for a in np.flatnonzero(counts):
        if a == best:
            continue
        n = int(counts[a])
        cap = math.floor(math.sqrt(k * float(priors[a]) * counts.sum()))
        while n > 0 and int(counts[a]) - n < cap and puct(a, n - 1) < puct(best, counts[best]):
            n -= 1
        pruned[a] = n if n > 1 else 0
    return pruned / pruned.sum()


def test_batched_pruning_equals_the_rule_child_by_child_on_random_roots():
    rng = np.random.default_rng(0)
    m, a = 200, 12
    priors = rng.dirichlet(np.full(a, 0.5), size=m).astype(np.float32)
    counts = rng.integers(0, 30, size=(m, a)).astype(np.float32) * (rng.random((m, a)) < 0.7)
    counts[:, 0] += 1  # every root visited
    q = rng.uniform(-1, 1, size=(m, a)).astype(np.float32) * (counts > 0)
    node_visits = counts.sum(axis=1).astype(np.int64) + 1
    for c_puct in (0.5, 1.25, 4.0):
        target = prune_policy_target(
            priors, counts, q, node_visits, c_puct=c_puct, forced_playouts=K
        )
        for row in range(m):
            expected = pruning_oracle(priors[row], counts[row], q[row], node_visits[row], c_puct, K)
            np.testing.assert_allclose(target[row], expected, rtol=1e-6, atol=1e-7)
    assert (target > 0).sum() < (counts > 0).sum()  # the rule does prune


@pytest.mark.parametrize(
    ("leaves", "compiled", "virtual"),
    [(1, False, "visits"), (1, True, "visits"), (4, True, "visits"), (4, True, "loss")],
)
@pytest.mark.parametrize("side", [3, 5])
def test_forced_playouts_equal_the_reference_search(side, leaves, compiled, virtual):
    board = Board(side)
    plies = [0, 1, 3, 6]
    batch = random_positions(board, plies, seed=side)
    evaluator = HashEvaluator(board, seed=side)
    sims = 80
    settings = SearchSettings(num_simulations=sims, leaves=leaves, virtual=virtual)
    search = MCTS(evaluator, board, num_games=len(plies), settings=settings, compiled=compiled)
    result = search.search(batch, forced_playouts=K)
    plain = MCTS(evaluator, board, num_games=len(plies), settings=settings).search(batch)
    assert not np.array_equal(result.visit_counts, plain.visit_counts)  # the rule does force
    for game in range(len(plies)):
        reference = ReferenceSearch(evaluator, settings=settings)
        reference.search(batch.to_state(game), sims, forced_playouts=K)
        np.testing.assert_array_equal(
            result.visit_counts[game], reference.visit_counts(board.num_actions)
        )
        np.testing.assert_array_equal(
            result.pruned_policy[game],
            reference.pruned_policy(board.num_actions, K).astype(np.float32),
        )


@pytest.mark.parametrize("compiled", [False, True])
def test_reuse_over_a_game_with_forced_playouts_equals_the_reference(compiled):
    board = Board(4)
    batch = random_positions(board, [0, 2], seed=7)
    evaluator = HashEvaluator(board, seed=7)
    settings = SearchSettings(num_simulations=30, leaves=1)
    search = MCTS(evaluator, board, num_games=2, settings=settings, compiled=compiled)
    references = [ReferenceSearch(evaluator, settings=settings) for _ in range(2)]
    states = [batch.to_state(game) for game in range(2)]
    for _ in range(5):
        live = np.flatnonzero(~batch.is_over)
        if live.size == 0:
            break
        result = search.search(batch, games=live, forced_playouts=K)
        actions = np.full(2, -1)
        for row, game in enumerate(live):
            references[game].search(states[game], 30, forced_playouts=K)
            counts = references[game].visit_counts(board.num_actions)
            np.testing.assert_array_equal(result.visit_counts[row], counts)
            np.testing.assert_array_equal(
                result.pruned_policy[row],
                references[game].pruned_policy(board.num_actions, K).astype(np.float32),
            )
            actions[game] = counts.argmax()
        search.advance(actions)
        for game in live:
            references[game].advance(int(actions[game]))
            states[game].play(int(actions[game]))
        batch.step(np.maximum(actions, 0))


@pytest.mark.parametrize("compiled", [False, True])
def test_each_simulation_takes_the_lowest_forced_child_first(compiled):
    """One simulation a call, on a kept tree: whenever `forced_children` names a root child
    before the simulation, the simulation goes through the lowest of them."""
    board = Board(5)
    batch = random_positions(board, [2], seed=3)
    evaluator = HashEvaluator(board, seed=3)
    search = MCTS(evaluator, board, num_games=1, settings=SearchSettings(leaves=1), seed=0,
                  compiled=compiled)  # fmt: skip
    search.search(batch, num_simulations=1)
    priors = search.tree.priors[:1, 0].copy()
    forced_seen = 0
    for _ in range(150):
        before = search.tree.edge_visits[:1, 0].copy()
        forced = forced_children(priors, before, forced_playouts=K)[0]
        search.search(batch, num_simulations=1, forced_playouts=K)
        taken = int(np.flatnonzero(search.tree.edge_visits[0, 0] != before[0])[0])
        if forced.any():
            forced_seen += 1
            assert taken == np.flatnonzero(forced)[0]
    assert forced_seen > 10


def test_forced_playouts_are_checked():
    board = Board(3)
    batch = random_positions(board, [0], seed=0)
    evaluator = HashEvaluator(board)
    search = MCTS(evaluator, board, num_games=1)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="forced_playouts must be"):
            search.search(batch, forced_playouts=bad)
    gumbel = MCTS(evaluator, board, num_games=1, settings=SearchSettings(search="gumbel"))
    with pytest.raises(ValueError, match="forced_playouts is for the puct search"):
        gumbel.search(batch, forced_playouts=K)
    assert search.search(batch).pruned_policy is None


def test_the_pruning_reads_the_priors_the_search_used_noise_included():
    board = Board(5)
    batch = random_positions(board, [0, 3, 5], seed=2)
    evaluator = HashEvaluator(board, seed=2)
    settings = SearchSettings(num_simulations=64, dirichlet_fraction=0.5)
    search = MCTS(evaluator, board, num_games=3, settings=settings, seed=11)
    result = search.search(batch, add_noise=True, forced_playouts=K)
    # The search's noise, drawn again from a generator seeded alike.
    legal = result.priors > 0
    noisy = add_dirichlet_noise(
        result.priors,
        legal,
        np.random.default_rng(11),
        dirichlet_alpha=settings.dirichlet_alpha,
        dirichlet_fraction=settings.dirichlet_fraction,
    )
    pruned = [
        prune_policy_target(
            priors,
            result.visit_counts,
            result.q_values,
            search.tree.node_visits[:, 0],
            c_puct=settings.c_puct,
            forced_playouts=K,
        )
        for priors in (noisy, result.priors)
    ]
    np.testing.assert_array_equal(result.pruned_policy, pruned[0])
    assert not np.array_equal(result.pruned_policy, pruned[1])
