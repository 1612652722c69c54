"""Board pictures with matplotlib: images, stone colours, heatmaps, given axes, files."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.game.board import Board
from trapy_rl.game.draw import STONE_COLORS, board_image, draw_board, save_board


def random_stones(board: Board, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 3, board.num_cells).astype(np.int8)


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
