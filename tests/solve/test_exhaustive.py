"""The solver against full minimax on every position of the smallest boards.

Side 2: all 135 positions reachable from the empty board (the swap included). Side 3: all
225,625 of them under ``--runslow`` (about ten minutes), a random 3,000 in the quick run. Every
claimed win is replayed with `GameState.play` and the position after it solved again: it must
be lost for the opponent (or already won).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

import pytest
from brute_force import BruteForce, reachable_states

from trapy_rl.game import Board, GameState
from trapy_rl.solve import Solver
from trapy_rl.solve.reference import reference_solve

SOLVERS = {
    "dfpn": dict(method="dfpn"),
    "alphabeta": dict(method="alphabeta"),
    "dfpn-shallow": dict(method="dfpn", deep=False),
    "dfpn-greedy": dict(method="dfpn", connections="greedy"),
    "alphabeta-greedy": dict(method="alphabeta", connections="greedy"),
}


@functools.cache
def oracle(side: int) -> tuple[tuple[GameState, ...], BruteForce]:
    brute = BruteForce()
    states = reachable_states(Board(side))
    for state in states:
        brute.wins(state)
    return states, brute


def check_all(solver: Solver, states: Sequence[GameState], brute: BruteForce) -> None:
    for state in states:
        answer = solver.solve(state)
        assert answer.win == brute.wins(state), state.move_names()
        if answer.win:
            child = state.copy().play(answer.move)
            assert child.winner == state.to_move or not solver.solve(child).win, (
                state.move_names(),
                answer.move,
            )
            assert brute.move_wins(state, answer.move)
        else:
            assert answer.move is None


@pytest.mark.parametrize("kind", sorted(SOLVERS))
def test_every_side2_position(kind: str) -> None:
    states, brute = oracle(2)
    assert len(states) == 135
    check_all(Solver(Board(2), **SOLVERS[kind]), states, brute)


@pytest.mark.parametrize("kind", sorted(SOLVERS))
def test_side3_sample(kind: str) -> None:
    states, brute = oracle(3)
    sample = random.Random(3).sample(states, 3000)
    check_all(Solver(Board(3), table_bits=16, **SOLVERS[kind]), sample, brute)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(SOLVERS))
def test_every_side3_position(kind: str) -> None:
    states, brute = oracle(3)
    assert len(states) == 225625
    check_all(Solver(Board(3), table_bits=20, **SOLVERS[kind]), states, brute)


def test_reference_agrees_on_side3_sample() -> None:
    states, brute = oracle(3)
    for state in random.Random(4).sample(states, 1500):
        answer = reference_solve(state)
        assert answer.win == brute.wins(state), state.move_names()
        if answer.win:
            assert brute.move_wins(state, answer.move)


def test_empty_boards() -> None:
    # With the swap the second player wins every board (swap a winning first stone, else
    # answer it); side 2's first stone b1 wins without it (it makes two threats).
    for side in (2, 3, 4):
        board = Board(side)
        solver = Solver(board)
        assert not solver.solve(GameState(board)).win
        assert solver.solve_position(GameState(board).stones, 1, swap=False).win
    opening = GameState.from_moves(["b1"], Board(2))
    assert Solver(Board(2)).solve(opening).move == Board(2).swap_action
