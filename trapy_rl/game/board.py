"""Board geometry of Trap Y: cells, axial coordinates, neighbours, regions, names, mirror.

The board of side ``n`` is half of a hex-hex board of side ``n`` cut along its long diagonal:
``n`` rows, the bottom row (the cut) holding ``2n - 1`` cells and each row above one fewer.
Everything here is fixed by ``docs/rules.md``; side 10 (145 cells) is Trap Y.

Legend used in shapes throughout the package: K cells, A = K + 1 actions (the last is the
swap), H x W the rectangular grid embedding (H = n rows, W = 2n - 1 columns).

>>> board = Board()
>>> board.num_cells, board.num_actions, board.swap_action
(145, 146, 145)
>>> board.cell_name(0), board.cell_name(18), board.cell_name(19), board.cell_name(144)
('a1', 's1', 'a2', 'j10')
>>> board.parse_action("J10"), board.parse_action("swap")
(144, 145)
"""

from __future__ import annotations

import functools
import re

import numpy as np

__all__ = ["MAX_SIDE", "REGION_COLORS", "REGION_NAMES", "Board", "quote", "winning_region_sets"]

# Region k is bit k of a cell's region mask, in the counter-clockwise cycle of docs/rules.md.
REGION_NAMES: tuple[str, ...] = ("bottom-left", "bottom-right", "right", "top", "left")
REGION_COLORS: tuple[str, ...] = ("#1fb5ad", "#d62728", "#8e44ad", "#1e6b34", "#b5651d")
NUM_REGIONS = len(REGION_NAMES)

# The six axial directions (dq, dr), in a fixed order used by `Board.neighbors`.
HEX_DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))

MAX_SIDE = 40
"""Largest board side anywhere in the toolkit (boards, training, checkpoints, GTP, trapy-play):
far above any board studied, far below one whose arrays would overflow int16 cell indices."""

_ACTION_RE = re.compile(r"^([a-z]+)([0-9]+)$")


def quote(text: str, limit: int = 40) -> str:
    """``text`` quoted for a one-line message (repr escapes newlines), cut after ``limit``."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def winning_region_sets() -> np.ndarray:
    """Return the win table: ``table[mask]`` is True when a group touching ``mask`` wins.

    A group wins when it touches four or more regions, or three of which at least one is
    adjacent (in the region cycle) to neither of the other two: ``{k, k+1, k+3} mod 5``.

    Returns:
        [32] bool.
    """
    table = np.zeros(1 << NUM_REGIONS, dtype=bool)
    for mask in range(1 << NUM_REGIONS):
        members = [k for k in range(NUM_REGIONS) if mask >> k & 1]
        if len(members) >= 4:
            table[mask] = True
        elif len(members) == 3:
            # Wins unless some member is adjacent to both others (three consecutive regions);
            # equivalently, wins when one member is adjacent to neither of the others.
            def adjacent(a: int, b: int) -> bool:
                return (a - b) % NUM_REGIONS in (1, NUM_REGIONS - 1)

            table[mask] = any(not any(adjacent(k, j) for j in members if j != k) for k in members)
    return table


def _column_letters(column: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'aa' (spreadsheet style, for sides above 13)."""
    letters = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _column_index(letters: str) -> int:
    column = 0
    for ch in letters:
        column = column * 26 + (ord(ch) - ord("a") + 1)
    return column - 1


