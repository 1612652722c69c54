"""Start positions of rating games: balanced, seeded, legal, paired by colour."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.eval.starts import generate_starts, load_starts, read_starts, start_batch
from trapy_rl.game import BatchGame, Board, GameState
from trapy_rl.mcts import SearchSettings

QUICK = SearchSettings(num_simulations=60)


def test_generated_starts_are_distinct_legal_and_seeded() -> None:
    board = Board(4)
    starts = generate_starts(board, count=12, seed=3, stones=(2, 3), search=QUICK, max_value=0.3)
    assert len(starts) == len(set(starts)) == 12
    for start in starts:
        assert len(start) in (2, 3) and len(set(start)) == len(start)
        state = GameState.from_moves(list(start), board)
        assert not state.is_over and board.swap_action not in start
    again = generate_starts(board, count=12, seed=3, stones=(2, 3), search=QUICK, max_value=0.3)
    assert again == starts
    other = generate_starts(board, count=12, seed=4, stones=(2, 3), search=QUICK, max_value=0.3)
    assert other != starts


def test_the_balance_filter_keeps_only_near_even_positions() -> None:
    """With a tight bound the kept starts are those a fresh search also finds near even more
    often than random positions are (rollout values are noisy, so the check is statistical)."""
    from trapy_rl.agents import RolloutEvaluator
    from trapy_rl.mcts import MCTS

    board = Board(4)
    kept = generate_starts(board, count=24, seed=0, stones=(3,), search=QUICK, max_value=0.15)
    rng = np.random.default_rng(1)
    drawn = [tuple(rng.choice(board.num_cells, 3, replace=False).tolist()) for _ in range(24)]

    def spread(starts) -> float:
        batch = start_batch(board, starts, len(starts), pairs=False)
        games = np.flatnonzero(batch.winner == 0)
        search = MCTS(RolloutEvaluator(4, seed=9), board, num_games=len(starts), settings=QUICK)
        return float(np.abs(search.search(batch, games=games).root_values).mean())

    assert spread(kept) < spread(drawn)


def test_start_batch_pairs_games_and_wraps_around() -> None:
    board = Board(4)
    starts = [(0, 5), (1, 6, 7)]
    batch = start_batch(board, starts, 6, offset=1)
    expected = [starts[1], starts[1], starts[0], starts[0], starts[1], starts[1]]
    for game, start in enumerate(expected):
        assert tuple(batch.history[game, : batch.move_count[game]]) == start
    single = start_batch(board, starts, 3, pairs=False)
    assert [int(n) for n in single.move_count] == [2, 3, 2]
    with pytest.raises(ValueError, match="illegal move"):
        start_batch(board, [(0, 0)], 2)


def test_the_shipped_side_10_set_loads_and_is_legal() -> None:
    board = Board(10)
    starts = load_starts(board)
    assert len(starts) == len(set(starts)) == 200
    assert {len(start) for start in starts} == {2, 3, 4}
    batch = start_batch(board, starts, 2 * len(starts))
    assert (batch.winner == 0).all() and isinstance(batch, BatchGame)


def test_a_bad_line_is_named(tmp_path) -> None:
    path = tmp_path / "starts.txt"
    path.write_text("# note\na1 b1\na1 zz9\n")
    with pytest.raises(ValueError, match=r"starts\.txt:3: 'zz9'"):
        read_starts(path, Board(4))
