"""The shipped solved openings, checked against the solver and the rules; the script resumes.

Side 4's table is checked whole: every value solved again, every winning reply replayed with
`GameState.play` and the position after it solved again (lost for blue), mirror images
consistent. Side 5's (complete or partial) is checked for its form and consistency.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trapy_rl.game import Board, GameState
from trapy_rl.solve import Solver
from trapy_rl.solve.openings import load_openings, read_openings

ROOT = Path(__file__).resolve().parents[2]


def check_consistent(table: dict) -> None:
    board = Board(table["side"])
    for name, cell in table["cells"].items():
        assert cell["second_player_wins"]
        if cell["stone_wins"]:
            assert cell["reply"] is None and cell["second_move"] == "swap"
        else:
            assert cell["second_move"] == cell["reply"] != "swap"
        image = board.action_name(int(board.mirror_cells[board.parse_action(name)]))
        if image in table["cells"] and image != name:
            other = table["cells"][image]
            assert other["stone_wins"] == cell["stone_wins"]
            assert (cell["mirror_of"] is None) != (other["mirror_of"] is None)
        if cell["mirror_of"] is None:
            assert cell["nodes"] > 0 and cell["seconds"] >= 0 and cell["cpu_seconds"] >= 0
        else:
            assert cell["nodes"] is None and cell["mirror_of"] == image


def test_side4_is_complete_and_true() -> None:
    table = load_openings(4)
    assert table["complete"] and len(table["cells"]) == Board(4).num_cells
    check_consistent(table)
    board = Board(4)
    solver = Solver(board)
    for name, cell in table["cells"].items():
        opening = GameState.from_moves([name], board)
        plain = solver.solve_position(opening.stones, 2, swap=False)
        assert plain.win != cell["stone_wins"], name
        with_swap = solver.solve(opening)
        assert with_swap.win and cell["second_player_wins"]
        after = opening.copy().play(cell["second_move"])
        assert not solver.solve(after).win, (name, cell["second_move"])
        if cell["reply"] is not None:
            answered = opening.copy()
            answered.history = [-1, -1]  # the swap no longer legal
            answered.play(cell["reply"])
            assert not solver.solve(answered).win, (name, cell["reply"])


def test_side5_form() -> None:
    table = load_openings(5)
    assert table["side"] == 5 and table["cells"]
    check_consistent(table)
    assert table["complete"] == (len(table["cells"]) == Board(5).num_cells)


def test_unknown_side_and_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no solved openings are shipped for side 9"):
        load_openings(9)
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(ValueError, match="not a JSON file"):
        read_openings(path)
    path.write_text(json.dumps({"format": 1, "side": 3, "cells": {"z9": {}}}))
    with pytest.raises(ValueError, match="'z9' is not a cell of the side-3 board"):
        read_openings(path)
    path.write_text(json.dumps({"format": 0}))
    with pytest.raises(ValueError, match="not a solved-openings file"):
        read_openings(path)


def run_script(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(ROOT / "scripts" / "solve_openings.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def test_script_writes_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "side3.json"
    done = run_script("--side", "3", "--out", str(out), "--table-bits", "16")
    assert done.returncode == 0, done.stderr
    table = read_openings(out)
    assert table["complete"] and len(table["cells"]) == 12
    check_consistent(table)
    assert "ETA" in done.stderr and "nodes/s" in done.stderr
    # Drop two cells (one mirror pair) and one lone cell: only those are solved again.
    partial = dict(table)
    partial["cells"] = {k: v for k, v in table["cells"].items() if k not in ("a1", "e1", "b2")}
    out.write_text(json.dumps(partial))
    again = run_script("--side", "3", "--out", str(out), "--table-bits", "16")
    assert again.returncode == 0, again.stderr
    assert "9 of 12 cells" in again.stderr and "2 to solve" in again.stderr
    resumed = read_openings(out)
    assert resumed["complete"]
    for name, cell in table["cells"].items():
        assert resumed["cells"][name]["stone_wins"] == cell["stone_wins"]
    wrong = run_script("--side", "4", "--out", str(out))
    assert wrong.returncode == 2 and "holds side 3, not side 4" in wrong.stderr


def test_script_solves_in_legs(tmp_path: Path) -> None:
    """A leg with a small budget a cell lists what it could not prove; a larger one finishes."""
    out = tmp_path / "side3.json"
    first = run_script("--side", "3", "--out", str(out), "--table-bits", "16", "--max-nodes", "20")
    assert first.returncode == 0, first.stderr
    assert "not proven within 20 positions" in first.stderr
    table = read_openings(out)
    assert not table["complete"] and table["unproven"]
    assert all(cell["max_nodes"] == 20 for cell in table["unproven"].values())
    assert not set(table["unproven"]) & set(table["cells"])
    [leg] = table["legs"]
    assert leg["command"].endswith("--max-nodes 20") and leg["max_nodes"] == 20
    assert leg["proven"] + leg["unproven"] == 7 and leg["unproven"] == len(table["unproven"])
    # The same budget again tries nothing (and records no leg); a larger one proves the rest.
    again = run_script("--side", "3", "--out", str(out), "--table-bits", "16", "--max-nodes", "20")
    assert "0 to solve" in again.stderr
    done = run_script("--side", "3", "--out", str(out), "--table-bits", "16", "--max-nodes", "1e4")
    assert done.returncode == 0, done.stderr
    table = read_openings(out)
    assert table["complete"] and not table["unproven"] and len(table["legs"]) == 2
    check_consistent(table)
    bad = run_script("--side", "3", "--out", str(out), "--max-nodes", "2.5")
    assert bad.returncode == 2 and "--max-nodes must be a whole number" in bad.stderr
