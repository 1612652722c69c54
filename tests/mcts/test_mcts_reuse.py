"""Subtree reuse: advance keeps the chosen child's statistics; reset forgets; trees stay sound."""

from __future__ import annotations

import numpy as np
import pytest
from mcts_helpers import HashEvaluator, UniformTestEvaluator, random_positions

from trapy_rl.game import BatchGame, Board, GameState
from trapy_rl.mcts import MCTS, ReferenceSearch, SearchSettings, Tree


def check_tree(tree: Tree, game: int) -> None:
    """Structural invariants of one tree: links both ways, visit and value bookkeeping, no
    virtual visit or claimed edge left by a step."""
    used = int(tree.num_nodes[game])
    assert (tree.virtual_visits[game, :used] == 0).all()
    assert (tree.children_index[game, :used] >= -1).all()
    for node in range(used):
        children = tree.children_index[game, node]
        for action in np.flatnonzero(children >= 0):
            child = children[action]
            assert tree.parents[game, child] == node
            assert tree.actions_from_parent[game, child] == action
            assert tree.node_visits[game, child] == tree.edge_visits[game, node, action]
        visited = tree.edge_visits[game, node] > 0
        assert (children[visited] >= 0).all() and (children[~visited] < 0).all()
        np.testing.assert_allclose(
            tree.edge_q[game, node, visited],
            tree.edge_value_sums[game, node, visited] / tree.edge_visits[game, node, visited],
            rtol=1e-6,
        )
        assert (tree.edge_q[game, node, ~visited] == 0).all()
        priors = tree.priors[game, node]
        if tree.terminal[game, node]:
            assert (children < 0).all() and (priors == -np.inf).all()
            assert not tree.pending[game, node]
        elif not tree.pending[game, node]:
            assert np.sum(priors[priors > -np.inf]) == pytest.approx(1.0, abs=1e-5)
        else:  # still the evaluator's logits: never selected from, only its evaluation
            assert tree.node_visits[game, node] == 1
        if not tree.terminal[game, node]:
            # Its own evaluation, then one visit per simulation through a child.
            assert tree.node_visits[game, node] == 1 + tree.edge_visits[game, node].sum()


def test_advance_keeps_the_chosen_childs_statistics():
    board = Board(4)
    batch = random_positions(board, [2, 5, 7], seed=11)
    search = MCTS(
        HashEvaluator(board), board, num_games=3, settings=SearchSettings(num_simulations=80)
    )
    result = search.search(batch)
    actions = result.visit_counts.argmax(axis=1)
    tree = search.tree
    children = tree.children_index[np.arange(3), 0, actions]
    before = {
        "edge_visits": tree.edge_visits[np.arange(3), children].copy(),
        "edge_q": tree.edge_q[np.arange(3), children].copy(),
        "node_visits": tree.node_visits[np.arange(3), children].copy(),
        "priors": tree.priors[np.arange(3), children].copy(),
    }
    search.advance(actions)
    np.testing.assert_array_equal(tree.edge_visits[:, 0], before["edge_visits"])
    np.testing.assert_array_equal(tree.edge_q[:, 0], before["edge_q"])
    np.testing.assert_array_equal(tree.node_visits[:, 0], before["node_visits"])
    np.testing.assert_array_equal(tree.priors[:, 0], before["priors"])
    for game in range(3):
        check_tree(tree, game)
    batch.step(actions)
    again = search.search(batch, num_simulations=30)
    np.testing.assert_array_equal(again.visit_counts.sum(axis=1), before["node_visits"] - 1 + 30)


