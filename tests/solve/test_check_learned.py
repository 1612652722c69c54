"""v* as an opening map's values (`exact_values`), and scripts/check_learned.py's cheap parts:
the description's claim on the solved tables, the side-6 estimate, bad input refused in one
line."""

from __future__ import annotations

import copy
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from trapy_rl.game import Board
from trapy_rl.solve.openings import exact_values, load_openings

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_learned.py"


@pytest.fixture(scope="module")
def check_learned():
    spec = importlib.util.spec_from_file_location("check_learned", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exact_values_follow_the_table_cell_by_cell():
    table = load_openings(4)
    board = Board(4)
    v = exact_values(table)
    assert v.shape == (board.num_cells,) and v.dtype == np.float64
    for name, cell in table["cells"].items():
        assert v[board.parse_action(name)] == float(cell["stone_wins"])
    assert np.array_equal(v, v[board.mirror_cells])  # the rules are symmetric


def test_exact_values_of_a_partial_table_are_nan_where_unsolved():
    table = copy.deepcopy(load_openings(4))
    del table["cells"]["a1"], table["cells"]["g1"]
    v = exact_values(table)
    board = Board(4)
    assert np.isnan(v[[board.parse_action("a1"), board.parse_action("g1")]]).all()
    assert np.isnan(v).sum() == 2


def test_the_claim_on_side_4(check_learned, capsys):
    result = check_learned.claims(4, load_openings(4))
    assert result["middle"] == "d1" and result["middle_wins"]
    assert result["solved"] == 22 and result["near"] == ["c1", "d1", "e1", "c2", "d2"]
    assert result["near_share"] == pytest.approx(3 / 5)
    assert result["elsewhere_share"] == pytest.approx(5 / 17)
    assert "Mann-Whitney" in capsys.readouterr().out


def test_side_6_is_extrapolated_from_sides_4_and_5(check_learned):
    tables = {4: load_openings(4), 5: load_openings(5)}
    out = check_learned.cost(tables)
    assert out["side6_cells"] == 51 and out["side6_unique"] == 27
    assert out["growth_4_to_5"] > 1 and out["per_empty_cell"] > 1
    low, high = out["side6_nodes_per_cell"]
    assert 0 < low <= high


@pytest.mark.parametrize(
    "args, message",
    [(["maps", "--side", "4"], "give --checkpoints"), (["moves"], "give --checkpoint")],
)
def test_missing_arguments_are_one_line(args, message):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and message in done.stderr


def test_exact_values_are_drawn(tmp_path):
    from trapy_rl.solve.openings import draw_exact_values

    partial = copy.deepcopy(load_openings(4))
    del partial["cells"]["a1"]  # drawn grey
    figure = draw_exact_values(partial)
    assert "21 of 22 solved" in figure.axes[0].get_title()
    figure.savefig(tmp_path / "v.png")
    assert (tmp_path / "v.png").stat().st_size > 0
