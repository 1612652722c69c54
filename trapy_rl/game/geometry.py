"""Plane geometry of the board's hexagons, shared by every picture (matplotlib today, SVG later).

Pointy-top hexagons of width 1 (the unit of every length here, one *cell width*): cell (q, r) is
centred at ``x = q + r / 2, y = r * sqrt(3) / 2``, so each row sits half a cell right of the row
below and the long edge (row 1, ``a1 .. s1``) is at the bottom, as in docs/rules.md's diagram. The y
axis points up. Corner j of a hexagon is at ``60 j - 30`` degrees from its centre, so edge j
(corner j to corner j + 1) faces the neighbour in direction ``HEX_DIRECTIONS[j]``.

Only numpy: nothing here draws. Shapes: K cells; m segments or quadrilaterals. Every array
returned is float64 in cell widths.

>>> board = Board(2)
>>> cell_centers(board)[board.parse_action("b2")].round(3).tolist()
[0.5, 0.866]
>>> hexagon_corners(board).shape, [len(band) for band in region_bands(board)]
((5, 6, 2), [6, 6, 7, 6, 7])
>>> [round(end, 3) for end in bounding_box(board)]
[-1.5, 1.5, -0.577, 1.443]
"""

from __future__ import annotations

import functools
import math

import numpy as np

from trapy_rl.game.board import HEX_DIRECTIONS, NUM_REGIONS, Board

__all__ = [
    "CORNER_RADIUS",
    "REGION_BAND_WIDTH",
    "bounding_box",
    "cell_centers",
    "edges_between",
    "hexagon_corners",
    "region_bands",
]

_SQRT3 = math.sqrt(3.0)
_APOTHEM = 0.5  # centre to edge: half the cell width
CORNER_RADIUS = 1.0 / _SQRT3
"""Centre to corner of a hexagon, in cell widths."""
REGION_BAND_WIDTH = 0.28
"""Width of the coloured band of a perimeter region outside the board's edge, in cell widths."""
# Edge j of a hexagon faces HEX_DIRECTIONS[j] (E, NE, NW, W, SW, SE). The outer edges on region
# k's side of the board face these directions (bottom: SW, SE; right: E, NE; top: NE, NW;
# left: NW, W).
_REGION_DIRECTIONS = ({4, 5}, {4, 5}, {0, 1}, {1, 2}, {2, 3})


def cell_centers(board: Board) -> np.ndarray:
    """The centre of each cell's hexagon.

    Args:
        board: the board.

    Returns:
        [K, 2] float64 (x, y) in cell widths: neighbouring centres are exactly 1 apart.
    """
    q, r = board.coords[:, 0].astype(float), board.coords[:, 1].astype(float)
    return np.stack([q + r / 2.0, r * _SQRT3 / 2.0], axis=1)


def hexagon_corners(board: Board, *, scale: float = 1.0) -> np.ndarray:
    """The six corners of each cell's hexagon, counter-clockwise.

    Args:
        board: the board.
        scale: the hexagons' size relative to the tiling (1: neighbours share edges; above 1
            they overlap, as the outer rim of the region bands does).

    Returns:
        [K, 6, 2] float64 (x, y) in cell widths; corner j is at ``60 j - 30`` degrees from the
        centre, ``CORNER_RADIUS * scale`` away, and edge j (corner j to corner j + 1 mod 6)
        faces the neighbour in direction ``HEX_DIRECTIONS[j]``.
    """
    angles = np.radians(60.0 * np.arange(6) - 30.0)
    unit = np.stack([np.cos(angles), np.sin(angles)], axis=1) * CORNER_RADIUS * scale
    return cell_centers(board)[:, None, :] + unit[None, :, :]


def bounding_box(board: Board, *, margin: float = 0.0) -> tuple[float, float, float, float]:
    """The smallest axis-aligned box around all hexagons, grown by ``margin`` on every side.

    Args:
        board: the board.
        margin: added on each side, in cell widths. The region bands reach
            ``REGION_BAND_WIDTH`` beyond the left and right ends and ``2 * CORNER_RADIUS *
            REGION_BAND_WIDTH`` (about 0.32) beyond the top and bottom.

    Returns:
        ``(x_min, x_max, y_min, y_max)`` in cell widths.
    """
    corners = hexagon_corners(board)
    x, y = corners[..., 0], corners[..., 1]
    return (
        float(x.min() - margin),
        float(x.max() + margin),
        float(y.min() - margin),
        float(y.max() + margin),
    )


@functools.cache
def _neighbors_by_direction(board: Board) -> np.ndarray:
    """[K, 6] intp: the neighbour in each of `HEX_DIRECTIONS`, -1 off the board.

    (`Board.neighbors` lists the same cells compacted, without their directions.)
    """
    n = board.side
    out = np.full((board.num_cells, 6), -1, dtype=np.intp)
    for j, (dq, dr) in enumerate(HEX_DIRECTIONS):
        q, r = board.coords[:, 0] + dq, board.coords[:, 1] + dr
        ok = (r >= 0) & (r < n) & (q >= -(n - 1)) & (q <= n - 1 - r)
        out[ok, j] = board.grid_to_cell[r[ok], q[ok] + n - 1]
    out.flags.writeable = False  # cached per board
    return out


def edges_between(
    board: Board, inside: np.ndarray, outside: np.ndarray, *, off_board: bool = False
) -> np.ndarray:
    """The hexagon edges that separate two sets of cells: an outline or a contour line.

    Args:
        board: the board.
        inside: [K] bool, the cells whose edges are candidates.
        outside: [K] bool, the cells on the other side of a wanted edge.
        off_board: also take the edges of ``inside`` cells on the board's outer edge.

    Returns:
        [m, 2, 2] float64: segment i runs from ``[i, 0]`` to ``[i, 1]`` (x, y), in cell widths;
        one segment per (inside cell, outside neighbour or outer edge) pair, in cell order.
    """
    corners, nbrs = hexagon_corners(board), _neighbors_by_direction(board)
    segments = []
    for cell in np.flatnonzero(inside):
        for j, nb in enumerate(nbrs[cell]):
            if (nb < 0 and off_board) or (nb >= 0 and outside[nb]):
                segments.append((corners[cell, j], corners[cell, (j + 1) % 6]))
    return np.array(segments, dtype=float).reshape(-1, 2, 2)


@functools.cache
def region_bands(board: Board) -> tuple[np.ndarray, ...]:
    """The coloured band of each perimeter region, just outside the board's outer edges.

    Every outer edge is split in two halves; each half goes to the region that the cell
    touches, whose side the edge lies on, and whose cells' centroid is nearest (this splits
    the corner edges of a10 and j10, and gives j1's two lower edges to the two bottom regions).
    The band is ``REGION_BAND_WIDTH`` wide.

    Args:
        board: the board.

    Returns:
        One array per region, in region-bit order: [m, 4, 2] float64 quadrilaterals (x, y) in
        cell widths: half an outer edge (corners 0, 1) and its outward copy (corners 2, 3, in
        reverse, so that the four run around the quadrilateral).
        Cached per board and read-only.
    """
    centers, nbrs = cell_centers(board), _neighbors_by_direction(board)
    inner = hexagon_corners(board)
    outer = hexagon_corners(board, scale=1 + REGION_BAND_WIDTH / _APOTHEM)
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