@pytest.mark.parametrize(
    ("leaves", "compiled", "virtual"),
    [(1, False, "visits"), (1, True, "visits"), (4, True, "visits"), (4, True, "loss")],
)
def test_reuse_over_a_game_equals_the_reference(leaves, compiled, virtual):
    board = Board(3)
    batch = random_positions(board, [0, 1, 4], seed=2)
    evaluator = HashEvaluator(board, seed=4)
    # A small first capacity makes the trees grow on the way.
    settings = SearchSettings(num_simulations=25, leaves=leaves, virtual=virtual)
    search = MCTS(evaluator, board, num_games=3, settings=settings, capacity=8, compiled=compiled)
    references = [ReferenceSearch(evaluator, settings=settings) for _ in range(3)]
    states = [batch.to_state(game) for game in range(3)]
    for move in range(6):
        live = np.flatnonzero(~batch.is_over)
        if live.size == 0:
            break
        result = search.search(batch, games=live)
        actions = np.full(3, -1)
        for row, game in enumerate(live):
            references[game].search(states[game], 25)
            counts = references[game].visit_counts(board.num_actions)
            np.testing.assert_array_equal(result.visit_counts[row], counts)
            check_tree(search.tree, game)
            # Alternate between the favourite and a rarely visited move (maybe unexpanded).
            actions[game] = (
                counts.argmax() if move % 2 == 0 else np.flatnonzero(states[game].legal_mask())[-1]
            )
        search.advance(actions)
        for game in live:
            references[game].advance(int(actions[game]))
            states[game].play(int(actions[game]))
        batch.step(np.maximum(actions, 0))  # the games over (action -1) ignore theirs
        assert search.tree.capacity >= 8


def test_advance_to_an_unexpanded_or_terminal_child_empties_the_tree():
    board = Board(4)
    state = GameState.from_moves(
        ["a1", "f2", "b1", "b2", "c1", "c2", "d1", "b3", "e1", "c3", "f1", "a4"], board
    )
    batch = BatchGame.from_states([state, state])
    settings = SearchSettings(num_simulations=12, leaves=1)
    search = MCTS(UniformTestEvaluator(), board, num_games=2, settings=settings)
    result = search.search(batch)
    win = board.parse_action("g1")
    assert result.visit_counts[0, win] > 0
    unexpanded = np.flatnonzero(batch.legal_mask()[1] & (result.visit_counts[1] == 0))[0]
    search.advance(np.array([win, unexpanded]))
    np.testing.assert_array_equal(search.tree.num_nodes, [0, 0])


def test_advance_minus_one_keeps_and_reset_forgets():
    board = Board(4)
    batch = random_positions(board, [3, 4], seed=5)
    search = MCTS(
        HashEvaluator(board), board, num_games=2, settings=SearchSettings(num_simulations=20)
    )
    search.search(batch)
    kept = search.tree.num_nodes.copy()
    search.advance(np.array([-1, -1]))
    np.testing.assert_array_equal(search.tree.num_nodes, kept)
    search.reset(np.array([1]))
    assert search.tree.num_nodes[0] == kept[0] and search.tree.num_nodes[1] == 0
    fresh = MCTS(
        HashEvaluator(board), board, num_games=2, settings=SearchSettings(num_simulations=20)
    )
    np.testing.assert_array_equal(
        search.search(batch, games=np.array([1])).visit_counts[0],
        fresh.search(batch).visit_counts[1],
    )
    with pytest.raises(ValueError, match="shape"):
        search.advance(np.array([0]))


def test_advancing_trees_of_different_sizes_together_equals_one_at_a_time():
    """Compacting many trees in one call (small ones with stale slots) equals one per call."""
    board = Board(5)
    num_games = 8
    rng = np.random.default_rng(0)  # this seed failed before the fix (stale slot indices)
    together = MCTS(
        HashEvaluator(board),
        board,
        num_games=num_games,
        settings=SearchSettings(num_simulations=40),
    )
    alone = MCTS(
        HashEvaluator(board),
        board,
        num_games=num_games,
        settings=SearchSettings(num_simulations=40),
    )
    batch = BatchGame(num_games, board)
    for _ in range(40):
        sims = int(rng.choice([1, 3, 30, 300]))  # trees of very different sizes
        first = together.search(batch, num_simulations=sims)
        second = alone.search(batch, num_simulations=sims)
        assert (first.visit_counts == second.visit_counts).all()
        actions = first.visit_counts.argmax(axis=1)
        batch.step(actions)
        together.advance(actions)
        for game in range(num_games):
            one = np.full(num_games, -1)
            one[game] = actions[game]
            alone.advance(one)
        finished = np.flatnonzero(batch.is_over | (rng.random(num_games) < 0.5))
        batch.reset(finished)
        together.reset(finished)
        alone.reset(finished)
    for game in range(num_games):
        check_tree(together.tree, game)
