"""The solver against full minimax on late positions of big boards (few empty cells).

Random games of sides 5, 7 and 10 stopped with at most 10 empty cells and no winner; each
answer checked by `brute_force.BruteForce`, each winning move replayed with `GameState.play`
and the position after it solved again.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import BruteForce, late_positions

from trapy_rl.game import Board
from trapy_rl.solve import Solver
from trapy_rl.solve.reference import reference_solve


@pytest.mark.parametrize(
    ("side", "count", "empty"), [(5, 20, 10), (7, 12, 9), (10, 10, 8), (10, 2, 10)]
)
@pytest.mark.parametrize("method", ["dfpn", "alphabeta"])
def test_late_positions_against_minimax(side: int, count: int, empty: int, method: str) -> None:
    board = Board(side)
    rng = np.random.default_rng(side * 100 + empty)
    solver = Solver(board, method=method, table_bits=16)
    brute = BruteForce()
    outcomes = set()
    for state in late_positions(board, count, empty, rng):
        answer = solver.solve(state)
        assert answer.win == brute.wins(state), state.move_names()
        outcomes.add(answer.win)
        if answer.win:
            assert brute.move_wins(state, answer.move)
            child = state.copy().play(answer.move)
            assert child.winner == state.to_move or not solver.solve(child).win
        assert reference_solve(state).win == answer.win
    assert outcomes == {True, False}  # both kinds of answer were checked


def test_late_positions_from_stones() -> None:
    """`solve_position` on the same positions, either colour to move, swap irrelevant."""
    board = Board(6)
    rng = np.random.default_rng(6)
    solver = Solver(board, table_bits=16)
    brute = BruteForce()
    for state in late_positions(board, 15, 9, rng):
        answer = solver.solve_position(state.stones, state.to_move, swap=True)
        assert answer.win == brute.wins(state)
