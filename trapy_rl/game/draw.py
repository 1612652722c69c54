"""Pictures of the board with matplotlib: a position, and a value per cell as a heatmap.

The hexagons, the region bands and the outlines come from `trapy_rl.game.geometry` (lengths in
cell widths); line widths and fonts are given per cell width and converted to points, so every
board size looks alike. The five perimeter regions are coloured bands along the outer edges, in
`REGION_COLORS`. The inputs are checked as `trapy_rl.game.render` checks them for text.

Matplotlib is imported inside the functions (Agg canvas only, never pyplot), so importing this
module stays fast and no window ever opens.

Shapes: K cells. ``stones`` is [K] int (0 empty, 1 blue, 2 yellow); ``values`` is [K] float.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from trapy_rl.game.board import REGION_COLORS, Board
from trapy_rl.game.geometry import (
    REGION_BAND_WIDTH,
    bounding_box,
    cell_centers,
    edges_between,
    hexagon_corners,
    region_bands,
)
from trapy_rl.game.render import check_stones, last_move_cell, parse_cells

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap, Normalize
    from matplotlib.figure import Figure

__all__ = ["PALETTE", "STONE_COLORS", "board_image", "draw_board", "save_board"]

STONE_COLORS = {1: "#1f5bd6", 2: "#f7c815"}
"""Fill colour of the stones by player: 1 blue, 2 yellow."""
_STONE_EDGES = {1: "#0b2a6b", 2: "#8a6d00"}
_GROUP_TINTS = {1: "#c9d8f7", 2: "#fbefb6"}
_CELL_FACE, _CELL_EDGE, _NAN_FACE = "#efe7d4", "#8c8474", "#b4b4b4"
_MARGIN = REGION_BAND_WIDTH + 0.2  # around the hexagons, in cell widths
PALETTE = {
    "cell_face": _CELL_FACE,
    "cell_edge": _CELL_EDGE,
    "stones": STONE_COLORS,
    "stone_edges": _STONE_EDGES,
    "group_tints": _GROUP_TINTS,
    "regions": REGION_COLORS,
}
"""Every colour of the pictures, for other drawings of the board (the web board's SVG)."""


def draw_board(
    stones: np.ndarray,
    board: Board,
    *,
    ax: Axes | None = None,
    last_action: int | str | None = None,
    winning_cells: Iterable[int | str] | None = None,
    show_names: bool = False,
    values: np.ndarray | None = None,
    cmap: str | Colormap | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    center: float | None = None,
    contour_at: float | None = None,
    colorbar_label: str | None = None,
    value_format: str | None = None,
    title: str | None = None,
    marks: Mapping[int | str, str] | Iterable[int | str] | None = None,
    figwidth: float = 6.0,
) -> Figure:
    """Draw the board (and optionally a per-cell heatmap) with matplotlib.

    Args:
        stones: [K] int, 0 empty, 1 blue, 2 yellow (drawn as discs; smaller over a heatmap).
        board: the board.
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
        colorbar_label: with ``values``, the colour bar's label.
        value_format: with ``values``, write each value in its cell, e.g. ``"{:.2f}"``.
        title: the axes title.
        marks: cells to mark with a ring: a list of cells, or a dict cell -> short label
            written in the cell.
        figwidth: width in inches of a new figure (ignored with ``ax``).

    Returns:
        The matplotlib Figure drawn on.

    Raises:
        ValueError: naming the argument: stones, cells or ``values`` of the wrong shape or
            kind, a scale whose ends do not fit, or heatmap options without ``values``.
    """
    # matplotlib only when drawing (slow to import)
    from matplotlib import colormaps
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba

    stones = check_stones(stones, board)
    last = last_move_cell(last_action, stones, board)
    winning = np.zeros(board.num_cells, dtype=bool)
    winning[parse_cells(winning_cells, board, "winning_cells")] = True
    if isinstance(marks, (str, int, np.integer)):
        marks = [marks]
    if isinstance(marks, Mapping):
        labels = dict(
            zip(parse_cells(marks.keys(), board, "marks"), map(str, marks.values()), strict=True)
        )
    else:
        labels = dict.fromkeys(parse_cells(marks, board, "marks"), "")
    if values is not None:
        values = np.asarray(values, dtype=float)
        if values.shape != (board.num_cells,):
            raise ValueError(f"values must have shape ({board.num_cells},), got {values.shape}")
    elif contour_at is not None or center is not None or value_format is not None:
        raise ValueError("contour_at, center and value_format need values")

    centers, corners = cell_centers(board), hexagon_corners(board)
    x_min, x_max, y_min, y_max = bounding_box(board, margin=_MARGIN)
    xlim, ylim = (x_min, x_max), (y_min, y_max)
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
    for k, quads in enumerate(region_bands(board)):
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
        segments = edges_between(board, above, below, off_board=False)
        ax.add_collection(
            LineCollection(
                segments, colors="black", linewidths=0.12 * pt, capstyle="round", zorder=3
            )
        )
    if winning.any():
        segments = edges_between(board, winning, ~winning, off_board=True)
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


def board_image(
    stones: np.ndarray, board: Board, *, width_px: int = 600, **options: Any
) -> np.ndarray:
    """The picture of `draw_board` as an array (for Gymnasium's ``rgb_array`` render mode).

    Args:
        stones: [K] int, 0 empty, 1 blue, 2 yellow.
        board: the board.
        width_px: the image width in pixels; the height follows from the board (and the title
            and colour bar).
        **options: any keyword of `draw_board` but ``ax`` and ``figwidth``.

    Returns:
        [Hpx, width_px, 3] uint8 RGB.

    Raises:
        ValueError: for ``ax`` or ``figwidth``, and as `draw_board` does.
    """
    if "ax" in options or "figwidth" in options:
        raise ValueError("board_image makes its own figure: pass width_px, not ax or figwidth")
    fig = draw_board(stones, board, figwidth=width_px / 100.0, **options)
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def save_board(
    path: str | PathLike[str], stones: np.ndarray, board: Board, *, dpi: int = 150, **options: Any
) -> None:
    """Write the picture of `draw_board` to a file.

    Args:
        path: the file; its suffix picks the format (``.png``, ``.svg``, ``.pdf``, ...).
        stones: [K] int, 0 empty, 1 blue, 2 yellow.
        board: the board.
        dpi: pixels per inch of raster formats (a new figure is ``figwidth`` inches wide).
        **options: any keyword of `draw_board` but ``ax``.

    Raises:
        ValueError: for ``ax``, and as `draw_board` does.
    """
    if "ax" in options:
        raise ValueError("save_board makes its own figure: do not pass ax")
    draw_board(stones, board, **options).savefig(path, dpi=dpi)


# ---------------------------------------------------------------------- helpers
def _norm(
    values: np.ndarray, vmin: float | None, vmax: float | None, center: float | None
) -> Normalize:
    """The colour scale of ``values`` [K] float: linear, or diverging about ``center``."""
    # matplotlib only when drawing (slow to import)
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
    """[...] float64 brightness in [0, 1] of [..., 4] float RGBA colours."""
    return rgba[..., :3] @ np.array([0.299, 0.587, 0.114])


def _discs(ax: Axes, xy: np.ndarray, radius: float, face: str, edge: str, width: float) -> None:
    """Circles of one style at the points xy [m, 2] (stones, or rings with face 'none')."""
    # matplotlib only when drawing (slow to import)
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Circle

    circles = [Circle((float(x), float(y)), radius) for x, y in xy]
    zorder = 4 if face != "none" else 5
    ax.add_collection(
        PatchCollection(circles, facecolors=face, edgecolors=edge, linewidths=width, zorder=zorder)
    )


def _make_axes(
    ax: Axes | None,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    figwidth: float,
    title: str | None,
    *,
    colorbar: bool,
) -> tuple[Figure, Axes]:
    """New Agg figure sized to the board (room for title and colour bar), or the given axes."""
    if ax is None:
        # matplotlib only when drawing (slow to import)
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


def _points_per_unit(ax: Axes, xlim: tuple[float, float], ylim: tuple[float, float]) -> float:
    """Typographic points per cell width, so line widths and fonts scale with the board."""
    box = ax.get_position()
    width_pt = box.width * ax.figure.get_figwidth() * 72.0
    height_pt = box.height * ax.figure.get_figheight() * 72.0
    return min(width_pt / (xlim[1] - xlim[0]), height_pt / (ylim[1] - ylim[0]))


def _colorbar(
    fig: Figure,
    ax: Axes,
    colormap: Colormap,
    norm: Normalize,
    label: str | None,
    *,
    own_figure: bool,
) -> None:
    """A horizontal colour bar under the board (in the room `_make_axes` left, if own)."""
    # matplotlib only when drawing (slow to import)
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


def _write_text(
    ax: Axes,
    board: Board,
    stones: np.ndarray,
    faces: np.ndarray,
    values: np.ndarray | None,
    labels: dict[int, str],
    show_names: bool,
    value_format: str | None,
    pt: float,
) -> None:
    """Cell names, values and mark labels; dark text on light faces, light text on dark.

    ``stones`` [K] int8, ``faces`` [K, 4] float RGBA, ``values`` [K] float, ``labels`` cell ->
    text, ``pt`` points per cell width.
    """
    # matplotlib only when drawing (slow to import)
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
