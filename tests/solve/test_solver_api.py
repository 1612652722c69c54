"""The solver's entry points: the swap as the rules allow it, positions from stones, mirror
images, a policy to order the root, the node budget, and bad input refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import late_positions

from trapy_rl.game import Board, GameState
from trapy_rl.solve import SolveBudgetError, Solver


def test_swap_exactly_as_the_rules_allow() -> None:
    board = Board(3)
    solver = Solver(board)
    for cell in range(board.num_cells):
        opening = GameState(board).play(cell)
        with_swap = solver.solve(opening)  # yellow to move, the swap legal
        without = solver.solve_position(opening.stones, 2, swap=False)
        assert with_swap.win  # the second player always wins with the swap
        # The swap wins exactly when the stone wins for its owner.
        assert (with_swap.move == board.swap_action) == (not without.win)
        # The same stones as a later position (move three or after): no swap.
        assert solver.solve_position(opening.stones, 2, swap=True).win
    # Once the second move is past, the swap is gone: after the swap it is blue to move.
    swapped = GameState.from_moves(["b2", "swap"], board)
    stones = swapped.stones
    assert solver.solve(swapped).win == solver.solve_position(stones, 1, swap=False).win


def test_empty_board_swap_rule() -> None:
    board = Board(3)
    solver = Solver(board)
    empty = np.zeros(board.num_cells, np.int8)
    assert not solver.solve_position(empty, 1, swap=True).win
    first = solver.solve_position(empty, 1, swap=False)
    assert first.win  # without the swap the first player wins (strategy stealing)
    after = GameState(board)
    after.history = [-1, -1]  # past the swap's turn
    after.play(first.move)
    assert not solver.solve(after).win


def test_mirror_images_have_mirrored_answers() -> None:
    board = Board(5)
    solver = Solver(board, table_bits=18)
    for state in late_positions(board, 8, 14, np.random.default_rng(5)):
        answer = solver.solve(state)
        assert answer.nodes > 0
        mirrored = solver.solve_position(state.stones[board.mirror_cells], state.to_move)
        assert mirrored.win == answer.win
        assert mirrored.nodes <= 1  # found in the table under the same key
        if answer.win:  # the mirror of the winning move wins the mirror image
            image = GameState(board)
            image.stones[:] = state.stones[board.mirror_cells]
            image.to_move, image.history = state.to_move, [-1, -1]
            image.play(int(board.mirror_cells[answer.move]))
            assert image.winner == state.to_move or not Solver(board).solve(image).win


def test_a_policy_orders_the_root_and_changes_no_value() -> None:
    board = Board(4)
    calls = []

    def policy(stones: np.ndarray, to_move: int) -> np.ndarray:
        calls.append((stones.copy(), to_move))
        return -np.arange(board.num_actions, dtype=float)  # prefers low cells

    plain, guided = Solver(board), Solver(board, policy=policy)
    for name in ("a1", "b2", "d1"):
        state = GameState.from_moves([name], board)
        assert plain.solve(state).win == guided.solve(state).win
    assert calls and calls[0][1] == 2
    bad = Solver(board, policy=lambda stones, to_move: np.zeros(3))
    with pytest.raises(ValueError, match="the policy returned shape"):
        bad.solve(GameState.from_moves(["a1"], board))


def test_budget_and_bad_input() -> None:
    board = Board(5)
    solver = Solver(board, table_bits=16)
    with pytest.raises(SolveBudgetError, match="not proven within 50 positions"):
        solver.solve(GameState.from_moves(["c3"], board), max_nodes=50)
    with pytest.raises(ValueError, match=r"stones must have shape \(35,\)"):
        solver.solve_position(np.zeros(5, np.int8), 1)
    with pytest.raises(ValueError, match="stones must hold 0"):
        solver.solve_position(np.full(35, 3), 1)
    with pytest.raises(ValueError, match="to_move must be 1"):
        solver.solve_position(np.zeros(35, np.int8), 0)
    with pytest.raises(ValueError, match="a side-4 game given to a side-5 solver"):
        solver.solve(GameState(Board(4)))
    for kwargs, message in [
        (dict(method="minimax"), "method must be one of"),
        (dict(table_bits=40), "table_bits must be an integer from 4 to 30"),
        (dict(eps=-1.0), "eps must be >= 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            Solver(board, **kwargs)


def test_finished_games() -> None:
    board = Board(3)
    state = GameState.from_moves(["c1", "a1", "c2", "a2", "c3"], board)
    assert state.winner == 1
    answer = Solver(board).solve(state)
    assert not answer.win and answer.move is None and answer.nodes == 0
    assert Solver(board).solve_position(state.stones, 1).win
