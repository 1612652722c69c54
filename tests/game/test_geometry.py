"""The hexagons' plane geometry: centres, corners, shared edges, outlines, region bands, box."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trapy_rl.game.board import HEX_DIRECTIONS, Board
from trapy_rl.game.geometry import (
    CORNER_RADIUS,
    REGION_BAND_WIDTH,
    bounding_box,
    cell_centers,
    edges_between,
    hexagon_corners,
    region_bands,
)

SIDES = (2, 3, 4, 10, 14)


def adjacency(board: Board) -> np.ndarray:
    """[K, K] bool from `Board.neighbors`: True where two cells are neighbours."""
    adjacent = np.zeros((board.num_cells, board.num_cells), dtype=bool)
    for cell, nbrs in enumerate(board.neighbors):
        adjacent[cell, nbrs[nbrs >= 0]] = True
    return adjacent


def shared_corners(board: Board) -> np.ndarray:
    """[K, K] int: how many corners the hexagons of two cells have in common."""
    corners = hexagon_corners(board)
    same = np.isclose(corners[:, None, :, None, :], corners[None, :, None, :, :], atol=1e-9)
    return same.all(-1).sum(axis=(2, 3))


# ---------------------------------------------------------------------- the tiling
@pytest.mark.parametrize("side", SIDES)
def test_hexagons_tile_neighbours_share_edges(side: int) -> None:
    board = Board(side)
    centers, corners = cell_centers(board), hexagon_corners(board)
    for cell, nbrs in enumerate(board.neighbors):
        for nb in nbrs[nbrs >= 0]:
            assert np.isclose(np.linalg.norm(centers[cell] - centers[nb]), 1.0)
            shared = np.isclose(corners[cell][:, None, :], corners[nb][None, :, :]).all(-1)
            assert shared.sum() == 2, "neighbouring hexagons share exactly one edge"
    # Row r is shifted right by half a cell per row; the long row is at the bottom.
    a_cells = board.grid_to_cell[:, 0]
    np.testing.assert_allclose(np.diff(centers[a_cells, 0]), 0.5)
    assert (np.diff(centers[a_cells, 1]) > 0).all()


@pytest.mark.parametrize("side", SIDES)
def test_centres_one_cell_width_apart_exactly_for_neighbours(side: int) -> None:
    board = Board(side)
    centers = cell_centers(board)
    distance = np.linalg.norm(centers[:, None] - centers[None], axis=-1)
    adjacent = adjacency(board)
    np.testing.assert_allclose(distance[adjacent], 1.0, rtol=0, atol=1e-12)
    others = ~adjacent & ~np.eye(board.num_cells, dtype=bool)
    # The next-nearest centres of a hexagonal tiling of width 1 are sqrt(3) apart.
    assert distance[others].min() == pytest.approx(math.sqrt(3.0))


@pytest.mark.parametrize("side", SIDES)
def test_outlines_share_one_edge_with_neighbours_and_no_corner_with_others(side: int) -> None:
    board = Board(side)
    shared = shared_corners(board)
    adjacent = adjacency(board)
    assert (np.diag(shared) == 6).all()
    assert (shared[adjacent] == 2).all(), "neighbours share exactly one edge: two corners"
    others = ~adjacent & ~np.eye(board.num_cells, dtype=bool)
    assert (shared[others] == 0).all()


@pytest.mark.parametrize("side", (2, 3, 10))
def test_regular_hexagons_whose_edge_j_faces_direction_j(side: int) -> None:
    board = Board(side)
    centers, corners = cell_centers(board), hexagon_corners(board)
    np.testing.assert_allclose(np.linalg.norm(corners - centers[:, None], axis=-1), CORNER_RADIUS)
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=1), axis=-1)
    np.testing.assert_allclose(sides, CORNER_RADIUS)  # a regular hexagon: sides = radius
    for cell, (q, r) in enumerate(board.coords.tolist()):
        for j, (dq, dr) in enumerate(HEX_DIRECTIONS):
            try:
                nb = board.cell_index(q + dq, r + dr)
            except ValueError:
                continue
            edge_mid = (corners[cell, j] + corners[cell, (j + 1) % 6]) / 2
            np.testing.assert_allclose(edge_mid, (centers[cell] + centers[nb]) / 2, atol=1e-12)


# ---------------------------------------------------------------------- outlines and bands
@pytest.mark.parametrize("side", SIDES)
def test_board_outline_is_one_closed_loop(side: int) -> None:
    board = Board(side)
    everything = np.ones(board.num_cells, dtype=bool)
    outline = edges_between(board, everything, ~everything, off_board=True)
    assert outline.shape == (6 * board.num_cells - int(board.num_neighbors.sum()), 2, 2)
    assert len(edges_between(board, everything, ~everything)) == 0
    # Walk the loop from one segment: it visits every segment once and comes back.
    ends = {tuple(np.round(p, 9)) for p in outline.reshape(-1, 2)}
    assert len(ends) == len(outline), "every corner of the outline joins exactly two segments"
    unused = [tuple(map(tuple, np.round(s, 9))) for s in outline]
    start, point = unused[0][0], unused[0][1]
    unused.pop(0)
    while unused:
        i = next(i for i, s in enumerate(unused) if point in s)
        a, b = unused.pop(i)
        point = b if a == point else a
    assert point == start


@pytest.mark.parametrize("side", SIDES)
def test_region_bands_touch_exactly_their_cells(side: int) -> None:
    board = Board(side)
    centers = cell_centers(board)
    for k, quads in enumerate(region_bands(board)):
        inner_mids = np.array([(q[0] + q[1]) / 2 for q in quads])
        nearest = np.linalg.norm(inner_mids[:, None] - centers[None], axis=-1).argmin(1)
        np.testing.assert_array_equal(np.unique(nearest), board.cells_of_region(k))
    # j1, where the bottom regions meet: its lower-left edge is bottom-left, lower-right is
    # bottom-right.
    j1 = board.grid_to_cell[0, side - 1]
    for k, sign in ((0, -1), (1, 1)):
        mids = np.array([(q[0] + q[1]) / 2 for q in region_bands(board)[k]])
        near_j1 = mids[np.linalg.norm(mids - centers[j1], axis=1) < 0.6]
        assert (np.sign(near_j1[:, 0] - centers[j1, 0]) == sign).all()


@pytest.mark.parametrize("side", SIDES)
def test_region_bands_cover_the_outline_once_band_width_outside(side: int) -> None:
    board = Board(side)
    everything = np.ones(board.num_cells, dtype=bool)
    outline = edges_between(board, everything, ~everything, off_board=True)
    quads = np.concatenate(region_bands(board))
    assert len(quads) == 2 * len(outline), "each outer edge split in two halves"
    halves = np.concatenate([(outline[:, 0] + outline[:, 1]) / 2 - outline[:, 0]] * 2)
    np.testing.assert_allclose(
        np.sort(np.linalg.norm(quads[:, 1] - quads[:, 0], axis=-1)),
        np.sort(np.linalg.norm(halves, axis=-1)),
    )
    # The outer side is the inner side moved outwards: REGION_BAND_WIDTH away from the edge's
    # line, measured along the edge's normal.
    inner_mid, outer_mid = quads[:, :2].mean(axis=1), quads[:, 2:].mean(axis=1)
    direction = quads[:, 1] - quads[:, 0]
    normal = np.stack([direction[:, 1], -direction[:, 0]], axis=1)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    offset = np.abs(((outer_mid - inner_mid) * normal).sum(axis=1))
    np.testing.assert_allclose(offset, REGION_BAND_WIDTH)


@pytest.mark.parametrize("side", (3, 10))
def test_contour_edges_match_neighbour_pairs(side: int) -> None:
    board = Board(side)
    values = np.random.default_rng(1).random(board.num_cells)
    values[::7] = np.nan
    above = np.isfinite(values) & (values >= 0.5)
    below = np.isfinite(values) & (values < 0.5)
    pairs = {
        frozenset((a, int(b)))
        for a in range(board.num_cells)
        for b in board.neighbors[a]
        if b >= 0 and above[a] and below[b]
    }
    segments = edges_between(board, above, below, off_board=False)
    assert len(segments) == len(pairs)
    centers = cell_centers(board)
    for segment in segments:  # each segment is the perpendicular bisector piece of a pair
        mid = segment.mean(axis=0)
        two = np.argsort(np.linalg.norm(centers - mid, axis=1))[:2]
        assert frozenset(two.tolist()) in pairs


@pytest.mark.parametrize("side", (2, 10))
def test_bounding_box_is_tight_and_grows_by_the_margin(side: int) -> None:
    board = Board(side)
    corners = hexagon_corners(board).reshape(-1, 2)
    x_min, x_max, y_min, y_max = bounding_box(board)
    assert (x_min, x_max) == (corners[:, 0].min(), corners[:, 0].max())
    assert (y_min, y_max) == (corners[:, 1].min(), corners[:, 1].max())
    assert (x_min, x_max) == pytest.approx((-(side - 0.5), side - 0.5))  # the long bottom row
    grown = bounding_box(board, margin=REGION_BAND_WIDTH)
    assert grown == pytest.approx(
        (
            x_min - REGION_BAND_WIDTH,
            x_max + REGION_BAND_WIDTH,
            y_min - REGION_BAND_WIDTH,
            y_max + REGION_BAND_WIDTH,
        )
    )
    # The bands reach REGION_BAND_WIDTH beyond the sides, and their pointed corners (outward
    # copies of hexagon corners) 2 * CORNER_RADIUS * REGION_BAND_WIDTH beyond top and bottom.
    bands = np.concatenate(region_bands(board)).reshape(-1, 2)
    assert (bands[:, 0].min(), bands[:, 0].max()) == pytest.approx(grown[:2])
    reach = 2 * CORNER_RADIUS * REGION_BAND_WIDTH
    assert (bands[:, 1].min(), bands[:, 1].max()) == pytest.approx((y_min - reach, y_max + reach))
