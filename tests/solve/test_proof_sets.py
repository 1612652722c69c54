"""The solver's proof sets against full minimax: the winner still wins with every empty cell
outside the set given to the loser.

Random late positions of sides 4 and 5 (the swap spent; more under ``--runslow``) are solved
with proof sets on; for each position and each of its children the table holds a proof of,
the set is checked by `brute_force.BruteForce` on the position with every other empty cell
filled by the loser (who must not have won by it). The same positions solved without proof
sets give the same values (`test_late_positions` and `test_exhaustive` check the values).
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import BruteForce, late_positions

from trapy_rl.game import Board, GameState
from trapy_rl.game.state import find_winner
from trapy_rl.solve import Solver


def filled(state: GameState, keep: list[int], colour: int) -> GameState:
    """``state`` (the swap spent) with every empty cell but ``keep`` given to ``colour``."""
    out = GameState(state.board)
    out.stones[:] = state.stones
    out.to_move = state.to_move
    out.history = [-1, -1]
    empty = [int(c) for c in np.flatnonzero(state.stones == 0) if c not in keep]
    out.stones[empty] = colour
    out.winner = find_winner(out.stones, state.board)
    return out


def check(solver: Solver, state: GameState, brute: BruteForce) -> bool:
    """Check the table's proof set of ``state``, if it has one; whether it had one."""
    cells = solver.proof_set(state.stones, state.to_move)
    if cells is None:
        return False
    assert all(state.stones[c] == 0 for c in cells), cells
    win = brute.wins(state)
    winner = state.to_move if win else 3 - state.to_move
    rest = filled(state, cells, 3 - winner)
    assert rest.winner in (0, winner), (state.move_names(), cells)
    assert rest.winner == winner or brute.wins(rest) == win, (state.move_names(), cells)
    return True


@pytest.mark.parametrize(
    ("side", "count", "empty"),
    [(4, 12, 9), (5, 4, 11), pytest.param(4, 30, 11, marks=pytest.mark.slow)],
)
def test_proof_sets_hold_against_minimax(side: int, count: int, empty: int) -> None:
    board = Board(side)
    rng = np.random.default_rng(side * 17 + empty)
    brute = BruteForce()
    checked = smaller = 0
    for state in late_positions(board, count, empty, rng):
        solver = Solver(board, table_bits=16, proof_sets=True)
        plain = Solver(board, table_bits=16, proof_sets=False)
        assert solver.solve(state).win == plain.solve(state).win == brute.wins(state)
        positions = [state] + [state.copy().play(int(a)) for a in np.flatnonzero(state.stones == 0)]
        for position in positions:
            if position.is_over:
                continue
            if check(solver, position, brute):
                checked += 1
                cells = solver.proof_set(position.stones, position.to_move)
                smaller += len(cells) < int((position.stones == 0).sum())
    # Every root's set (and children's where proven) was checked; most leave cells out (else
    # nothing would be pruned).
    assert checked >= count and smaller >= checked // 2, (checked, smaller)


def test_no_proof_sets_without_h_search_or_on_large_boards() -> None:
    state = late_positions(Board(4), 1, 9, np.random.default_rng(1))[0]
    greedy = Solver(Board(4), table_bits=12, connections="greedy")
    greedy.solve(state)
    assert greedy.proof_set(state.stones, state.to_move) is None
    big = late_positions(Board(7), 1, 8, np.random.default_rng(2))[0]  # 70 cells > 64
    solver = Solver(Board(7), table_bits=12)
    solver.solve(big)
    assert solver.proof_set(big.stones, big.to_move) is None
