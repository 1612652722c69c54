"""The board as text: the ASCII diagram read back, against the documented diagram and the
drawing's geometry; the input checks; the picture modules import without matplotlib."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from trapy_rl.envs.trap_y_env import TrapYEnv
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.geometry import cell_centers
from trapy_rl.game.render import render_ascii
from trapy_rl.game.sampling import random_legal_actions

SIDES = (2, 3, 4, 10, 14)
ANSI = re.compile(r"\x1b\[[0-9;]*m")

README = Path(__file__).resolve().parents[2] / "README.md"


def names_diagram(text: str) -> list[str]:
    """The ten lines of docs/rules.md's diagram of the side-10 cell names, as ``text`` quotes it."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if line.split()[:2] == ["a10", "b10"])
    return lines[top : top + 10]


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
    # docs/rules.md's diagram, as the README and the environment's docstring quote it.
    board = Board(10)
    text = render_ascii(np.zeros(board.num_cells, np.int8), board, show_names=True)
    rows = [line[3:] for line in text.splitlines()[:-1]]
    assert rows == names_diagram(README.read_text(encoding="utf-8"))
    assert rows == names_diagram(inspect.getdoc(TrapYEnv))


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


@pytest.mark.parametrize(
    "module",
    ["trapy_rl.game", "trapy_rl.game.render", "trapy_rl.game.geometry", "trapy_rl.game.draw"],
)
def test_import_does_not_load_matplotlib(module: str) -> None:
    code = f"import sys, {module}; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