class Board:
    """The geometry of one board size; immutable, cached per side (``Board(10) is Board(10)``).

    Attributes:
        side: n, the board's side (10 for Trap Y).
        num_cells: K = n(3n - 1)/2.
        num_actions: A = K + 1.
        swap_action: K, the action index of the swap.
        coords: [K, 2] int16, axial (q, r) of each cell; r = 0 is the bottom row.
        neighbors: [K, 6] int16, neighbour cell indices padded with -1, in `HEX_DIRECTIONS` order.
        num_neighbors: [K] int8.
        region_masks: [K] uint8, bit k set when the cell is adjacent to region k.
        win_table: [32] bool, see `winning_region_sets`.
        grid_shape: (H, W) = (n, 2n - 1), the rectangular embedding used for planes.
        grid_rows, grid_cols: [K] int16, the cell's row (r) and column (q + n - 1) in the grid.
        grid_to_cell: [H, W] int16, the cell at each grid point or -1 off the board.
        mirror_cells: [K] int16, the cell index of each cell's mirror image.
        mirror_actions: [A] int16, the same for actions (the swap maps to itself).
        names: tuple of K cell names.
        max_name_length: the length of the longest cell name.
    """

    side: int
    num_cells: int
    num_actions: int
    swap_action: int
    coords: np.ndarray
    neighbors: np.ndarray
    num_neighbors: np.ndarray
    region_masks: np.ndarray
    win_table: np.ndarray
    grid_shape: tuple[int, int]
    grid_rows: np.ndarray
    grid_cols: np.ndarray
    grid_to_cell: np.ndarray
    mirror_cells: np.ndarray
    mirror_actions: np.ndarray
    names: tuple[str, ...]
    max_name_length: int

    def __new__(cls, side: int = 10) -> Board:
        return _board_of_side(_check_side(side))

    def __reduce__(self):  # pickle by side: boards are singletons
        return (Board, (self.side,))

    def __repr__(self) -> str:
        return f"Board(side={self.side})"

    # ------------------------------------------------------------------ cells and names
    def cell_index(self, q: int, r: int) -> int:
        """Cell index of axial (q, r); raises ValueError off the board."""
        if not (0 <= r < self.side and -(self.side - 1) <= q <= self.side - 1 - r):
            raise ValueError(f"({q}, {r}) is not a cell of the side-{self.side} board")
        return int(self.grid_to_cell[r, q + self.side - 1])

    def cell_name(self, cell: int) -> str:
        """Name of a cell index, such as 'a1' or 'j10'."""
        if not 0 <= cell < self.num_cells:
            raise ValueError(f"cell index {cell} is out of range 0..{self.num_cells - 1}")
        return self.names[cell]

    def action_name(self, action: int) -> str:
        """Name of an action index: a cell name, or 'swap'."""
        if action == self.swap_action:
            return "swap"
        if not 0 <= action < self.num_cells:
            raise ValueError(f"action {action} is out of range 0..{self.num_actions - 1}")
        return self.names[action]

    def parse_action(self, text: str | int) -> int:
        """Action index of a move name ('a1', 'J10', 'swap'; case-insensitive) or index.

        Raises:
            ValueError: naming the text when it is neither a cell of this board nor 'swap'.
        """
        if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
            if not 0 <= text < self.num_actions:
                raise ValueError(
                    f"action {text} is out of range 0..{self.num_actions - 1} "
                    f"on the side-{self.side} board"
                )
            return int(text)
        if not isinstance(text, str):
            raise ValueError(f"a move is a cell name, 'swap' or an index, not {text!r}")
        key = text.strip().lower()
        if key == "swap":
            return self.swap_action
        match = _ACTION_RE.match(key)
        if match is None:
            raise ValueError(
                f"{quote(text)} is not a move: expected a cell name like 'a1' or 'swap'"
            )
        # A name longer than every cell's is refused unparsed: the column number of n letters
        # is a big integer whose arithmetic costs time growing as n squared.
        on_board = len(key) <= self.max_name_length
        if on_board:
            column, row = _column_index(match.group(1)), int(match.group(2)) - 1
            on_board = 0 <= row < self.side and 0 <= column < 2 * self.side - 1 - row
        if not on_board:
            raise ValueError(f"{quote(text)} is not a cell of the side-{self.side} board")
        return int(self.grid_to_cell[row, column])

    def cells_of_region(self, region: int) -> np.ndarray:
        """[10] int: the cells adjacent to region ``region`` (a bit index 0..4)."""
        return np.flatnonzero(self.region_masks >> region & 1)


def _check_side(side: int) -> int:
    if isinstance(side, bool) or not isinstance(side, (int, np.integer)) or side < 2:
        raise ValueError(f"board side must be an integer from 2 to {MAX_SIDE}, got {side!r}")
    if side > MAX_SIDE:
        raise ValueError(f"board side must be an integer from 2 to {MAX_SIDE}, got {side}")
    return int(side)


@functools.cache
def _board_of_side(side: int) -> Board:
    board = object.__new__(Board)
    n = side
    coords = [(q, r) for r in range(n) for q in range(-(n - 1), n - r)]
    num_cells = len(coords)
    assert num_cells == n * (3 * n - 1) // 2
    height, width = n, 2 * n - 1
    grid_to_cell = np.full((height, width), -1, dtype=np.int16)
    for i, (q, r) in enumerate(coords):
        grid_to_cell[r, q + n - 1] = i

    def lookup(q: int, r: int) -> int:
        if 0 <= r < height and 0 <= q + n - 1 < width:
            return int(grid_to_cell[r, q + n - 1])
        return -1

    neighbors = np.array(
        [[lookup(q + dq, r + dr) for dq, dr in HEX_DIRECTIONS] for q, r in coords], dtype=np.int16
    )
    # Compact each row so the real neighbours come first and the -1 padding last.
    neighbors = np.array([sorted(row, key=lambda c: c < 0) for row in neighbors], dtype=np.int16)

    region_masks = np.zeros(num_cells, dtype=np.uint8)
    for i, (q, r) in enumerate(coords):
        in_region = (
            r == 0 and q <= 0,  # bottom-left
            r == 0 and q >= 0,  # bottom-right
            q + r == n - 1,  # right
            r == n - 1,  # top
            q == -(n - 1),  # left
        )
        region_masks[i] = sum(1 << k for k, inside in enumerate(in_region) if inside)

    mirror_cells = np.array([lookup(-q - r, r) for q, r in coords], dtype=np.int16)
    coords_arr = np.array(coords, dtype=np.int16)

    names = tuple(f"{_column_letters(q + n - 1)}{r + 1}" for q, r in coords)
    fields = dict(
        side=n,
        num_cells=num_cells,
        num_actions=num_cells + 1,
        swap_action=num_cells,
        coords=coords_arr,
        neighbors=neighbors,
        num_neighbors=(neighbors >= 0).sum(axis=1).astype(np.int8),
        region_masks=region_masks,
        win_table=winning_region_sets(),
        grid_shape=(height, width),
        grid_rows=coords_arr[:, 1].copy(),
        grid_cols=(coords_arr[:, 0] + n - 1).astype(np.int16),
        grid_to_cell=grid_to_cell,
        mirror_cells=mirror_cells,
        mirror_actions=np.append(mirror_cells, np.int16(num_cells)).astype(np.int16),
        names=names,
        max_name_length=max(len(name) for name in names),
    )
    for key, value in fields.items():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        object.__setattr__(board, key, value)
    return board
