"""The solver's slow twin: the same search in plain Python on `GameState`, for the tests.

A depth-first win/loss search with a dict for a table and the kernel's pruning written out
with the engine's own code (`GameState.play`, `group_of`, `winning_players`): a move that wins
at once; two cells where the opponent would win at once lose, one is the only move worth
trying; dead cells are never played; a position equal to its mirror image tries one cell of
each mirror pair. It shares no code with `trapy_rl.solve.kernel`, so agreement between the two
checks both. Fast enough for sides 2 and 3 and for late positions of any side.

>>> from trapy_rl.game import Board, GameState
>>> reference_solve(GameState.from_moves(["b2"], Board(3))).win
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.state import EMPTY, GameState, group_of, other, winning_players

__all__ = ["ReferenceSolution", "dead_cells", "reference_solve", "winning_cells"]


@dataclass(frozen=True)
class ReferenceSolution:
    """win: the player to move wins; move: a winning action or None; nodes: positions expanded."""

    win: bool
    move: int | None
    nodes: int


def winning_cells(stones: np.ndarray, player: int, board: Board) -> list[int]:
    """The empty cells where a stone of ``player`` would make a winning group.

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow; not modified.
    """
    cells = []
    for cell in np.flatnonzero(stones == EMPTY):
        trial = stones.copy()
        trial[cell] = player
        if player in winning_players(trial, board):
            cells.append(int(cell))
    return cells


def dead_cells(stones: np.ndarray, board: Board) -> set[int]:
    """Empty cells whose colour can change no group's regions, whoever fills them.

    A cell is dead when none of its neighbours is empty and, for each colour, it touches at
    most one group of that colour, whose regions already include the cell's.

    Args:
        stones: [K] int8, 0 empty, 1 blue, 2 yellow.
    """
    dead = set()
    for cell in np.flatnonzero(stones == EMPTY):
        neighbours = [int(y) for y in board.neighbors[cell] if y >= 0]
        if any(stones[y] == EMPTY for y in neighbours):
            continue
        ok = True
        for colour in (1, 2):
            groups = {tuple(group_of(stones, y, board)) for y in neighbours if stones[y] == colour}
            if len(groups) > 1:
                ok = False
            elif groups:
                group_regions = 0
                for y in groups.pop():
                    group_regions |= int(board.region_masks[y])
                ok = ok and (int(board.region_masks[cell]) & ~group_regions) == 0
        if ok:
            dead.add(int(cell))
    return dead


def reference_solve(state: GameState) -> ReferenceSolution:
    """The value of ``state`` for its player to move, with a winning move when it wins."""
    table: dict[tuple, tuple[bool, int | None]] = {}
    nodes = [0]
    if state.is_over:
        return ReferenceSolution(state.winner == state.to_move, None, 0)
    win, move = _search(state, table, nodes)
    return ReferenceSolution(win, move, nodes[0])


def _key(state: GameState) -> tuple:
    # The swap's legality is part of the position: it depends on the move count.
    return state.stones.tobytes(), state.to_move, state.move_count == 0, state.swap_allowed


def _search(state: GameState, table: dict, nodes: list[int]) -> tuple[bool, int | None]:
    key = _key(state)
    if key in table:
        return table[key]
    nodes[0] += 1
    result = _prune(state)
    if result is None:
        result = (False, None)
        for action in _moves(state):
            child = state.copy().play(action)
            if child.is_over or not _search(child, table, nodes)[0]:
                result = (True, action)
                break
    table[key] = result
    return result


def _prune(state: GameState) -> tuple[bool, int | None] | None:
    """The value when one move decides it: a win at once, or two threats of the opponent."""
    mine = winning_cells(state.stones, state.to_move, state.board)
    if mine:
        return True, mine[0]
    theirs = winning_cells(state.stones, other(state.to_move), state.board)
    if not state.swap_allowed and len(theirs) >= 2:
        return False, None
    return None


def _moves(state: GameState) -> list[int]:
    """The actions worth trying: the swap where legal, then the forced block, or every live
    cell (one of each mirror pair in a symmetric position)."""
    board, stones = state.board, state.stones
    if state.swap_allowed:
        return [board.swap_action, *_cells(stones, board)]
    threats = winning_cells(stones, other(state.to_move), board)
    if threats:
        return threats
    return _cells(stones, board)


def _cells(stones: np.ndarray, board: Board) -> list[int]:
    dead = dead_cells(stones, board)
    symmetric = bool((stones == stones[board.mirror_cells]).all())
    return [
        int(c)
        for c in np.flatnonzero(stones == EMPTY)
        if int(c) not in dead and not (symmetric and board.mirror_cells[c] < c)
    ]
