"""One game of Trap Y with plain, readable rules: the reference the fast engine is tested against.

Players are 1 (blue, moves first) and 2 (yellow). Stones carry their owner's number. The swap
turns blue's first stone yellow on the same cell, after which blue moves again; so a player is
always the same colour here, but the player to move after move two is not fixed by the parity
of the move count.

>>> state = GameState.from_moves(["j1", "swap", "a1"])
>>> state.to_move, int(state.stones[state.board.parse_action("j1")])
(2, 2)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

import numpy as np

from trapy_rl.game.board import Board

__all__ = [
    "BLUE",
    "EMPTY",
    "PLAYER_NAMES",
    "YELLOW",
    "GameState",
    "IllegalMoveError",
    "find_winner",
    "group_of",
    "other",
    "winning_players",
]

EMPTY, BLUE, YELLOW = 0, 1, 2
PLAYER_NAMES = {BLUE: "blue", YELLOW: "yellow"}


def other(player: int) -> int:
    """The opponent of player 1 or 2."""
    return 3 - player


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in this position; the message says why."""


def group_of(stones: np.ndarray, cell: int, board: Board) -> list[int]:
    """Cells of the group containing ``cell`` (breadth-first flood fill).

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow.
        cell: an occupied cell.
    """
    colour = stones[cell]
    seen = {cell}
    queue = deque([cell])
    while queue:
        current = queue.popleft()
        for neighbor in board.neighbors[current]:
            if neighbor >= 0 and neighbor not in seen and stones[neighbor] == colour:
                seen.add(int(neighbor))
                queue.append(int(neighbor))
    return sorted(seen)


def regions_of(cells: Iterable[int], board: Board) -> int:
    """Region mask touched by a set of cells: the OR of their region masks."""
    mask = 0
    for cell in cells:
        mask |= int(board.region_masks[cell])
    return mask


def winning_players(stones: np.ndarray, board: Board | None = None) -> set[int]:
    """The players with a winning group, by flood fill of every group (slow reference).

    Args:
        stones: [K] int (any integer dtype), 0 empty, 1 blue, 2 yellow.
    """
    board = board or Board(_side_of(len(stones)))
    seen = np.zeros(board.num_cells, dtype=bool)
    winners: set[int] = set()
    for cell in range(board.num_cells):
        if stones[cell] == EMPTY or seen[cell]:
            continue
        group = group_of(stones, cell, board)
        seen[group] = True
        if board.win_table[regions_of(group, board)]:
            winners.add(int(stones[cell]))
    return winners


def find_winner(stones: np.ndarray, board: Board | None = None) -> int:
    """Winner of any position: 1, 2, or 0 when nobody has a winning group (slow reference).

    At most one player can have a winning group on any board (a winning group separates the
    opponent from the regions it would need), so the answer is unique.

    Args:
        stones: [K] int (any integer dtype), 0 empty, 1 blue, 2 yellow.
    """
    winners = winning_players(stones, board)
    assert len(winners) <= 1, "both players have a winning group"
    return winners.pop() if winners else 0


def _side_of(num_cells: int) -> int:
    for side in range(2, 1000):
        if side * (3 * side - 1) // 2 == num_cells:
            return side
    raise ValueError(f"{num_cells} cells is no Trap Y board size")


