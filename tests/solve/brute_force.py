"""An obviously correct oracle for the solver tests: minimax over every legal move.

Written from `GameState` alone (its legal moves, `play` and the winner it records), with no
pruning but a memo of positions already valued: a position is won for the player to move when
some legal move wins at once or leads to a position lost for the opponent.
"""

from __future__ import annotations

import functools

import numpy as np

from trapy_rl.game import Board, GameState
from trapy_rl.game.sampling import random_legal_actions


def key(state: GameState) -> tuple:
    """The position: stones, player to move, and what the swap rule still allows."""
    return state.stones.tobytes(), state.to_move, state.move_count == 0, state.swap_allowed


class BruteForce:
    """``wins(state)``: the exact value for the player to move, by full minimax."""

    def __init__(self) -> None:
        self.memo: dict[tuple, bool] = {}

    def wins(self, state: GameState) -> bool:
        if state.is_over:
            return state.winner == state.to_move
        k = key(state)
        if k not in self.memo:
            self.memo[k] = any(self.move_wins(state, a) for a in state.legal_actions())
        return self.memo[k]

    def move_wins(self, state: GameState, action: int) -> bool:
        """Whether ``action`` wins for the player to move in ``state``."""
        child = state.copy().play(action)
        return child.winner == state.to_move or (not child.is_over and not self.wins(child))


@functools.cache
def reachable_states(board: Board) -> tuple[GameState, ...]:
    """Every position without a winner reachable from the empty board, once each (cached:
    side 3 has 225,625 and takes half a minute; treat them as read-only)."""
    seen: dict[tuple, GameState] = {}
    stack = [GameState(board)]
    while stack:
        state = stack.pop()
        k = key(state)
        if k in seen:
            continue
        seen[k] = state
        for action in state.legal_actions():
            child = state.copy().play(action)
            if not child.is_over:
                stack.append(child)
    return tuple(seen.values())


def late_positions(
    board: Board, count: int, empty: int, rng: np.random.Generator
) -> list[GameState]:
    """``count`` positions of random games with ``empty`` empty cells and no winner yet."""
    found: list[GameState] = []
    while len(found) < count:
        state = GameState(board)
        while not state.is_over and (state.stones == 0).sum() > empty:
            legal = state.legal_mask()[None, :]
            state.play(int(random_legal_actions(legal, rng)[0]))
        if not state.is_over:
            found.append(state)
    return found
