"""Board pictures: the ASCII diagram read back, the drawing's geometry and regions, images."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.render import (
    STONE_COLORS,
    _edges_between,
    _region_bands,
    board_image,
    cell_centers,
    draw_board,
    hexagon_corners,
    render_ascii,
    save_board,
)
from trapy_rl.game.sampling import random_legal_actions

SIDES = (2, 3, 4, 10, 14)
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# RULES.md's diagram of the Trap Y board, top row first.
RULES_DIAGRAM = """\
                  a10 b10 c10 d10 e10 f10 g10 h10 i10 j10
                 a9  b9  c9  d9  e9  f9  g9  h9  i9  j9  k9
               a8  b8  c8  d8  e8  f8  g8  h8  i8  j8  k8  l8
             a7  b7  c7  d7  e7  f7  g7  h7  i7  j7  k7  l7  m7
           a6  b6  c6  d6  e6  f6  g6  h6  i6  j6  k6  l6  m6  n6
         a5  b5  c5  d5  e5  f5  g5  h5  i5  j5  k5  l5  m5  n5  o5
       a4  b4  c4  d4  e4  f4  g4  h4  i4  j4  k4  l4  m4  n4  o4  p4
     a3  b3  c3  d3  e3  f3  g3  h3  i3  j3  k3  l3  m3  n3  o3  p3  q3
   a2  b2  c2  d2  e2  f2  g2  h2  i2  j2  k2  l2  m2  n2  o2  p2  q2  r2
 a1  b1  c1  d1  e1  f1  g1  h1  i1  j1  k1  l1  m1  n1  o1  p1  q1  r1  s1"""


def random_stones(board: Board, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 3, board.num_cells).astype(np.int8)


def read_ascii(text: str, board: Board) -> tuple[np.ndarray, dict[int, int], set[int], set[int]]:
    """Parse the diagram back: stones [K], the text column of each cell's symbol, the
    lowercase cells and the bracketed cells (the slow, obvious reading of the picture)."""
    lines = text.splitlines()
    assert len(lines) == board.side + 1, "one line per row and one of column letters"
    stones = np.full(board.num_cells, -1)
    columns, lower, bracketed = {}, set(), set()
    for line, r in zip(lines[:-1], range(board.side - 1, -1, -1), strict=True):
        label, body = line[: len(str(board.side))], line[len(str(board.side)) :]
        assert label.strip() == str(r + 1)
        symbols = [(m.start() + len(label), m.group()) for m in re.finditer(r"[.BYby]", body)]
        cells = board.grid_to_cell[r, : 2 * board.side - 1 - r]
        assert len(symbols) == len(cells), f"row {r + 1} has {len(symbols)} symbols"
        for cell, (column, symbol) in zip(cells, symbols, strict=True):
            stones[cell] = ".BY".index(symbol.upper())
            columns[int(cell)] = column
            if symbol.islower():
                lower.add(int(cell))
            if line[column - 1] == "[" and line[column + 1] == "]":
                bracketed.add(int(cell))
    return stones, columns, lower, bracketed


# ---------------------------------------------------------------------- ASCII
@pytest.mark.parametrize("side", SIDES)
def test_ascii_reads_back_stones_rows_and_hex_offsets(side: int) -> None:
    board = Board(side)
    stones = random_stones(board, side)
    text = render_ascii(stones, board)
    read, columns, lower, bracketed = read_ascii(text, board)
    np.testing.assert_array_equal(read, stones)
    assert not lower and not bracketed
    # Each cell's text column is an affine function of its hexagon's centre: the rows are
    # offset by half a cell, exactly like the drawing.
    x = cell_centers(board)[:, 0]
    cols = np.array([columns[c] for c in range(board.num_cells)])
    width = cols[1] - cols[0]
    assert width in (2, 4)
    np.testing.assert_allclose(cols - width * x, cols[0] - width * x[0])
    letters = text.splitlines()[-1].split()
    assert letters == [board.names[c][:-1] for c in board.grid_to_cell[0, : 2 * side - 1]]


def test_ascii_stone_positions_named_in_rules() -> None:
    board = Board(10)
    stones = np.zeros(board.num_cells, np.int8)
    stones[board.parse_action("s1")] = 1
    stones[board.parse_action("a10")] = 2
    lines = render_ascii(stones, board).splitlines()
    assert lines[0].split()[1] == "Y" and set(lines[0].split()[2:]) == {"."}
    assert lines[-2].split()[-1] == "B" and set(lines[-2].split()[1:-1]) == {"."}
    assert lines[-1].split()[0] == "a" and lines[-1].split()[-1] == "s"


def test_ascii_names_match_rules_diagram() -> None:
    board = Board(10)
    text = render_ascii(np.zeros(board.num_cells, np.int8), board, show_names=True)
    rows = [line[3:] for line in text.splitlines()[:-1]]
    assert rows == RULES_DIAGRAM.splitlines()


def test_ascii_marks_winning_group_and_last_move() -> None:
    board = Board(4)
    game = BatchGame(1, board)
    rng = np.random.default_rng(5)
    while not game.is_over[0]:
        game.step(random_legal_actions(game.legal_mask(), rng))
    group = game.winning_group(0)
    last = int(game.last_action[0])
    text = render_ascii(game.stones[0], board, last_action=last, winning_cells=group)
    stones, _, lower, bracketed = read_ascii(text, board)
    np.testing.assert_array_equal(stones, game.stones[0])
    assert lower == set(group.tolist())
    assert bracketed == {last}
    assert text.count("[") == 1 and text.count("]") == 1
    coloured = render_ascii(
        game.stones[0], board, last_action=last, winning_cells=group, color=True
    )
    assert "\x1b[" in coloured and ANSI.sub("", coloured) == text


def test_ascii_last_action_swap_marks_the_swapped_stone() -> None:
    board = Board(3)
    stones = np.zeros(board.num_cells, np.int8)
    stones[board.parse_action("b2")] = 2
    _, _, _, bracketed = read_ascii(render_ascii(stones, board, last_action="swap"), board)
    assert bracketed == {board.parse_action("b2")}
    assert "[" not in render_ascii(stones, board, last_action=-1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stones": np.zeros(5, np.int8)}, "shape"),
        ({"stones": np.full(12, 3, np.int8)}, "0 \\(empty\\)"),
        ({"stones": np.zeros(12, np.float32)}, "integers"),
        ({"winning_cells": ["swap"]}, "swap is not a cell"),
        ({"winning_cells": ["z9"]}, "not a cell"),
        ({"last_action": 99}, "out of range"),
        ({"last_action": "swap"}, "0 stones"),
    ],
)
def test_ascii_bad_input_is_named(kwargs: dict, message: str) -> None:
    board = Board(3)
    stones = kwargs.pop("stones", np.zeros(board.num_cells, np.int8))
    with pytest.raises(ValueError, match=message):
        render_ascii(stones, board, **kwargs)


# ---------------------------------------------------------------------- geometry
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
    for k, quads in enumerate(_region_bands(board)):
        inner_mids = np.array([(q[0] + q[1]) / 2 for q in quads])
        nearest = np.linalg.norm(inner_mids[:, None] - centers[None], axis=-1).argmin(1)
        np.testing.assert_array_equal(np.unique(nearest), board.cells_of_region(k))
    # j1, where the bottom regions meet: its lower-left edge is bottom-left, lower-right is
    # bottom-right.
    j1 = board.grid_to_cell[0, side - 1]
    for k, sign in ((0, -1), (1, 1)):
        mids = np.array([(q[0] + q[1]) / 2 for q in _region_bands(board)[k]])
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
    segments = _edges_between(board, above, below, off_board=False)
    assert len(segments) == len(pairs)
    centers = cell_centers(board)
    for segment in segments:  # each segment is the perpendicular bisector piece of a pair
        mid = segment.mean(axis=0)
        two = np.argsort(np.linalg.norm(centers - mid, axis=1))[:2]
        assert frozenset(two.tolist()) in pairs


# ---------------------------------------------------------------------- images
def colour_mask(image: np.ndarray, hex_colour: str) -> np.ndarray:
    """[h, w] bool: pixels within 2 levels of ``hex_colour`` in each channel."""
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return np.abs(image.astype(int) - rgb).max(axis=-1) <= 2


def colour_pixels(image: np.ndarray, hex_colour: str) -> int:
    return int(colour_mask(image, hex_colour).sum())


def test_board_image_shape_dtype_and_stone_colours() -> None:
    board = Board(10)
    stones = np.zeros(board.num_cells, np.int8)
    empty = board_image(stones, board)
    assert empty.dtype == np.uint8 and empty.ndim == 3 and empty.shape[1:] == (600, 3)
    assert colour_pixels(empty, STONE_COLORS[1]) == 0 and colour_pixels(empty, STONE_COLORS[2]) == 0
    stones[[0, 18]] = 1, 2
    image = board_image(stones, board, last_action=18, winning_cells=[0], title="t")
    assert image.shape[1] == 600 and image.shape[0] > empty.shape[0]  # room for the title
    assert colour_pixels(image, STONE_COLORS[1]) > 50 and colour_pixels(image, STONE_COLORS[2]) > 50
    blue_x = np.nonzero(colour_mask(image, STONE_COLORS[1]))[1].mean()
    yellow_x = np.nonzero(colour_mask(image, STONE_COLORS[2]))[1].mean()
    assert blue_x < 100 < 500 < yellow_x  # a1 at the left end of the bottom row, s1 the right
    assert board_image(stones, board, width_px=300).shape[1] == 300


def test_heatmap_with_nan_centre_contour_and_marks() -> None:
    board = Board(4)
    values = np.linspace(0.2, 0.9, board.num_cells)
    values[3] = np.nan
    fig = draw_board(
        np.zeros(board.num_cells, np.int8),
        board,
        values=values,
        center=0.5,
        contour_at=0.5,
        colorbar_label="share",
        value_format="{:.2f}",
        marks={"a1": "A", 5: "B"},
        show_names=True,
    )
    assert len(fig.axes) == 2 and fig.axes[1].get_xlabel() == "share"
    np.testing.assert_allclose(fig.axes[1].get_xlim(), (0.1, 0.9))  # symmetric about 0.5
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "A" in texts and "B" in texts and "a1" in texts and "0.20" in texts
    assert sum(t == "nan" for t in texts) == 0
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[..., :3]
    assert colour_pixels(image, "#b4b4b4") > 100  # the NaN cell is grey
    plain = board_image(np.zeros(board.num_cells, np.int8), board, values=values, marks=[0, 1])
    assert plain.dtype == np.uint8


def test_draw_into_given_axes() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    board = Board(3)
    fig = Figure(figsize=(8, 3))
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    assert draw_board(random_stones(board, 0), board, ax=left, title="left") is fig
    draw_board(random_stones(board, 1), board, ax=right, values=np.arange(board.num_cells))
    assert len(fig.axes) == 3  # two boards and one colour bar
    fig.canvas.draw()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": np.zeros(3)}, "values must have shape"),
        ({"contour_at": 0.5}, "need values"),
        ({"values": np.linspace(0, 1, 12), "center": 0.5, "vmin": 0.6}, "strictly between"),
        ({"values": np.linspace(0, 1, 12), "vmin": 1.0, "vmax": 0.0}, "above vmax"),
        ({"marks": ["swap"]}, "marks: the swap"),
    ],
)
def test_draw_bad_input_is_named(kwargs: dict, message: str) -> None:
    board = Board(3)
    with pytest.raises(ValueError, match=message):
        draw_board(np.zeros(board.num_cells, np.int8), board, **kwargs)


def test_save_board_writes_png(tmp_path) -> None:
    board = Board(4)
    path = tmp_path / "board.png"
    save_board(path, random_stones(board, 2), board, show_names=True, dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="ax"):
        save_board(path, random_stones(board, 2), board, ax=object())


def test_import_does_not_load_matplotlib() -> None:
    code = "import sys, trapy_rl.game.render; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