class GameState:
    """One game: the position, whose turn, the history and the result.

    Attributes:
        board: the geometry.
        stones: [K] int8, 0 empty, 1 blue, 2 yellow.
        to_move: player to move, 1 or 2 (the player who would have moved once the game is over).
        winner: 0 while the game goes on, else the winning player.
        history: the actions played, as indices (the swap is ``board.swap_action``).
        resigned: True when the game ended by resignation.
    """

    def __init__(self, board: Board | None = None, *, side: int | None = None) -> None:
        if board is not None and side is not None and board.side != side:
            raise ValueError(f"board of side {board.side} given with side={side}")
        self.board = board if board is not None else Board(side if side is not None else 10)
        self.stones = np.zeros(self.board.num_cells, dtype=np.int8)
        self.to_move = BLUE
        self.winner = 0
        self.history: list[int] = []
        self.resigned = False

    @classmethod
    def from_moves(cls, moves: Sequence[str | int], board: Board | None = None) -> GameState:
        """Play ``moves`` (names or indices) from the empty board; raises on an illegal one."""
        state = cls(board)
        for move in moves:
            state.play(move)
        return state

    # ------------------------------------------------------------------ queries
    @property
    def move_count(self) -> int:
        return len(self.history)

    @property
    def is_over(self) -> bool:
        return self.winner != 0

    @property
    def swap_allowed(self) -> bool:
        """The swap is legal only as the second move of the game, for yellow."""
        return not self.is_over and self.move_count == 1 and self.to_move == YELLOW

    def legal_mask(self) -> np.ndarray:
        """[A] bool: the legal actions (all False once the game is over)."""
        mask = np.zeros(self.board.num_actions, dtype=bool)
        if not self.is_over:
            mask[: self.board.num_cells] = self.stones == EMPTY
            mask[self.board.swap_action] = self.swap_allowed
        return mask

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.legal_mask()).tolist()

    def winning_group(self) -> list[int]:
        """Cells of the winner's winning group (empty when none, or after a resignation)."""
        if not self.winner or self.resigned:
            return []
        seen: set[int] = set()
        for cell in np.flatnonzero(self.stones == self.winner):
            if int(cell) in seen:
                continue
            group = group_of(self.stones, int(cell), self.board)
            seen.update(group)
            if self.board.win_table[regions_of(group, self.board)]:
                return group
        raise AssertionError("the winner has no winning group")  # pragma: no cover

    @property
    def last_action(self) -> int | None:
        return self.history[-1] if self.history else None

    # ------------------------------------------------------------------ moves
    def check_move(self, action: str | int) -> int:
        """The action index of ``action`` if it is legal now; else raise IllegalMoveError."""
        try:
            index = self.board.parse_action(action)
        except ValueError as error:
            raise IllegalMoveError(str(error)) from None
        name = self.board.action_name(index)
        if self.is_over:
            raise IllegalMoveError(f"{name}: the game is over ({PLAYER_NAMES[self.winner]} won)")
        if index == self.board.swap_action:
            if not self.swap_allowed:
                raise IllegalMoveError(
                    "swap: not allowed now; only yellow may swap, as the second move"
                )
        elif self.stones[index] != EMPTY:
            raise IllegalMoveError(
                f"{name}: the cell is occupied by {PLAYER_NAMES[int(self.stones[index])]}"
            )
        return index

    def play(self, action: str | int) -> GameState:
        """Play one move (a name or an index) for the player to move; returns self."""
        index = self.check_move(action)
        mover = self.to_move
        if index == self.board.swap_action:
            (first,) = np.flatnonzero(self.stones)
            self.stones[first] = YELLOW
        else:
            self.stones[index] = mover
            group = group_of(self.stones, index, self.board)
            if self.board.win_table[regions_of(group, self.board)]:
                self.winner = mover
        self.history.append(index)
        self.to_move = other(mover)
        return self

    def resign(self, player: int | None = None) -> GameState:
        """``player`` (default: the player to move) resigns; the other player wins."""
        if self.is_over:
            raise IllegalMoveError("resign: the game is over")
        player = self.to_move if player is None else player
        if player not in (BLUE, YELLOW):
            raise ValueError(f"player must be 1 (blue) or 2 (yellow), got {player!r}")
        self.winner = other(player)
        self.resigned = True
        return self

    def copy(self) -> GameState:
        clone = GameState.__new__(GameState)
        clone.board = self.board
        clone.stones = self.stones.copy()
        clone.to_move = self.to_move
        clone.winner = self.winner
        clone.history = list(self.history)
        clone.resigned = self.resigned
        return clone

    def move_names(self) -> list[str]:
        return [self.board.action_name(a) for a in self.history]

    def __repr__(self) -> str:
        status = f"winner={self.winner}" if self.winner else f"to_move={self.to_move}"
        return f"GameState(side={self.board.side}, moves={self.move_count}, {status})"
