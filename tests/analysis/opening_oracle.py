"""Exact opening values of small boards by brute-force game-tree search (the test oracle).

Plain and slow on purpose: memoized minimax over stone tuples with `find_winner`, the
reference win test of `trapy_rl.game.state`, and no swap (the positions searched are past it).
"""

from __future__ import annotations

import functools

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, YELLOW, find_winner, other


def mover_wins(stones: tuple[int, ...], to_move: int, board: Board) -> bool:
    """True when the player to move wins with perfect play (no swap; the game is not over)."""
    return _solve(board.side)(stones, to_move)


@functools.cache
def _solve(side: int):
    board = Board(side)

    @functools.cache
    def wins(stones: tuple[int, ...], to_move: int) -> bool:
        for cell, stone in enumerate(stones):
            if stone:
                continue
            after = (*stones[:cell], to_move, *stones[cell + 1 :])
            if find_winner(np.array(after, dtype=np.int8), board) == to_move:
                return True
            if not wins(after, other(to_move)):
                return True
        return False

    return wins


def exact_stone_values(board: Board) -> np.ndarray:
    """[K] float: v(c) = 1 if the owner of a lone stone on c wins with the opponent to move.

    Computed directly from "blue stone on c, yellow to move, no swap", a position the engine
    cannot reach, so it checks the colour-symmetry argument of `swapped_openings` too.
    """
    values = np.zeros(board.num_cells)
    for cell in range(board.num_cells):
        stones = [0] * board.num_cells
        stones[cell] = BLUE
        values[cell] = 0.0 if mover_wins(tuple(stones), YELLOW, board) else 1.0
    return values
