"""The compiled search steps against the numpy step they replace; virtual visits and losses.

With one leaf per game a compiled step is the numpy step: the trees are equal field for field.
(The leaf-parallel search is held to the slow reference in test_mcts_search.py, test_gumbel.py
and test_mcts_reuse.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
from mcts_helpers import HashEvaluator, UniformTestEvaluator, random_positions

from trapy_rl.game import Board
from trapy_rl.mcts import MCTS, SearchSettings
from trapy_rl.mcts.policies import normalize_logits

TREE_FIELDS = (
    "num_nodes",
    "parents",
    "actions_from_parent",
    "terminal",
    "node_visits",
    "node_value_sums",
    "children_index",
    "edge_visits",
    "edge_q",
    "virtual_visits",
)


def assert_same_trees(compiled: MCTS, reference: MCTS) -> None:
    """Equal trees over the used slots; priors compared once the numpy tree's pending logits
    are normalized (the compiled step normalizes at expansion, the numpy one when selected)."""
    a, b = compiled.tree, reference.tree
    np.testing.assert_array_equal(a.num_nodes, b.num_nodes)
    for game in range(a.num_games):
        used = int(a.num_nodes[game])
        for name in TREE_FIELDS[1:]:
            np.testing.assert_array_equal(
                getattr(a, name)[game, :used], getattr(b, name)[game, :used], name
            )
        visited = a.edge_visits[game, :used] > 0
        np.testing.assert_array_equal(
            a.edge_value_sums[game, :used][visited], b.edge_value_sums[game, :used][visited]
        )
        priors = b.priors[game, :used].copy()
        pending = b.pending[game, :used]
        if pending.any():
            priors[pending] = normalize_logits(priors[pending], illegal_value=-np.inf)
        np.testing.assert_array_equal(a.priors[game, :used], priors)


@pytest.mark.parametrize(
    ("search", "forced_playouts"), [("puct", 0.0), ("gumbel", 0.0), ("puct", 2.0)]
)
@pytest.mark.parametrize("side", [2, 4, 10])
def test_one_leaf_per_game_builds_the_numpy_trees(side, search, forced_playouts):
    board = Board(side)
    plies = [0, 1, 2, 3, 5, 8] if side > 2 else [0, 1, 1, 2, 2, 3]
    batch = random_positions(board, plies, seed=side)
    evaluator = HashEvaluator(board, seed=side)
    settings = SearchSettings(num_simulations=50, search=search, leaves=1, fpu_reduction=0.1)
    searches = [
        MCTS(evaluator, board, num_games=len(plies), settings=settings, seed=3, compiled=compiled)
        for compiled in (True, False)
    ]
    rng = np.random.default_rng(side)
    for _ in range(4):  # searches with noise, moves and subtree reuse, some games ending
        live = np.flatnonzero(~batch.is_over)
        if live.size == 0:
            break
        results = [
            s.search(batch, games=live, add_noise=True, forced_playouts=forced_playouts)
            for s in searches
        ]
        np.testing.assert_array_equal(results[0].visit_counts, results[1].visit_counts)
        np.testing.assert_array_equal(results[0].q_values, results[1].q_values)
        if forced_playouts:  # the pruned targets, from the noisy priors of either search
            np.testing.assert_array_equal(results[0].pruned_policy, results[1].pruned_policy)
        assert_same_trees(*searches)
        actions = np.full(batch.num_games, -1)
        legal = batch.legal_mask()[live]
        actions[live] = [rng.choice(np.flatnonzero(row)) for row in legal]
        for s in searches:
            s.advance(actions)
        batch.step(np.maximum(actions, 0))


@pytest.mark.parametrize("virtual", ["visits", "loss"])
def test_virtual_visits_and_losses_spread_the_first_descents(virtual):
    """A fresh root with a uniform prior: L descents in one step reach L distinct children."""
    board = Board(5)
    batch = random_positions(board, [3], seed=1)
    evaluator = UniformTestEvaluator()
    settings = SearchSettings(num_simulations=12, leaves=12, virtual=virtual)
    search = MCTS(evaluator, board, num_games=1, settings=settings)
    counts = search.search(batch).visit_counts[0]
    assert evaluator.call_sizes == [1, 12]
    assert counts.sum() == 12 and counts.max() == 1


def test_a_failed_evaluation_leaves_clean_empty_trees():
    board = Board(4)
    batch = random_positions(board, [2, 5], seed=4)
    good = HashEvaluator(board)
    calls = []

    def failing(batch_, games):
        calls.append(len(games))
        if len(calls) == 3:
            raise RuntimeError("the net fell over")
        return good(batch_, games)

    settings = SearchSettings(num_simulations=30, leaves=4)
    search = MCTS(failing, board, num_games=2, settings=settings)
    with pytest.raises(RuntimeError, match="fell over"):
        search.search(batch)
    assert (search.tree.num_nodes == 0).all() and (search.tree.virtual_visits == 0).all()
    result = search.search(batch)  # searches again from scratch, as a fresh search would
    fresh = MCTS(good, board, num_games=2, settings=settings).search(batch)
    np.testing.assert_array_equal(result.visit_counts, fresh.visit_counts)


def test_leaves_and_virtual_are_checked():
    board = Board(3)
    with pytest.raises(ValueError, match="leaves must be >= 0"):
        SearchSettings(leaves=-1)
    with pytest.raises(ValueError, match="leaves must be >= 0"):
        SearchSettings(leaves=2.5)
    with pytest.raises(ValueError, match=r"virtual must be one of \('visits', 'loss'\)"):
        SearchSettings(virtual="lost")
    with pytest.raises(ValueError, match="compiled=False"):
        MCTS(
            HashEvaluator(board),
            board,
            num_games=1,
            settings=SearchSettings(leaves=4),
            compiled=False,
        )
    numpy_search = MCTS(HashEvaluator(board), board, num_games=1, compiled=False)
    assert numpy_search.leaves == 1  # auto: one leaf a game in numpy
    assert MCTS(HashEvaluator(board), board, num_games=1).leaves == 16
    assert MCTS(HashEvaluator(board), board, num_games=2).leaves == 1
    assert MCTS(HashEvaluator(board), board, num_games=64).leaves == 1
