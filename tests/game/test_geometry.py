"""The hexagons' plane geometry: centres, corners, shared edges, contour edges, region bands."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.game.board import Board
from trapy_rl.game.geometry import cell_centers, edges_between, hexagon_corners, region_bands

SIDES = (2, 3, 4, 10, 14)


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
