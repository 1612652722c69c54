"""Pictures of the board: an ASCII diagram, a matplotlib drawing, and per-cell heatmaps.

The drawing uses pointy-top hexagons of width 1: cell (q, r) is centred at
``x = q + r / 2, y = r * sqrt(3) / 2``, so each row sits half a cell right of the row below and
the long edge (row 1, ``a1 .. s1``) is at the bottom, as in RULES.md's diagram. The five
perimeter regions are coloured bands along the outer edges, in `REGION_COLORS`.

Matplotlib is imported inside the functions (Agg canvas only, never pyplot), so importing the
package stays fast and no window ever opens.

Shapes: K cells. ``stones`` is [K] int (0 empty, 1 blue, 2 yellow); ``values`` is [K] float.

>>> stones = np.array([1, 0, 2, 0, 1], np.int8)  # a1 blue, c1 yellow, b2 blue
>>> print(render_ascii(stones, Board(2), last_action="b2", winning_cells=["a1"]))
2  .[B]
1 b . Y
  a b c
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from trapy_rl.game.board import HEX_DIRECTIONS, NUM_REGIONS, REGION_COLORS, Board

__all__ = [
    "STONE_COLORS",
    "board_image",
    "cell_centers",
    "draw_board",
    "hexagon_corners",
    "render_ascii",
    "save_board",
]

STONE_COLORS = {1: "#1f5bd6", 2: "#f7c815"}
_STONE_EDGES = {1: "#0b2a6b", 2: "#8a6d00"}
_GROUP_TINTS = {1: "#c9d8f7", 2: "#fbefb6"}
_CELL_FACE, _CELL_EDGE, _NAN_FACE = "#efe7d4", "#8c8474", "#b4b4b4"
_SQRT3 = math.sqrt(3.0)
_APOTHEM = 0.5  # hexagon width 1
_RADIUS = 1.0 / _SQRT3  # centre to corner
_BAND = 0.28  # width of the region bands, in cell widths
# Edge j of a hexagon faces HEX_DIRECTIONS[j] (E, NE, NW, W, SW, SE: 60 * j degrees).
_REGION_DIRECTIONS = ({4, 5}, {4, 5}, {0, 1}, {1, 2}, {2, 3})
_ANSI = {1: "\x1b[1;94m", 2: "\x1b[1;93m"}
_ANSI_WIN, _ANSI_RESET = "\x1b[4m", "\x1b[0m"


# ---------------------------------------------------------------------- geometry
def cell_centers(board: Board) -> np.ndarray:
    """[K, 2] float64 (x, y) centres of the hexagons, in cell widths."""
    q, r = board.coords[:, 0].astype(float), board.coords[:, 1].astype(float)
    return np.stack([q + r / 2.0, r * _SQRT3 / 2.0], axis=1)


def hexagon_corners(board: Board, *, scale: float = 1.0) -> np.ndarray:
    """[K, 6, 2] float64 corners; corner j is at ``60 j - 30`` degrees, so edge j (corner j to
    corner j + 1) faces neighbour direction ``HEX_DIRECTIONS[j]``."""
    angles = np.radians(60.0 * np.arange(6) - 30.0)
    unit = np.stack([np.cos(angles), np.sin(angles)], axis=1) * _RADIUS * scale
    return cell_centers(board)[:, None, :] + unit[None, :, :]


@functools.cache
def _neighbors_by_direction(board: Board) -> np.ndarray:
    """[K, 6] int: the neighbour in each of `HEX_DIRECTIONS`, -1 off the board."""
    n = board.side
    out = np.full((board.num_cells, 6), -1, dtype=np.intp)
    for j, (dq, dr) in enumerate(HEX_DIRECTIONS):
        q, r = board.coords[:, 0] + dq, board.coords[:, 1] + dr
        ok = (r >= 0) & (r < n) & (q >= -(n - 1)) & (q <= n - 1 - r)
        out[ok, j] = board.grid_to_cell[r[ok], q[ok] + n - 1]
    out.flags.writeable = False  # cached per board
    return out


def _edges_between(
    board: Board, inside: np.ndarray, outside: np.ndarray, *, off_board: bool
) -> np.ndarray:
    """[m, 2, 2] segments between cells of ``inside`` [K] bool and ``outside`` [K] bool
    (and the board's outer edge when ``off_board``)."""
    corners, nbrs = hexagon_corners(board), _neighbors_by_direction(board)
    segments = []
    for cell in np.flatnonzero(inside):
        for j, nb in enumerate(nbrs[cell]):
            if (nb < 0 and off_board) or (nb >= 0 and outside[nb]):
                segments.append((corners[cell, j], corners[cell, (j + 1) % 6]))
    return np.array(segments, dtype=float).reshape(-1, 2, 2)


@functools.cache
def _region_bands(board: Board) -> tuple[np.ndarray, ...]:
    """Per region, the [m, 4, 2] quadrilaterals of its band outside the board's outer edges.

    Every outer edge is split in two halves; each half goes to the region that the cell
    touches, whose side the edge lies on, and whose cells' centroid is nearest (this splits
    the corner edges of a10 and j10, and gives j1's two lower edges to the two bottom regions).
    """
    centers, nbrs = cell_centers(board), _neighbors_by_direction(board)
    inner, outer = hexagon_corners(board), hexagon_corners(board, scale=1 + _BAND / _APOTHEM)
    centroids = [centers[board.cells_of_region(k)].mean(axis=0) for k in range(NUM_REGIONS)]
    bands: list[list[np.ndarray]] = [[] for _ in range(NUM_REGIONS)]
    for cell in range(board.num_cells):
        mask = int(board.region_masks[cell])
        for j in np.flatnonzero(nbrs[cell] < 0):
            regions = [
                k for k in range(NUM_REGIONS) if mask >> k & 1 and j in _REGION_DIRECTIONS[k]
            ]
            a, b = inner[cell, j], inner[cell, (j + 1) % 6]
            oa, ob = outer[cell, j], outer[cell, (j + 1) % 6]
            for p0, p1, o0, o1 in (
                (a, (a + b) / 2, oa, (oa + ob) / 2),
                ((a + b) / 2, b, (oa + ob) / 2, ob),
            ):
                mid = (p0 + p1) / 2
                k = min(regions, key=lambda k: float(np.hypot(*(centroids[k] - mid))))
                bands[k].append(np.array([p0, p1, o1, o0]))
    arrays = tuple(np.array(quads) for quads in bands)
    for quads in arrays:
        quads.flags.writeable = False  # cached per board
    return arrays


# ---------------------------------------------------------------------- input checks
def _check_stones(stones: Any, board: Board) -> np.ndarray:
    stones = np.asarray(stones)
    if stones.shape != (board.num_cells,):
        raise ValueError(
            f"stones must have shape ({board.num_cells},) for the side-{board.side} board, "
            f"got {stones.shape}"
        )
    if not np.issubdtype(stones.dtype, np.integer) or not np.isin(stones, (0, 1, 2)).all():
        raise ValueError("stones must be integers 0 (empty), 1 (blue) or 2 (yellow)")
    return stones.astype(np.int8)


def _check_cells(cells: Iterable[int | str] | None, board: Board, what: str) -> list[int]:
    out = []
    for cell in cells if cells is not None else ():
        index = board.parse_action(cell.item() if isinstance(cell, np.generic) else cell)
        if index == board.swap_action:
            raise ValueError(f"{what}: the swap is not a cell")
        out.append(index)
    return out


def _last_cell(last_action: int | str | None, stones: np.ndarray, board: Board) -> int | None:
    """The cell to mark as the last move: a placement's cell, or the swapped stone's cell."""
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
    """The board as text, laid out like RULES.md's diagram (row 10 on top, row 1 at the bottom).

    Symbols: ``.`` empty, ``B`` blue, ``Y`` yellow; stones of the winning group in lowercase
    (``b``, ``y``); the last move in brackets (``[B]``). Row numbers run down the left, column
    letters under the bottom row. With ``show_names`` empty cells show their names.

    Args:
        stones: [K] int, 0 empty, 1 blue, 2 yellow.
        board: the geometry.
        last_action: action index or name of the last move (the swap marks the swapped stone);
            None or -1 for none.
        winning_cells: cells (indices or names) of the winning group.
        show_names: write each empty cell's name instead of ``.`` (cells 4 characters wide).
        color: ANSI colours for the stones (blue, yellow; the winning group underlined).
    """
    stones = _check_stones(stones, board)
    last = _last_cell(last_action, stones, board)
    winning = set(_check_cells(winning_cells, board, "winning_cells"))
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


# ---------------------------------------------------------------------- matplotlib
def _norm(values: np.ndarray, vmin: float | None, vmax: float | None, center: float | None):
    from matplotlib.colors import Normalize, TwoSlopeNorm

    finite = values[np.isfinite(values)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 1.0
    if center is None:
        vmin, vmax = lo if vmin is None else vmin, hi if vmax is None else vmax
        if vmin > vmax:
            raise ValueError(f"vmin {vmin} is above vmax {vmax}")
        return Normalize(vmin, vmax if vmax > vmin else vmin + 1e-9)
    half = max(abs(lo - center), abs(hi - center), 1e-9)
    vmin = center - half if vmin is None else vmin
    vmax = center + half if vmax is None else vmax
    if not vmin < center < vmax:
        raise ValueError(f"center {center} must lie strictly between vmin {vmin} and vmax {vmax}")
    return TwoSlopeNorm(center, vmin, vmax)


def _luminance(rgba: np.ndarray) -> np.ndarray:
    return rgba[..., :3] @ np.array([0.299, 0.587, 0.114])


def draw_board(
    stones: np.ndarray,
    board: Board,
    *,
    ax: Any = None,
    last_action: int | str | None = None,
    winning_cells: Iterable[int | str] | None = None,
    show_names: bool = False,
    values: np.ndarray | None = None,
    cmap: Any = None,
    vmin: float | None = None,
    vmax: float | None = None,
    center: float | None = None,
    contour_at: float | None = None,
    colorbar_label: str | None = None,
    value_format: str | None = None,
    title: str | None = None,
    marks: Mapping[int | str, str] | Iterable[int | str] | None = None,
    figwidth: float = 6.0,
):
    """Draw the board (and optionally a per-cell heatmap) with matplotlib.

    Args:
        stones: [K] int, 0 empty, 1 blue, 2 yellow (drawn as discs; smaller over a heatmap).
        board: the geometry.
        ax: draw into these axes; by default a new Agg figure ``figwidth`` inches wide is made.
        last_action: action index or name of the last move, marked by a ring (the swap marks the
            swapped stone); None or -1 for none.
        winning_cells: the winning group (indices or names): tinted and outlined.
        show_names: write the cell names.
        values: [K] float, a heatmap: each cell's face coloured by ``cmap``; NaN cells grey;
            a colour bar labelled ``colorbar_label``.
        cmap: colormap or its name; default ``viridis``, or ``RdBu_r`` when ``center`` is set.
        vmin, vmax: the colour scale's ends (default: the finite values' range; with ``center``
            symmetric about it).
        center: with ``values``, a diverging scale (`TwoSlopeNorm`) centred at this value.
        contour_at: with ``values``, outline the edges between neighbouring cells on opposite
            sides of this level (one ``>= level``, the other below; NaN cells never count).
        value_format: with ``values``, write each value in its cell, e.g. ``"{:.2f}"``.
        title: the axes title.
        marks: cells to mark with a ring: a list of cells, or a dict cell -> short label
            written in the cell.
        figwidth: width in inches of a new figure (ignored with ``ax``).

    Returns:
        The matplotlib Figure drawn on.
    """
    from matplotlib import colormaps
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba

    stones = _check_stones(stones, board)
    last = _last_cell(last_action, stones, board)
    winning = np.zeros(board.num_cells, dtype=bool)
    winning[_check_cells(winning_cells, board, "winning_cells")] = True
    if isinstance(marks, (str, int, np.integer)):
        marks = [marks]
    if isinstance(marks, Mapping):
        labels = dict(
            zip(_check_cells(marks.keys(), board, "marks"), map(str, marks.values()), strict=True)
        )
    else:
        labels = dict.fromkeys(_check_cells(marks, board, "marks"), "")
    if values is not None:
        values = np.asarray(values, dtype=float)
        if values.shape != (board.num_cells,):
            raise ValueError(f"values must have shape ({board.num_cells},), got {values.shape}")
    elif contour_at is not None or center is not None or value_format is not None:
        raise ValueError("contour_at, center and value_format need values")

    centers, corners = cell_centers(board), hexagon_corners(board)
    margin = _BAND + 0.2
    xlim = (corners[..., 0].min() - margin, corners[..., 0].max() + margin)
    ylim = (corners[..., 1].min() - margin, corners[..., 1].max() + margin)
    own = ax is None
    fig, ax = _make_axes(ax, xlim, ylim, figwidth, title, colorbar=values is not None)
    pt = _points_per_unit(ax, xlim, ylim)

    faces = np.tile(np.array(to_rgba(_CELL_FACE)), (board.num_cells, 1))
    norm = colormap = None
    if values is not None:
        cmap = cmap or ("RdBu_r" if center is not None else "viridis")
        colormap = colormaps[cmap] if isinstance(cmap, str) else cmap
        norm = _norm(values, vmin, vmax, center)
        finite = np.isfinite(values)
        faces[finite] = colormap(norm(values[finite]))
        faces[~finite] = to_rgba(_NAN_FACE)
    elif winning.any():
        faces[winning] = to_rgba(_GROUP_TINTS[int(stones[winning][0]) or 1])
    for k, quads in enumerate(_region_bands(board)):
        ax.add_collection(
            PolyCollection(quads, color=REGION_COLORS[k], linewidths=0.02 * pt, zorder=1)
        )
    ax.add_collection(
        PolyCollection(
            corners, facecolors=faces, edgecolors=_CELL_EDGE, linewidths=0.04 * pt, zorder=2
        )
    )
    if values is not None:
        _colorbar(fig, ax, colormap, norm, colorbar_label, own_figure=own)
    if contour_at is not None:
        finite = np.isfinite(values)
        above = finite & (np.nan_to_num(values, nan=-np.inf) >= contour_at)
        below = finite & ~above
        segments = _edges_between(board, above, below, off_board=False)
        ax.add_collection(
            LineCollection(
                segments, colors="black", linewidths=0.12 * pt, capstyle="round", zorder=3
            )
        )
    if winning.any():
        segments = _edges_between(board, winning, ~winning, off_board=True)
        ax.add_collection(
            LineCollection(
                segments, colors="#111111", linewidths=0.1 * pt, capstyle="round", zorder=3
            )
        )

    radius = 0.22 if values is not None else 0.36
    for colour in (1, 2):
        cells = np.flatnonzero(stones == colour)
        _discs(ax, centers[cells], radius, STONE_COLORS[colour], _STONE_EDGES[colour], 0.035 * pt)
    if last is not None:
        ring = {0: "#d0021b", 1: "white", 2: "#222222"}[int(stones[last])]
        size = 0.72 * radius if stones[last] else 0.3
        _discs(ax, centers[[last]], size, "none", ring, (0.05 if values is None else 0.035) * pt)
    _discs(ax, centers[list(labels)], 0.42, "none", "black", 0.07 * pt)
    _write_text(ax, board, stones, faces, values, labels, show_names, value_format, pt)
    return fig


def _discs(ax: Any, xy: np.ndarray, radius: float, face: str, edge: str, width: float) -> None:
    """Circles of one style at the points xy [m, 2] (stones, or rings with face 'none')."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Circle

    circles = [Circle((float(x), float(y)), radius) for x, y in xy]
    zorder = 4 if face != "none" else 5
    ax.add_collection(
        PatchCollection(circles, facecolors=face, edgecolors=edge, linewidths=width, zorder=zorder)
    )


def _make_axes(ax: Any, xlim, ylim, figwidth: float, title: str | None, *, colorbar: bool):
    """New Agg figure sized to the board (room for title and colour bar), or the given axes."""
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        board_h = figwidth * (ylim[1] - ylim[0]) / (xlim[1] - xlim[0])
        title_h, bar_h = (0.35 if title else 0.05), (0.8 if colorbar else 0.0)
        height = board_h + title_h + bar_h
        fig = Figure(figsize=(figwidth, height), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.0, bar_h / height, 1.0, board_h / height))
    fig = ax.figure
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=11)
    return fig, ax


def _points_per_unit(ax: Any, xlim, ylim) -> float:
    """Typographic points per cell width, so line widths and fonts scale with the board."""
    box = ax.get_position()
    width_pt = box.width * ax.figure.get_figwidth() * 72.0
    height_pt = box.height * ax.figure.get_figheight() * 72.0
    return min(width_pt / (xlim[1] - xlim[0]), height_pt / (ylim[1] - ylim[0]))


def _colorbar(fig: Any, ax: Any, colormap: Any, norm: Any, label: str | None, *, own_figure: bool):
    from matplotlib.cm import ScalarMappable

    mappable = ScalarMappable(norm=norm, cmap=colormap)
    if own_figure:
        height = fig.get_figheight()
        cax = fig.add_axes((0.2, 0.45 / height, 0.6, 0.14 / height))
        fig.colorbar(mappable, cax=cax, orientation="horizontal", label=label)
    else:
        fig.colorbar(
            mappable, ax=ax, orientation="horizontal", fraction=0.05, pad=0.02, label=label
        )


def _write_text(ax, board, stones, faces, values, labels, show_names, value_format, pt) -> None:
    """Cell names, values and mark labels; dark text on light faces, light text on dark."""
    from matplotlib.colors import to_rgba

    centers = cell_centers(board)
    background = _luminance(faces)
    for colour in (1, 2):  # the text sits on the stone
        background[stones == colour] = _luminance(np.array(to_rgba(STONE_COLORS[colour])))
    ink = np.where(background > 0.5, "#1a1a1a", "white")
    for cell in range(board.num_cells):
        x, y = centers[cell]
        lines = []
        if labels.get(cell):
            lines.append((labels[cell], "bold", 0.28))
        if value_format is not None and np.isfinite(values[cell]):
            lines.append((value_format.format(values[cell]), "normal", 0.24))
        if show_names:
            lines.append((board.names[cell], "normal", 0.27 if not lines else 0.2))
        spread = 0.12 * (len(lines) - 1)
        offsets = np.linspace(spread, -spread, len(lines))
        for (text, weight, size), dy in zip(lines, offsets, strict=True):
            ax.text(
                x,
                y + dy,
                text,
                ha="center",
                va="center",
                fontsize=size * pt,
                fontweight=weight,
                color=ink[cell],
                zorder=6,
            )


def board_image(stones: np.ndarray, board: Board, *, width_px: int = 600, **options) -> np.ndarray:
    """The picture of `draw_board` as an array (for Gymnasium's ``rgb_array`` render mode).

    Args:
        width_px: the image width; the height follows from the board (and title, colour bar).
        **options: any keyword of `draw_board` but ``ax`` and ``figwidth``.

    Returns:
        [Hpx, width_px, 3] uint8.
    """
    if "ax" in options or "figwidth" in options:
        raise ValueError("board_image makes its own figure: pass width_px, not ax or figwidth")
    fig = draw_board(stones, board, figwidth=width_px / 100.0, **options)
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def save_board(path, stones: np.ndarray, board: Board, *, dpi: int = 150, **options) -> None:
    """Write the picture of `draw_board` to ``path`` (PNG by its suffix; ``options`` as there)."""
    if "ax" in options:
        raise ValueError("save_board makes its own figure: do not pass ax")
    draw_board(stones, board, **options).savefig(path, dpi=dpi)
