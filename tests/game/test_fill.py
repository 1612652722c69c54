"""Random fills, playouts and full-board winners against the flood-fill reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trapy_rl.game import BLUE, EMPTY, YELLOW, BatchGame, Board, find_winner
from trapy_rl.game.fill import full_board_winner, playout_wins, random_fill, winning_players
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.game.state import group_of, regions_of

SIDES = range(2, 11)


def reference_winning_players(stones: np.ndarray, board: Board) -> tuple[bool, bool]:
    """Flood fill every group; does blue, does yellow have a winning group."""
    found = {BLUE: False, YELLOW: False}
    for cell in np.flatnonzero(stones):
        group = group_of(stones, int(cell), board)
        if board.win_table[regions_of(group, board)]:
            found[int(stones[cell])] = True
    return found[BLUE], found[YELLOW]


def random_positions(board: Board, n: int, rng: np.random.Generator) -> BatchGame:
    """n games played at random for a random number of moves (possibly finished)."""
    batch = BatchGame(n, board)
    stop = rng.integers(0, board.num_cells + 1, size=n)
    for ply in range(board.num_cells + 1):
        live = (stop > ply) & (batch.winner == 0)
        if not live.any():
            break
        actions = random_legal_actions(batch.legal_mask(), rng)
        batch.step(actions, games=live)
    return batch


@pytest.mark.parametrize("side", SIDES)
def test_full_board_winner_matches_reference(side: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(side)
    n = 300
    full = random_fill(np.zeros((n, board.num_cells), np.int8), rng.integers(1, 3, n), rng)
    fast = full_board_winner(full, board)
    slow = np.array([find_winner(s, board) for s in full])
    np.testing.assert_array_equal(fast, slow)
    assert set(np.unique(slow)) <= {BLUE, YELLOW}


@pytest.mark.parametrize("side", [2, 3, 4, 6, 10])
def test_exactly_one_player_wins_every_full_board(side: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(100 + side)
    n = 10_000 if side == 10 else 3_000
    full = random_fill(np.zeros((n, board.num_cells), np.int8), np.full(n, BLUE), rng)
    wins = winning_players(full, board)
    assert (wins.sum(axis=1) == 1).all()
    # And a few hundred through the reference, both colours flood-filled.
    for stones in full[:120] if side == 10 else full[:50]:
        assert sum(reference_winning_players(stones, board)) == 1


@pytest.mark.parametrize("side", [2, 3, 5, 10])
def test_winning_players_on_partial_positions(side: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(7 * side)
    batch = random_positions(board, 120, rng)
    fast = winning_players(batch.stones, board)
    for stones, row, winner in zip(batch.stones, fast, batch.winner, strict=True):
        assert tuple(row) == reference_winning_players(stones, board)
        # A legally reached position: only the player the engine names can have won.
        assert row.sum() == (winner != 0) and (winner == 0 or row[winner - 1])


@settings(max_examples=120, deadline=None)
@given(side=st.integers(2, 10), data=st.data())
def test_any_full_colouring_matches_reference(side: int, data) -> None:
    board = Board(side)
    colours = data.draw(
        st.lists(
            st.sampled_from([BLUE, YELLOW]), min_size=board.num_cells, max_size=board.num_cells
        )
    )
    stones = np.array(colours, dtype=np.int8)[None]
    assert full_board_winner(stones, board)[0] == find_winner(stones[0], board)
    assert winning_players(stones, board).sum() == 1


@settings(max_examples=100, deadline=None)
@given(side=st.integers(2, 10), seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8))
def test_random_fill_keeps_stones_and_alternates(side: int, seed: int, n: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(seed)
    batch = random_positions(board, n, rng)
    stones = batch.stones.copy()
    before = stones.copy()
    full = random_fill(stones, batch.to_move, rng)
    np.testing.assert_array_equal(stones, before)  # input untouched
    assert full.dtype == np.int8 and full.shape == stones.shape
    assert np.isin(full, (BLUE, YELLOW)).all()
    occupied = before != EMPTY
    np.testing.assert_array_equal(full[occupied], before[occupied])
    for row, old, mover in zip(full, before, batch.to_move, strict=True):
        empty = old == EMPTY
        e = int(empty.sum())
        assert (row[empty] == mover).sum() == (e + 1) // 2
        assert (row[empty] == 3 - mover).sum() == e // 2
    # The winner of the filled board is the reference's.
    for row in full:
        assert full_board_winner(row[None], board)[0] == find_winner(row, board)


def test_random_fill_is_uniform_over_cells() -> None:
    board = Board(3)  # 12 cells, one blue stone, yellow to move: yellow gets 6 of 11
    rng = np.random.default_rng(3)
    n = 22_000
    stones = np.zeros((n, board.num_cells), np.int8)
    stones[:, 4] = BLUE
    full = random_fill(stones, np.full(n, YELLOW), rng)
    share = (full == YELLOW).mean(axis=0)
    assert share[4] == 0
    others = np.delete(share, 4)
    # Each empty cell is yellow with probability 6/11; standard error about 0.0034.
    np.testing.assert_allclose(others, 6 / 11, atol=0.02)


def test_winner_rate_matches_playouts() -> None:
    """Fills from the empty board and stepped random games give the same blue win rate."""
    board = Board(4)
    rng = np.random.default_rng(11)
    n = 4_000
    full = random_fill(np.zeros((n, board.num_cells), np.int8), np.full(n, BLUE), rng)
    fill_rate = (full_board_winner(full, board) == BLUE).mean()
    batch = BatchGame(n, board)
    while (batch.winner == 0).any():
        mask = batch.legal_mask()
        mask[:, -1] = False  # no swap, as in a fill
        batch.step(random_legal_actions(mask, rng))
    play_rate = (batch.winner == BLUE).mean()
    # Two independent estimates of one probability: difference s.e. about 0.011.
    assert abs(fill_rate - play_rate) < 0.05


@pytest.mark.parametrize("compiled", [False, True])
def test_playout_wins_match_random_games_played_on(compiled: bool) -> None:
    """A playout is a random game played on from the position, the swap included (by the
    numpy fill and by the compiled kernel)."""
    board = Board(3)
    rng = np.random.default_rng(21)
    later = BatchGame(8, board)  # four random moves: the swap is past
    for _ in range(4):
        later.step(random_legal_actions(later.legal_mask(), rng))
    first = BatchGame(3, board)  # one move: the swap is legal
    first.step([0, 4, 7])
    batch = BatchGame.from_states(
        [later.to_state(g) for g in np.flatnonzero(later.winner == 0)]
        + [first.to_state(g) for g in range(first.num_games)]
    )
    games = np.arange(batch.num_games)
    r = 3000
    before = batch.stones.copy()
    stepped_rates = {}
    for p, chunk in ((0.0, 500), (1.0, None)):  # in rounds of 500 // n, and in one round
        wins = playout_wins(
            batch, games, rng, num_playouts=r, swap_probability=p, chunk=chunk, compiled=compiled
        )
        assert wins.dtype == np.int64 and wins.shape == games.shape
        # The slow way: r random games from each position, stepped move by move.
        played = batch.take(np.repeat(games, r))
        while (played.winner == 0).any():
            live = played.winner == 0
            actions = random_legal_actions(played.legal_mask(), rng, swap_probability=p)
            played.step(actions, games=live)
        stepped = (played.winner.reshape(-1, r) == batch.to_move[:, None]).sum(axis=1)
        stepped_rates[p] = stepped / r
        # Two estimates of one probability from 3000 games each: the difference's standard
        # error is at most 0.013.
        np.testing.assert_allclose(wins / r, stepped_rates[p], atol=0.06)
    np.testing.assert_array_equal(batch.stones, before)  # positions untouched
    assert np.abs(stepped_rates[1.0] - stepped_rates[0.0])[-3:].max() > 0.2  # the swap matters


def test_bad_input_is_named() -> None:
    board = Board(3)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"stones must be \[n, 12\]"):
        full_board_winner(np.ones((2, 11), np.int8), board)
    with pytest.raises(ValueError, match="empty cells"):
        full_board_winner(np.zeros((2, 12), np.int8), board)
    with pytest.raises(ValueError, match="to_move must have shape"):
        random_fill(np.zeros((2, 12), np.int8), np.ones(3, np.int8), rng)
    with pytest.raises(ValueError, match="players 1 or 2"):
        random_fill(np.zeros((2, 12), np.int8), np.zeros(2, np.int8), rng)
    batch = BatchGame(2, board)
    with pytest.raises(ValueError, match="num_playouts"):
        playout_wins(batch, [0, 1], rng, num_playouts=0)
    with pytest.raises(ValueError, match="swap_probability"):
        playout_wins(batch, [0, 1], rng, num_playouts=1, swap_probability=1.5)
    with pytest.raises(ValueError, match="chunk"):
        playout_wins(batch, [0, 1], rng, num_playouts=1, chunk=0)
