"""Solved openings: the exact value of every first move of a small board, as package data.

For a first stone on cell c (blue's; yellow moves next) two positions are solved:

- **without the swap** (the stone on c, yellow to move, the swap no longer legal):
  ``stone_wins`` = v*(c), whether the stone's owner wins; ``reply``, a winning answer of
  yellow's when the stone loses (None when it wins: then no answer saves yellow);
- **with the swap** (the game's real second move): ``second_player_wins``, whether yellow
  wins, and ``second_move``, a winning move of yellow's: ``"swap"`` when the stone wins,
  else the reply. Trap Y never draws, so yellow always wins here: either the stone wins (and
  yellow takes it over) or it loses (and yellow answers it). The solver proves it cell by cell.

``trapy_rl/solve/data/side{n}.json`` holds one `Opening` per cell (cell order; a cell's mirror
image is solved once and copied, with ``mirror_of`` naming the cell solved), the solver's
settings and how the nodes were counted, totals, and whether every cell is solved. A table
solved in legs with a node budget a cell (a board too large for one run) also lists the cells
not proven within their budget (``unproven``, with the budget spent) and each leg's command,
commit and totals (``legs``); ``scripts/solve_openings.py`` writes them.

>>> table = load_openings(4)
>>> table["complete"], table["cells"]["c3"]["stone_wins"]
(True, True)
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.draw import draw_board
from trapy_rl.game.state import BLUE, YELLOW
from trapy_rl.solve.solver import SolveBudgetError, Solver, load_compiled

__all__ = [
    "FORMAT",
    "Opening",
    "Unproven",
    "draw_exact_values",
    "exact_values",
    "load_openings",
    "new_table",
    "read_openings",
    "solve_openings",
    "write_openings",
]

FORMAT = 1
"""The version of the file layout."""

DEFINITIONS = {
    "stone_wins": "v*(c): blue's lone stone on c, yellow to move, the swap no longer legal: "
    "whether the stone's owner (blue) wins",
    "reply": "a winning answer of yellow's in that position (a cell), null when the stone wins",
    "second_player_wins": "the same stone, yellow to move with the swap legal (the game's "
    "second move): whether yellow wins",
    "second_move": "a winning move of yellow's there: 'swap' when the stone wins, else the reply",
    "nodes": "positions the solver expanded for this cell, both positions together, with the "
    "transposition table kept from the cells solved before it in the same run",
    "mirror_of": "the cell whose mirror image this is, solved in its place (nodes null)",
}


@dataclass(frozen=True)
class Opening:
    """The solved values of one first move (see the module docstring for each field)."""

    cell: str
    stone_wins: bool
    reply: str | None
    second_player_wins: bool
    second_move: str
    nodes: int | None
    seconds: float | None
    cpu_seconds: float | None
    mirror_of: str | None = None

    def mirrored(self, board: Board) -> Opening:
        """The same result for the mirror image of the cell."""

        def mirror(name: str | None) -> str | None:
            if name is None or name == "swap":
                return name
            return board.action_name(int(board.mirror_cells[board.parse_action(name)]))

        return dataclasses.replace(
            self,
            cell=mirror(self.cell),
            reply=mirror(self.reply),
            second_move=mirror(self.second_move),
            nodes=None,
            seconds=None,
            cpu_seconds=None,
            mirror_of=self.cell,
        )


@dataclass(frozen=True)
class Unproven:
    """A first move not proven within its node budget (both positions together)."""

    cell: str
    max_nodes: int
    seconds: float
    cpu_seconds: float


def solve_opening(solver: Solver, cell: int, *, max_nodes: int | None = None) -> Opening:
    """Solve both positions of a first stone on ``cell`` (see the module docstring).

    Raises:
        SolveBudgetError: not proven within ``max_nodes`` positions for both positions together.
    """
    board = solver.board
    stones = np.zeros(board.num_cells, dtype=np.int8)
    stones[cell] = BLUE
    load_compiled()  # the first cell's clock without the compiler's seconds
    started, cpu = time.perf_counter(), time.process_time()
    plain = solver.solve_position(stones, YELLOW, swap=False, max_nodes=max_nodes)
    left = None if max_nodes is None else max(max_nodes - plain.nodes, 1)
    swapped = solver.solve_position(stones, YELLOW, swap=True, max_nodes=left)
    if swapped.move is None:  # pragma: no cover - would contradict the rules
        raise AssertionError(f"{board.cell_name(cell)}: yellow loses with the swap legal")
    return Opening(
        cell=board.cell_name(cell),
        stone_wins=not plain.win,
        reply=None if plain.move is None else board.action_name(plain.move),
        second_player_wins=swapped.win,
        second_move=board.action_name(swapped.move),
        nodes=plain.nodes + swapped.nodes,
        seconds=round(time.perf_counter() - started, 3),
        cpu_seconds=round(time.process_time() - cpu, 3),
    )


def solve_openings(
    solver: Solver, table: dict, *, max_nodes: int | None = None
) -> Iterator[Opening | Unproven]:
    """Solve the cells ``table`` lacks, one of each mirror pair, in cell order; yields each
    result (and its mirror image's) after adding it to ``table``.

    With ``max_nodes``, a cell not proven within that many positions is yielded as `Unproven`
    and listed in ``table["unproven"]`` with the budget; a cell listed there with a budget at
    least as large is skipped (the search is deterministic: it would fail again)."""
    board = solver.board
    unproven = table.setdefault("unproven", {})
    for cell in range(board.num_cells):
        image = int(board.mirror_cells[cell])
        name = board.cell_name(cell)
        if image < cell or name in table["cells"]:
            continue
        tried = unproven.get(name, {}).get("max_nodes", 0)
        if max_nodes is not None and tried >= max_nodes:
            continue
        started, cpu = time.perf_counter(), time.process_time()
        try:
            opening = solve_opening(solver, cell, max_nodes=max_nodes)
        except SolveBudgetError:
            miss = Unproven(
                name,
                int(max_nodes or 0),
                round(time.perf_counter() - started, 3),
                round(time.process_time() - cpu, 3),
            )
            unproven[name] = {k: v for k, v in dataclasses.asdict(miss).items() if k != "cell"}
            yield miss
            continue
        unproven.pop(name, None)
        _add(table, opening, board)
        yield opening
        if image != cell:
            mirrored = opening.mirrored(board)
            _add(table, mirrored, board)
            yield mirrored


def _add(table: dict, opening: Opening, board: Board) -> None:
    cells = table["cells"]
    cells[opening.cell] = {k: v for k, v in dataclasses.asdict(opening).items() if k != "cell"}
    # Cell order, whatever the order of solving.
    order = {board.cell_name(c): c for c in range(board.num_cells)}
    table["cells"] = dict(sorted(cells.items(), key=lambda item: order[item[0]]))
    solved = [v for v in table["cells"].values() if v["nodes"] is not None]
    table["totals"] = {
        "cells": len(table["cells"]),
        "solved": len(solved),
        "nodes": sum(v["nodes"] for v in solved),
        "seconds": round(sum(v["seconds"] for v in solved), 3),
        "cpu_seconds": round(sum(v["cpu_seconds"] for v in solved), 3),
    }
    table["complete"] = len(table["cells"]) == board.num_cells


def new_table(solver: Solver, *, machine: str = "") -> dict:
    """An empty table for the solver's board, recording its settings."""
    return {
        "format": FORMAT,
        "side": solver.board.side,
        "definitions": DEFINITIONS,
        "solver": {
            "method": solver.method,
            "eps": solver.eps,
            "deep": solver.deep,
            "connections": solver.connections,
            "proof_sets": solver.proof_sets,
            "table_bits": solver.table_bits,
        },
        "machine": machine,
        "complete": False,
        "totals": {},
        "cells": {},
    }


def read_openings(path: str | Path) -> dict:
    """A table written by `write_openings`, checked for its format and cells.

    Raises:
        ValueError: naming the file, for another format, an unknown side or cell.
    """
    path = Path(path)
    try:
        table = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a JSON file ({error.msg}, line {error.lineno})") from None
    if not isinstance(table, dict) or table.get("format") != FORMAT:
        raise ValueError(f"{path}: not a solved-openings file of format {FORMAT}")
    try:
        board = Board(table["side"])
        for name in table["cells"]:
            board.parse_action(name)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    return table


def write_openings(table: dict, path: str | Path) -> None:
    """Write ``table`` as JSON, atomically (a reader never sees half a file)."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(table, indent=1) + "\n")
    os.replace(temporary, path)


def exact_values(table: dict) -> np.ndarray:
    """[K] float64: v*(c) of every cell of ``table``'s board, 1.0 where the stone wins, 0.0
    where it loses, NaN where the cell is not solved yet (a partial table); the same scale as
    an opening map's v (`trapy_rl.analysis`), so the two compare cell by cell.

    >>> v = exact_values(load_openings(4))
    >>> v.shape, int(v.sum())
    ((22,), 8)
    """
    board = Board(table["side"])
    values = np.full(board.num_cells, np.nan)
    for name, cell in table["cells"].items():
        values[board.parse_action(name)] = 1.0 if cell["stone_wins"] else 0.0
    return values


def draw_exact_values(table: dict, *, ax: Any = None, figwidth: float = 6.5):
    """v* on the board: red where the stone wins (yellow swaps it), blue where it loses, grey
    where a partial table has no value yet; the swap boundary outlined and the middle of the
    long edge (where the two bottom regions meet) ringed.

    Args:
        table: solved openings (`load_openings`, `read_openings`).
        ax: draw into these axes (default: a new figure ``figwidth`` inches wide).

    Returns:
        The matplotlib Figure.
    """
    board = Board(table["side"])
    v_star = exact_values(table)
    solved = int((~np.isnan(v_star)).sum())
    return draw_board(
        np.zeros(board.num_cells, dtype=np.int8),
        board,
        ax=ax,
        values=v_star,
        cmap="coolwarm",
        vmin=0.0,
        vmax=1.0,
        contour_at=0.5,
        show_names=True,
        marks=[board.cell_index(0, 0)],
        colorbar_label="v*: 1 the stone wins (yellow swaps), 0 it loses",
        title=f"side {board.side}: v* of every first move ({solved} of {board.num_cells} solved)",
        figwidth=figwidth,
    )


def load_openings(side: int) -> dict:
    """The solved openings shipped with the package for ``side``.

    Raises:
        ValueError: when none are shipped for that side.
    """
    source = resources.files("trapy_rl.solve").joinpath("data", f"side{side}.json")
    if not source.is_file():
        raise ValueError(f"no solved openings are shipped for side {side}")
    with resources.as_file(source) as path:
        return read_openings(path)
