"""H-search's claims against full minimax (`brute_force.BruteForce`) and the solved test sets.

For each position and each player P, the connections of `trapy_rl.solve.hsearch` are built
and every claim checked: a virtual win of P is won by P whoever moves, and its move keeps it
won; a semi win's key wins for P moving first; and with the opponent of P to move, every move
outside the intersection of P's semi wins' carriers loses (the must-play region), unless it
wins at once (the analysis asks only after ruling those out). Side 3: a random 2,500 of its
positions (all 225,625 under ``--runslow``); side 4: random late positions.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from brute_force import BruteForce, late_positions, reachable_states

from trapy_rl.game import Board, GameState
from trapy_rl.game.state import find_winner
from trapy_rl.solve import Solver
from trapy_rl.solve.analysis import label_groups
from trapy_rl.solve.hsearch import (
    NONE,
    SEMI_WIN,
    VIRTUAL_WIN,
    connection_wins,
    hsearch,
    new_vc_scratch,
    winning_triples,
)
from trapy_rl.solve.positions import load_test_set
from trapy_rl.solve.solver import board_tables


def test_winning_triples_are_the_minimal_winning_sets() -> None:
    win = board_tables(Board(4))[2]
    triples = sorted(int(m) for m in winning_triples(win))
    assert triples == sorted(sum(1 << ((k + d) % 5) for d in (0, 1, 3)) for k in range(5))
    for mask in range(32):  # every winning set holds one of them
        assert win[mask] == any(mask & t == t for t in triples)


def with_mover(state: GameState, mover: int) -> GameState:
    """The same stones, ``mover`` to move, the swap rule spent."""
    moved = GameState(state.board)
    moved.stones[:] = state.stones
    moved.to_move = mover
    moved.history = [-1, -1]
    return moved


def filled_outside(state: GameState, cells: int, colour: int) -> GameState:
    """``state`` with every empty cell outside the bit set ``cells`` given to ``colour``, its
    winner (there is at most one) recorded."""
    filled = with_mover(state, state.to_move)
    empty = np.flatnonzero(state.stones == 0)
    filled.stones[[c for c in empty if not (cells >> int(c)) & 1]] = colour
    filled.winner = find_winner(filled.stones, state.board)
    return filled


def check_claims(states: list[GameState], brute: BruteForce) -> dict[str, int]:
    """Check every claim H-search makes about ``states``; returns how many of each were met."""
    board = states[0].board
    nbr, reg, win = board_tables(board)[:3]
    k = board.num_cells
    triples = winning_triples(win)
    vcs = new_vc_scratch(k)
    rows = np.empty((4, k), np.int32)
    met = {"virtual": 0, "semi": 0, "pruned": 0}
    for state in states:
        if state.is_over:
            continue
        label_groups(state.stones, nbr, reg, *rows)
        for owner in (1, 2):
            hsearch(state.stones, owner, nbr, reg, rows[0], vcs, 1 << 14)
            status, key, carrier, union = connection_wins(state.stones, owner, triples, vcs, False)
            if status == NONE:
                continue
            own_move, their_move = with_mover(state, owner), with_mover(state, 3 - owner)
            assert state.stones[key] == 0
            assert brute.move_wins(own_move, key), (state.move_names(), owner, key)
            # The claim rests on ``union`` alone: the opponent's stones everywhere else.
            filled = filled_outside(state, int(union), 3 - owner)
            if status == VIRTUAL_WIN:
                met["virtual"] += 1
                assert not brute.wins(their_move), (state.move_names(), owner)
                assert filled.winner != 3 - owner
                assert filled.winner == owner or not brute.wins(with_mover(filled, 3 - owner))
                continue
            assert status == SEMI_WIN
            met["semi"] += 1
            assert (int(union) >> key) & 1 and filled.winner != 3 - owner
            assert filled.winner == owner or brute.wins(with_mover(filled, owner))
            for cell in np.flatnonzero(state.stones == 0):
                if (int(carrier) >> int(cell)) & 1:
                    continue
                after = their_move.copy().play(int(cell))
                if after.winner == 3 - owner:
                    continue  # a win at once: ruled out before the must-play is asked
                met["pruned"] += 1
                assert not brute.move_wins(their_move, int(cell)), (
                    state.move_names(),
                    owner,
                    int(cell),
                )
    return met


@functools.cache
def side3() -> tuple[tuple[GameState, ...], BruteForce]:
    return reachable_states(Board(3)), BruteForce()


def test_side3_sample() -> None:
    states, brute = side3()
    met = check_claims(random.Random(5).sample(states, 2500), brute)
    assert all(met.values()), met


@pytest.mark.slow
def test_every_side3_position() -> None:
    states, brute = side3()
    met = check_claims(list(states), brute)
    assert all(met.values()), met


@pytest.mark.parametrize(
    "empty",
    [7, 9, pytest.param(11, marks=pytest.mark.slow)],  # 11 empty: ~35 s of brute force
)
def test_side4_late_positions(empty: int) -> None:
    rng = np.random.default_rng(40 + empty)
    met = check_claims(late_positions(Board(4), 60, empty, rng), BruteForce())
    assert met["virtual"] and met["semi"], met


def test_side5_late_positions() -> None:
    rng = np.random.default_rng(50)
    met = check_claims(late_positions(Board(5), 40, 10, rng), BruteForce())
    assert met["virtual"], met


@pytest.mark.parametrize(
    "count", [pytest.param(25, id="sample"), pytest.param(None, marks=pytest.mark.slow, id="all")]
)
def test_side5_test_set(count: int | None) -> None:
    """The solver with H-search on random side-5 positions: the shipped values and moves."""
    test_set = load_test_set(5)
    positions = test_set.positions[:count]
    solver = Solver(test_set.board, connections="hsearch", table_bits=20)
    for position in positions:
        answer = solver.solve(position.state(test_set.board))
        assert answer.win == position.win, position.moves
        if answer.win:
            assert answer.move in position.winning, position.moves
