"""The board as text, and the checks of what any picture of a position shows.

`render_ascii` lays the board out like docs/rules.md's diagram: row 10 on top, each row shifted half
a cell, so a cell's text column is an affine function of its hexagon's centre in
`trapy_rl.game.geometry`. The input checks (`check_stones`, `parse_cells`, `last_move_cell`)
are shared with the matplotlib pictures of `trapy_rl.game.draw`. Only numpy is imported.

Shapes: K cells. ``stones`` is [K] int (0 empty, 1 blue, 2 yellow).

>>> stones = np.array([1, 0, 2, 0, 1], np.int8)  # a1 blue, c1 yellow, b2 blue
>>> print(render_ascii(stones, Board(2), last_action="b2", winning_cells=["a1"]))
2  .[B]
1 b . Y
  a b c
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from trapy_rl.game.board import Board

if TYPE_CHECKING:
    from trapy_rl.game.state import GameState

__all__ = ["check_stones", "last_move_cell", "parse_cells", "render_ascii", "render_state_ascii"]

_ANSI = {1: "\x1b[1;94m", 2: "\x1b[1;93m"}
_ANSI_WIN, _ANSI_RESET = "\x1b[4m", "\x1b[0m"


# ---------------------------------------------------------------------- input checks
def check_stones(stones: Any, board: Board) -> np.ndarray:
    """The stones of one position, checked against the board.

    Args:
        stones: [K] int (any integer dtype, or a list): 0 empty, 1 blue, 2 yellow.
        board: the board.

    Returns:
        [K] int8, a copy.

    Raises:
        ValueError: naming the wrong shape, or values other than integers 0, 1, 2.
    """
    stones = np.asarray(stones)
    if stones.shape != (board.num_cells,):
        raise ValueError(
            f"stones must have shape ({board.num_cells},) for the side-{board.side} board, "
            f"got {stones.shape}"
        )
    if not np.issubdtype(stones.dtype, np.integer) or not np.isin(stones, (0, 1, 2)).all():
        raise ValueError("stones must be integers 0 (empty), 1 (blue) or 2 (yellow)")
    return stones.astype(np.int8)


def parse_cells(cells: Iterable[int | str] | None, board: Board, what: str) -> list[int]:
    """Cell indices of cells given by index or name (``None``: no cells).

    Args:
        cells: cell indices (int or numpy integer) or names such as ``"a1"``; may be None.
        board: the board.
        what: the argument's name, for the error message.

    Returns:
        The cell indices, in the order given.

    Raises:
        ValueError: naming ``what`` when an entry is not a cell of the board or is the swap.
    """
    out = []
    for cell in cells if cells is not None else ():
        index = board.parse_action(cell.item() if isinstance(cell, np.generic) else cell)
        if index == board.swap_action:
            raise ValueError(f"{what}: the swap is not a cell")
        out.append(index)
    return out


def last_move_cell(last_action: int | str | None, stones: np.ndarray, board: Board) -> int | None:
    """The cell to mark as the last move: a placement's cell, or the swapped stone's cell.

    Args:
        last_action: action index or name of the last move; None or -1 for none.
        stones: [K] int, the position after that move (after a swap it holds one stone).
        board: the board.

    Returns:
        A cell index, or None when there is no last move.

    Raises:
        ValueError: when ``last_action`` is not an action, or is the swap while the board does
            not hold exactly one stone.
    """
    if last_action is None or (isinstance(last_action, (int, np.integer)) and last_action == -1):
        return None
    action = board.parse_action(last_action)
    if action != board.swap_action:
        return action
    occupied = np.flatnonzero(stones)
    if len(occupied) != 1:
        raise ValueError(f"last_action is the swap but {len(occupied)} stones are on the board")
    return int(occupied[0])


# ---------------------------------------------------------------------- ASCII
def render_ascii(
    stones: np.ndarray,
    board: Board,
    *,
    last_action: int | str | None = None,
    winning_cells: Iterable[int | str] | None = None,
    show_names: bool = False,
    color: bool = False,
) -> str:
    """The board as text, laid out like docs/rules.md's diagram (row 10 on top, row 1 last).

    Symbols: ``.`` empty, ``B`` blue, ``Y`` yellow; stones of the winning group in lowercase
    (``b``, ``y``); the last move in brackets (``[B]``). Row numbers run down the left, column
    letters under the bottom row. With ``show_names`` empty cells show their names.

    Args:
        stones: [K] int, 0 empty, 1 blue, 2 yellow.
        board: the board.
        last_action: action index or name of the last move (the swap marks the swapped stone);
            None or -1 for none.
        winning_cells: cells (indices or names) of the winning group.
        show_names: write each empty cell's name instead of ``.`` (cells 4 characters wide).
        color: ANSI colours for the stones (blue, yellow; the winning group underlined).

    Returns:
        ``n + 1`` lines joined by newlines (n the board's side), trailing spaces stripped: one
        line per row, then the column letters. Cells are 2 characters wide (4 with
        ``show_names`` or two-letter columns).

    Raises:
        ValueError: from `check_stones`, `parse_cells` and `last_move_cell`.
    """
    stones = check_stones(stones, board)
    last = last_move_cell(last_action, stones, board)
    winning = set(parse_cells(winning_cells, board, "winning_cells"))
    n = board.side
    width = 4 if show_names or 2 * n - 1 > 26 else 2  # two-letter columns need the room
    label = len(str(n)) + 1
    lines = []
    for r in range(n - 1, -1, -1):
        cells = board.grid_to_cell[r, : 2 * n - 1 - r]
        chars = [" "] * (label + r * width // 2 + width * len(cells) + 1)
        chars[: label - 1] = f"{r + 1:>{label - 1}}"
        for i, cell in enumerate(cells):
            anchor = label + r * width // 2 + width * i + width - 2
            colour = int(stones[cell])
            text = ".BY"[colour] if colour or not show_names else board.names[cell]
            if cell in winning and colour:
                text = text.lower()
            for offset, ch in enumerate(text):
                chars[anchor - len(text) + 1 + offset] = ch
            if color and colour:
                underline = _ANSI_WIN if cell in winning else ""
                chars[anchor] = f"{_ANSI[colour]}{underline}{chars[anchor]}{_ANSI_RESET}"
            if cell == last:
                chars[anchor - len(text)], chars[anchor + 1] = "[", "]"
        lines.append("".join(chars).rstrip())
    letters = [" "] * len(lines[-1] + "  ")
    for i, cell in enumerate(board.grid_to_cell[0, : 2 * n - 1]):
        column = board.names[cell].rstrip("0123456789")
        anchor = label + width * i + width - 2
        letters[anchor - len(column) + 1 : anchor + 1] = column
    lines.append("".join(letters).rstrip())
    return "\n".join(lines)


def render_state_ascii(state: GameState) -> str:
    """`render_ascii` of a game: its last move marked, its winning group (if any) shown."""
    return render_ascii(
        state.stones,
        state.board,
        last_action=state.last_action,
        winning_cells=state.winning_group() or None,
    )
