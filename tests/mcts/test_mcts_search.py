"""The batched search: known answers, exact terminal values, masking, batching, no mutation.

The closed-form checks run the sequential search (``leaves=1``) and, on the bandit, the
leaf-parallel one under both virtual rules; the reference comparisons run both, compiled and
(one leaf a game) in numpy, the leaf-parallel one with virtual visits and with virtual losses.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcts_helpers import (
    BanditEvaluator,
    HashEvaluator,
    UniformTestEvaluator,
    random_positions,
    winning_moves,
)

from trapy_rl.game import BatchGame, Board, GameState
from trapy_rl.mcts import MCTS, ReferenceSearch, SearchSettings
from trapy_rl.mcts.settings import VIRTUALS

# Side 4, blue's row a1..f1 touches bottom-left, bottom-right and left; yellow holds f2, so g1
# (the right region) is blue's only winning cell.
ROW_THREAT = ["a1", "f2", "b1", "b2", "c1", "c2", "d1", "b3", "e1", "c3", "f1"]


def bandit_counts(w, priors, num_simulations, *, c_puct=1.25, leaves=1, virtual="visits"):
    """PUCT at a root whose children are worth exactly ``w`` (the formula, step by step).

    The root's own evaluation is its first visit, worth 0; unvisited children are valued at
    the root's mean value (first-play urgency); float32 as in the search; ties to the lowest.
    With ``leaves`` L > 1 each step descends up to L times before backing up: an edge with v
    pending descents scores with n + v visits, of its present value (``visits``; an unvisited
    one keeps the urgency) or lost, -1 each (``loss``: ``(W - v) / (n + v)``), the root's
    ``sqrt(N)`` counts them too, and a descent that picks an unvisited edge already claimed
    in the step ends the step. (Below the root the uniform prior always leaves an unclaimed
    sibling better than a claimed one, so the step ends only at the root.)
    """
    f32 = np.float32
    counts = np.zeros(len(w), dtype=np.int64)
    sums = np.zeros(len(w))  # the edges' value sums, float64 as in the tree
    value_sum, visits, done = 0.0, 1, 0
    while done < num_simulations:
        pending = np.zeros(len(w), dtype=np.int64)
        step = []
        for _ in range(min(leaves, num_simulations - done)):
            fpu = f32(value_sum / visits)
            scale = f32(c_puct * np.sqrt(visits + len(step)))
            scores = []
            for p, n, v, total in zip(priors, counts, pending, sums):
                q = f32(total / n) if n else fpu
                if p <= 0:
                    scores.append(-np.inf)
                elif v and virtual == "loss":
                    loaded = f32(n + v)
                    scores.append(f32(p) * scale / (loaded + f32(1)) + f32((total - v) / loaded))
                else:
                    scores.append(f32(p) * scale / f32(n + v + 1) + q)
            best = int(np.argmax(scores))
            if counts[best] == 0 and pending[best]:
                break  # a collision at a leaf claimed in this step
            pending[best] += 1
            step.append(best)
        for best in step:  # back up in the order of the descents
            counts[best] += 1
            sums[best] += float(f32(w[best]))
            value_sum += float(f32(w[best]))
            visits += 1
        done += len(step)
    return counts


def test_bandit_tiny_case_by_hand():
    # Empty side-2 board: five cells, uniform prior 0.2, c_puct 1.25. By hand, simulation by
    # simulation (root value sum W, root visits N, fpu = W / N, U = 0.2 * 1.25 * sqrt(N)):
    #  1: all unvisited tie at 0.25 -> a1          4: c1 0.25+0.9 > unvisited 0.5+0.2 -> c1
    #  2: unvisited 0.354+0.05 > a1 0.177+0.1 -> b1  5: c1 1.086 > unvisited 0.899 -> c1
    #  3: unvisited 0.433-0.033 > a1, b1 -> c1       6: c1 1.053 > unvisited 1.046 -> c1
    #  7: unvisited 0.661+0.5 > c1 1.032 -> a2 (the lowest unvisited)
    board = Board(2)
    w = np.array([0.1, -0.2, 0.9, 0.3, -0.5, 0.0], dtype=np.float32)
    settings = SearchSettings(num_simulations=7, leaves=1)
    search = MCTS(BanditEvaluator(0, w), board, num_games=1, settings=settings)
    result = search.search(BatchGame(1, board))
    np.testing.assert_array_equal(result.visit_counts[0], [1, 1, 4, 1, 0, 0])
    assert result.root_values[0] == pytest.approx((0.1 - 0.2 + 4 * 0.9 + 0.3) / 8)
    np.testing.assert_allclose(result.q_values[0], [0.1, -0.2, 0.9, 0.3, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(result.priors[0], [0.2] * 5 + [0.0])


@pytest.mark.parametrize(
    ("leaves", "virtual"), [(1, "visits"), (4, "visits"), (16, "visits"), (4, "loss"), (16, "loss")]
)
@pytest.mark.parametrize("uniform_prior", [True, False])
def test_bandit_matches_the_puct_formula(uniform_prior, leaves, virtual):
    board = Board(10)
    rng = np.random.default_rng(3)
    w = rng.uniform(-0.9, 0.9, board.num_actions).astype(np.float32)
    root_logits = None if uniform_prior else rng.normal(size=board.num_actions).astype(np.float32)
    evaluator = BanditEvaluator(0, w, root_logits)
    settings = SearchSettings(num_simulations=120, leaves=leaves, virtual=virtual)
    search = MCTS(evaluator, board, num_games=1, settings=settings)
    result = search.search(BatchGame(1, board))
    priors = result.priors[0]
    expected = bandit_counts(w, priors, 120, leaves=leaves, virtual=virtual)
    np.testing.assert_array_equal(result.visit_counts[0], expected)


def test_both_virtual_rules_find_the_sequential_searchs_best_arm():
    """Three good arms among bad ones: 16 leaves a call under either rule put most visits on
    the best arm, as the sequential search does; the rules build different trees."""
    board = Board(4)
    w = np.full(board.num_actions, -0.5, dtype=np.float32)
    w[[2, 7, 9]] = [0.2, 0.8, 0.4]
    found = {}
    for leaves, virtual in ((1, "visits"), (16, "visits"), (16, "loss")):
        settings = SearchSettings(num_simulations=400, leaves=leaves, virtual=virtual)
        search = MCTS(BanditEvaluator(0, w), board, num_games=1, settings=settings)
        counts = search.search(BatchGame(1, board)).visit_counts[0]
        assert counts.argmax() == 7 and counts[7] > 0.5 * counts.sum(), (leaves, virtual)
        found[leaves, virtual] = counts
    assert not np.array_equal(found[16, "visits"], found[16, "loss"])


def test_bandit_visits_concentrate_on_the_best_child():
    board = Board(3)
    w = np.full(board.num_actions, -0.5, dtype=np.float32)
    w[[2, 7, 9]] = [0.2, 0.8, 0.4]
    search = MCTS(
        BanditEvaluator(0, w), board, num_games=1, settings=SearchSettings(num_simulations=300)
    )
    counts = search.search(BatchGame(1, board)).visit_counts[0]
    assert counts.argmax() == 7
    assert counts[7] > 0.6 * counts.sum()


def test_masked_actions_never_get_visits():
    board = Board(4)
    batch = random_positions(board, [1, 6, 9, 12], seed=1)
    # The evaluator puts its highest logits on the illegal actions (the swap included).
    evaluator = HashEvaluator(board, mask_illegal=False)
    result = MCTS(
        evaluator, board, num_games=4, settings=SearchSettings(num_simulations=200)
    ).search(batch)
    legal = batch.legal_mask()
    assert (result.visit_counts[~legal] == 0).all()
    assert (result.priors[~legal] == 0).all()
    assert (result.visit_counts.sum(axis=1) == 200).all()


def test_one_move_win_is_found_with_a_uniform_evaluator():
    board = Board(4)
    state = GameState.from_moves([*ROW_THREAT, "a4"], board)
    assert state.to_move == 1
    wins = winning_moves(state)
    assert wins == {board.parse_action("g1")}
    batch = BatchGame.from_states([state])
    num_legal = len(state.legal_actions())
    search = MCTS(
        UniformTestEvaluator(),
        board,
        num_games=1,
        settings=SearchSettings(num_simulations=num_legal + 10),
    )
    result = search.search(batch)
    best = int(result.visit_counts[0].argmax())
    assert best in wins
    # The winning child is terminal: scored exactly, +1 for the player to move at the root.
    assert result.q_values[0, best] == 1.0


def test_forced_defence_is_found():
    board = Board(4)
    state = GameState.from_moves(ROW_THREAT, board)
    assert state.to_move == 2
    threat = board.parse_action("g1")
    assert winning_moves(state.copy().play(board.parse_action("a4"))) == {threat}
    assert not winning_moves(state)  # yellow cannot win at once
    settings = SearchSettings(num_simulations=300, leaves=1)
    search = MCTS(UniformTestEvaluator(), board, num_games=1, settings=settings)
    result = search.search(BatchGame.from_states([state]))
    counts = result.visit_counts[0]
    assert counts.argmax() == threat
    assert counts[threat] > counts.sum() / 2
    # Every other move tried was refuted: blue's reply g1 wins, -1 for yellow, exactly.
    others = np.flatnonzero(counts > 0)
    others = others[others != threat]
    assert others.size and (result.q_values[0, others] < -0.5).all()


@pytest.mark.parametrize(
    ("leaves", "compiled", "virtual"),
    [
        (1, False, "visits"),
        (1, True, "visits"),
        (4, True, "visits"),
        (16, True, "visits"),
        (4, True, "loss"),
        (16, True, "loss"),
    ],
)
@pytest.mark.parametrize("side", [3, 4, 10])
def test_batched_search_equals_single_reference_searches(side, leaves, compiled, virtual):
    board = Board(side)
    plies = [0, 1, 2, 5, 9] if side == 10 else [0, 1, 3, 6, 8]
    batch = random_positions(board, plies, seed=side)
    evaluator = HashEvaluator(board, seed=side)
    sims = 60
    settings = SearchSettings(num_simulations=sims, leaves=leaves, virtual=virtual)
    result = MCTS(
        evaluator, board, num_games=len(plies), settings=settings, compiled=compiled
    ).search(batch)
    for game in range(len(plies)):
        reference = ReferenceSearch(evaluator, settings=settings)
        reference.search(batch.to_state(game), sims)
        np.testing.assert_array_equal(
            result.visit_counts[game], reference.visit_counts(board.num_actions)
        )
        assert result.root_values[game] == pytest.approx(reference.root_value(), abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    side=st.integers(2, 5),
    seed=st.integers(0, 2**31),
    num_simulations=st.integers(1, 40),
    num_games=st.integers(1, 4),
    c_puct=st.sampled_from([0.5, 1.25, 3.0]),
    fpu_reduction=st.sampled_from([0.0, 0.25]),
    leaves=st.sampled_from([1, 2, 5, 16]),
    virtual=st.sampled_from(VIRTUALS),
)
def test_property_batched_equals_reference(
    side, seed, num_simulations, num_games, c_puct, fpu_reduction, leaves, virtual
):
    board = Board(side)
    rng = np.random.default_rng(seed)
    plies = rng.integers(0, board.num_cells // 3 + 1, num_games).tolist()
    batch = random_positions(board, plies, seed=seed)
    evaluator = HashEvaluator(board, seed=seed % 7)
    settings = SearchSettings(
        num_simulations=num_simulations,
        c_puct=c_puct,
        fpu_reduction=fpu_reduction,
        leaves=leaves,
        virtual=virtual,
    )
    search = MCTS(evaluator, board, num_games=num_games, settings=settings)
    result = search.search(batch)
    for game in range(num_games):
        reference = ReferenceSearch(evaluator, settings=settings)
        reference.search(batch.to_state(game), num_simulations)
        np.testing.assert_array_equal(
            result.visit_counts[game], reference.visit_counts(board.num_actions)
        )
        assert result.root_values[game] == pytest.approx(reference.root_value(), abs=1e-6)


@pytest.mark.parametrize(("leaves", "virtual"), [(1, "visits"), (8, "visits"), (8, "loss")])
def test_terminal_leaves_are_exact_and_not_evaluated(leaves, virtual):
    board = Board(3)
    batch = random_positions(board, [6, 7, 8], seed=5)
    evaluator = HashEvaluator(board)
    seen_over = []

    def checking(batch_, games):
        seen_over.append(bool(batch_.is_over[games].any()))
        return evaluator(batch_, games)

    sims = 150
    settings = SearchSettings(num_simulations=sims, leaves=leaves, virtual=virtual)
    search = MCTS(checking, board, num_games=3, settings=settings)
    result = search.search(batch)
    assert not any(seen_over)
    assert search.tree.terminal.any()  # the searches did reach finished games
    for game in range(3):  # the reference scores terminal positions by the rules
        reference = ReferenceSearch(evaluator, settings=settings)
        reference.search(batch.to_state(game), sims)
        np.testing.assert_array_equal(
            result.visit_counts[game], reference.visit_counts(board.num_actions)
        )


@pytest.mark.parametrize("compiled", [False, True])
def test_one_evaluator_call_per_simulation_step(compiled):
    board = Board(10)
    batch = random_positions(board, [4, 10, 20, 3], seed=2)
    evaluator = UniformTestEvaluator()
    settings = SearchSettings(num_simulations=16, leaves=1)
    MCTS(evaluator, board, num_games=4, settings=settings, compiled=compiled).search(batch)
    assert len(evaluator.call_sizes) == 1 + 16  # the roots, then one call per step
    assert evaluator.call_sizes == [4] * 17


def test_one_game_sends_its_leaves_in_batches():
    """Auto leaves: 16 a call for a search of one game, one a game for more games."""
    board = Board(10)
    batch = random_positions(board, [6], seed=3)
    evaluator = UniformTestEvaluator()
    result = MCTS(
        evaluator, board, num_games=1, settings=SearchSettings(num_simulations=64)
    ).search(batch)
    assert result.visit_counts.sum() == 64
    assert evaluator.call_sizes == [1, 16, 16, 16, 16]  # no finished game this shallow
    four = random_positions(board, [2, 4, 6, 8], seed=3)
    evaluator = UniformTestEvaluator()
    search = MCTS(evaluator, board, num_games=4, settings=SearchSettings(num_simulations=64))
    assert search.leaves == 1
    assert search.search(four).visit_counts.sum() == 4 * 64
    assert evaluator.call_sizes == [4] * 65
    evaluator = UniformTestEvaluator()
    settings = SearchSettings(num_simulations=64, leaves=4)
    MCTS(evaluator, board, num_games=4, settings=settings).search(four)
    assert evaluator.call_sizes == [4] + [16] * 16


def test_subset_of_games_equals_searching_them_alone():
    board = Board(4)
    batch = random_positions(board, [2, 4, 6, 8], seed=7)
    evaluator = HashEvaluator(board)
    settings = SearchSettings(num_simulations=40, leaves=3)  # a number: the same for any B
    together = MCTS(evaluator, board, num_games=4, settings=settings)
    result = together.search(batch, games=np.array([3, 1]))
    assert (together.tree.num_nodes[[0, 2]] == 0).all()
    for row, game in enumerate([3, 1]):
        alone = MCTS(evaluator, board, num_games=1, settings=settings)
        single = alone.search(batch.take([game]))
        np.testing.assert_array_equal(result.visit_counts[row], single.visit_counts[0])
        np.testing.assert_array_equal(result.q_values[row], single.q_values[0])


def test_search_does_not_mutate_the_batch():
    board = Board(4)
    batch = random_positions(board, [1, 5, 9], seed=4)
    before = batch.copy()
    MCTS(
        HashEvaluator(board), board, num_games=3, settings=SearchSettings(num_simulations=50)
    ).search(batch, add_noise=True)
    for name in ("stones", "to_move", "winner", "move_count", "history", "resigned"):
        np.testing.assert_array_equal(getattr(batch, name), getattr(before, name))
    np.testing.assert_array_equal(batch.group_regions(), before.group_regions())


def test_swap_is_searched_like_any_move():
    board = Board(4)
    state = GameState.from_moves(["d1"], board)  # move_count 1: yellow may swap
    batch = BatchGame.from_states([state])
    swap = board.swap_action
    logits = np.zeros(board.num_actions, dtype=np.float32)
    logits[swap] = 4.0
    w = np.full(board.num_actions, -0.2, dtype=np.float32)
    w[swap] = 0.5
    search = MCTS(
        BanditEvaluator(1, w, logits),
        board,
        num_games=1,
        settings=SearchSettings(num_simulations=50),
    )
    result = search.search(batch)
    assert result.visit_counts[0].argmax() == swap
    assert result.q_values[0, swap] == pytest.approx(0.5)
    # Uniform: the swap is one of the legal actions and gets its share.
    uniform = MCTS(
        UniformTestEvaluator(),
        board,
        num_games=1,
        settings=SearchSettings(num_simulations=3 * board.num_actions),
    )
    assert uniform.search(batch).visit_counts[0, swap] > 0


def test_noise_changes_the_search_but_not_the_reported_priors():
    board = Board(4)
    batch = random_positions(board, [3, 3], seed=9)
    evaluator = HashEvaluator(board)
    plain = MCTS(evaluator, board, num_games=2, settings=SearchSettings(num_simulations=40)).search(
        batch
    )
    runs = []
    for seed in (0, 0, 1):
        search = MCTS(
            evaluator, board, num_games=2, settings=SearchSettings(num_simulations=40), seed=seed
        )
        runs.append(search.search(batch, add_noise=True))
        # The stored root prior is the evaluator's again after the search.
        np.testing.assert_array_equal(np.maximum(search.tree.priors[:, 0], 0), plain.priors)
    np.testing.assert_array_equal(runs[0].visit_counts, runs[1].visit_counts)  # same seed
    assert not np.array_equal(runs[0].visit_counts, runs[2].visit_counts)
    np.testing.assert_array_equal(runs[0].priors, plain.priors)
    assert (runs[0].visit_counts[~batch.legal_mask()] == 0).all()


def test_num_simulations_per_call():
    board = Board(4)
    batch = random_positions(board, [2], seed=1)
    search = MCTS(
        HashEvaluator(board), board, num_games=1, settings=SearchSettings(num_simulations=10)
    )
    assert search.search(batch).visit_counts.sum() == 10
    assert search.search(batch, num_simulations=25).visit_counts.sum() == 35  # tree kept
    search.reset()
    assert search.search(batch, num_simulations=0).visit_counts.sum() == 0


def test_bad_input_is_named():
    board = Board(4)
    batch = random_positions(board, [2, 3], seed=1)
    search = MCTS(
        HashEvaluator(board), board, num_games=2, settings=SearchSettings(num_simulations=5)
    )
    with pytest.raises(ValueError, match="2 games"):
        MCTS(HashEvaluator(board), board, num_games=3).search(batch)
    with pytest.raises(ValueError, match="Board"):
        search.search(random_positions(Board(3), [1, 1], seed=0))
    with pytest.raises(ValueError, match="num_simulations"):
        MCTS(HashEvaluator(board), board, num_games=2, settings=SearchSettings(num_simulations=0))
    with pytest.raises(ValueError, match="repeat"):
        search.search(batch, games=np.array([1, 1]))
    over = batch.copy()
    over.resign([0])
    with pytest.raises(ValueError, match="over"):
        search.search(over)
    search.search(batch)
    moved = batch.copy()
    moved.step(batch.legal_mask().argmax(axis=1))  # a move the search was not told of
    with pytest.raises(ValueError, match="advance"):
        search.search(moved)

    def bad_values(batch_, games):
        logits, _ = HashEvaluator(board)(batch_, games)
        return logits, np.full(len(games), 2.0, dtype=np.float32)

    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        MCTS(bad_values, board, num_games=2).search(batch)

    def no_logits(batch_, games):
        n = len(games)
        return np.full((n, board.num_actions), -np.inf, np.float32), np.zeros(n, np.float32)

    with pytest.raises(ValueError, match="finite maximum"):
        MCTS(no_logits, board, num_games=2).search(batch)
