"""The compiled engine kernels against the numpy engine they replace.

Deterministic parts are equal exactly (the winner of a full board, replayed positions field for
field); random fills, which draw from another generator, have the same distribution.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from trapy_rl.game import BLUE, EMPTY, YELLOW, BatchGame, Board
from trapy_rl.game.batch import _FIELDS
from trapy_rl.game.fill import full_board_winner, random_fill
from trapy_rl.game.kernels import fill_winners, full_board_winners, play_paths, random_fills
from trapy_rl.game.sampling import random_legal_actions

SIDES = range(2, 11)


def random_positions(board: Board, n: int, rng: np.random.Generator) -> BatchGame:
    """n games played at random for a random number of moves (none over)."""
    batch = BatchGame(n, board)
    stop = rng.integers(0, board.num_cells // 2 + 1, size=n)
    for ply in range(board.num_cells):
        live = (stop > ply) & (batch.winner == 0)
        if not live.any():
            break
        batch.step(random_legal_actions(batch.legal_mask(), rng), games=live)
    return batch.take(np.flatnonzero(batch.winner == 0))


@pytest.mark.parametrize("side", SIDES)
def test_full_board_winners_equal_numpy(side: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(side)
    n = 500
    full = random_fill(np.zeros((n, board.num_cells), np.int8), rng.integers(1, 3, n), rng)
    np.testing.assert_array_equal(full_board_winners(full, board), full_board_winner(full, board))


@pytest.mark.parametrize("side", [2, 5, 10])
def test_random_fills_keep_stones_alternate_and_win_as_filled(side: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(side)
    batch = random_positions(board, 200, rng)
    full = random_fills(batch.stones, batch.to_move, np.random.default_rng(7))
    assert ((full == BLUE) | (full == YELLOW)).all()
    placed = batch.stones != EMPTY
    np.testing.assert_array_equal(full[placed], batch.stones[placed])
    empties = (~placed).sum(axis=1)
    mover_new = ((full == batch.to_move[:, None]) & ~placed).sum(axis=1)
    np.testing.assert_array_equal(mover_new, (empties + 1) // 2)
    # The same seed: the same fills, and fill_winners decides them as full_board_winner does.
    again = random_fills(batch.stones, batch.to_move, np.random.default_rng(7))
    np.testing.assert_array_equal(again, full)
    winners = fill_winners(batch.stones, batch.to_move, np.random.default_rng(7), board)
    np.testing.assert_array_equal(winners, full_board_winner(full, board))


def test_random_fills_are_uniform_over_cells() -> None:
    """Every empty cell is the mover's with probability ceil(e/2)/e: a chi-square test."""
    board = Board(4)
    n = 20_000
    stones = np.zeros((n, board.num_cells), np.int8)
    stones[:, 0] = BLUE  # e = K - 1 empty cells, yellow to move
    full = random_fills(stones, np.full(n, YELLOW), np.random.default_rng(3))
    counts = (full[:, 1:] == YELLOW).sum(axis=0)
    e = board.num_cells - 1
    expected = np.full(e, n * ((e + 1) // 2) / e)
    assert stats.chisquare(counts, expected).pvalue > 1e-3


@pytest.mark.parametrize("side", [3, 6, 10])
def test_fill_winners_match_numpy_playouts_in_distribution(side: int) -> None:
    """Win rates of the compiled and the numpy playouts of the same positions agree."""
    board = Board(side)
    rng = np.random.default_rng(100 + side)
    positions = random_positions(board, 8, rng)
    r = 1500
    stones = np.repeat(positions.stones, r, axis=0)
    to_move = np.repeat(positions.to_move, r)
    compiled = fill_winners(stones, to_move, rng, board).reshape(-1, r) == BLUE
    reference = full_board_winner(random_fill(stones, to_move, rng), board).reshape(-1, r) == BLUE
    for fast, slow in zip(compiled, reference):
        table = [[fast.sum(), r - fast.sum()], [slow.sum(), r - slow.sum()]]
        if fast.sum() + slow.sum() in (0, 2 * r):  # a decided position: nothing to test
            continue
        assert stats.chi2_contingency(table).pvalue > 1e-4


@pytest.mark.parametrize("side", [2, 3, 5, 10])
def test_play_paths_equal_stepping_the_batch(side: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(side)
    start = BatchGame(300, board)
    plies = rng.integers(0, 3, size=300)
    for ply in range(2):
        start.step(random_legal_actions(start.legal_mask(), rng), games=plies > ply)
    # Random legal paths (the swap included, where it comes up), played by stepping.
    stepped = start.copy()
    depth = board.num_cells + 1
    paths = np.full((300, depth), -1, dtype=np.intp)
    lengths = rng.integers(0, depth + 1, size=300)
    ended = np.zeros(300, dtype=bool)
    for d in range(depth):
        moving = (lengths > d) & (stepped.winner == 0)
        if not moving.any():
            break
        actions = random_legal_actions(stepped.legal_mask(), rng)
        paths[moving, d] = actions[moving]
        ended |= stepped.step(np.where(moving, actions, 0), games=moving)
    played = start.copy()
    played_lengths = (paths >= 0).sum(axis=1)
    got = play_paths(played, np.maximum(paths, 0), played_lengths)
    np.testing.assert_array_equal(got, ended)
    for name in _FIELDS:
        np.testing.assert_array_equal(getattr(played, name), getattr(stepped, name), name)
    assert (played_lengths[played.winner == 0] == lengths[played.winner == 0]).all()
