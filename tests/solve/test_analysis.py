"""The compiled position analysis against the engine and against full minimax.

Groups are the engine's (`group_of`); every claim the analysis makes is checked by brute
force: a claimed win is won by the move it names, a claimed loss is lost, a virtual win is won
by its owner whoever moves, and the moves it keeps include a winning one whenever the position
is won.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import BruteForce, late_positions, reachable_states

from trapy_rl.game import Board, GameState
from trapy_rl.game.state import group_of, regions_of
from trapy_rl.solve.analysis import INFO_SIZE, WIN_CELL, analyse, label_groups, new_scratch
from trapy_rl.solve.connections import virtual_win
from trapy_rl.solve.solver import board_tables, swap_state


def run_analyse(state: GameState, *, deep: bool) -> tuple[int, list[int], int]:
    """(status, moves, proving move) of the analysis of ``state``."""
    board = state.board
    nbr, reg, win, mir, _, wins_with = board_tables(board)
    k = board.num_cells
    moves = np.empty(k + 1, np.int32)
    forcing = np.empty(k + 1, np.int8)
    info = np.empty(INFO_SIZE, np.int64)
    swap = swap_state(state.stones, state.to_move, state.move_count <= 1)
    stones = state.stones.copy()
    status, count = analyse(
        stones, state.to_move, swap, nbr, reg, win, mir, wins_with,
        new_scratch(k), moves, forcing, info, np.empty(1, np.uint64), deep,
    )  # fmt: skip
    np.testing.assert_array_equal(stones, state.stones)  # restored
    return int(status), moves[:count].tolist(), int(info[WIN_CELL])


def positions(side: int, count: int, seed: int) -> list[GameState]:
    rng = np.random.default_rng(seed)
    if side <= 3:
        states = reachable_states(Board(side))
        return [states[i] for i in rng.choice(len(states), count, replace=False)]
    # Late positions, 3 to 11 empty cells: few enough for the brute force.
    return [
        late_positions(Board(side), 1, int(empty), rng)[0] for empty in rng.integers(3, 12, count)
    ]


@pytest.mark.parametrize("side", [3, 4, 5, 10])
def test_groups_are_the_engines(side: int) -> None:
    board = Board(side)
    nbr, reg = board_tables(board)[:2]
    rng = np.random.default_rng(side)
    rows = np.empty((4, board.num_cells), np.int32)
    for _ in range(50):
        stones = rng.integers(0, 3, board.num_cells).astype(np.int8)
        count = label_groups(stones, nbr, reg, *rows)
        labels, gregs, gcols = rows[0], rows[1], rows[2]
        assert count == len(set(labels[stones != 0].tolist()))
        for cell in np.flatnonzero(stones):
            group = group_of(stones, int(cell), board)
            assert set(np.flatnonzero(labels == labels[cell]).tolist()) == set(group)
            assert gregs[labels[cell]] == regions_of(group, board)
            assert gcols[labels[cell]] == stones[cell]


@pytest.mark.parametrize(("side", "count"), [(3, 600), (4, 80), (6, 30)])
@pytest.mark.parametrize("deep", [False, True])
def test_claims_hold(side: int, count: int, deep: bool) -> None:
    brute = BruteForce()
    won_claims = lost_claims = 0
    for state in positions(side, count, seed=side):
        status, moves, proof = run_analyse(state, deep=deep)
        value = brute.wins(state)
        if status == 1:
            won_claims += 1
            assert brute.move_wins(state, proof), state.move_names()
        elif status == -1:
            lost_claims += 1
            assert not value, state.move_names()
        else:
            assert moves, state.move_names()
            if value:  # a kept move wins
                assert any(brute.move_wins(state, a) for a in moves), state.move_names()
    assert won_claims and lost_claims


@pytest.mark.parametrize(("side", "count"), [(3, 1000), (4, 120), (6, 50)])
def test_virtual_wins_are_won_whoever_moves(side: int, count: int) -> None:
    brute = BruteForce()
    board = Board(side)
    nbr, reg, win = board_tables(board)[:3]
    k = board.num_cells
    rows = np.empty((4, k), np.int32)
    found = 0
    for state in positions(side, count, seed=10 + side):
        count_groups = label_groups(state.stones, nbr, reg, *rows)
        for colour in (1, 2):
            carrier = np.zeros(k, np.int32)
            won, cell = virtual_win(
                state.stones, colour, nbr, reg, win, rows[0], rows[1], rows[2], count_groups,
                np.empty((4, k), np.int32), np.empty((2, k, k), np.int32),
                np.empty((2, k, 5), np.int32), carrier,
            )  # fmt: skip
            if not won:
                continue
            found += 1
            assert carrier[cell] == 1 and state.stones[cell] == 0
            for mover in (1, 2):
                moved = GameState(board)
                moved.stones[:] = state.stones
                moved.to_move = mover
                moved.history = [-1, -1]  # past the swap
                assert brute.wins(moved) == (mover == colour), state.move_names()
    assert found
