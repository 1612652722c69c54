"""The published played maps: the package's copies are docs/'s, and are read by name or path."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from trapy_rl.analysis import load_played_map, shipped_map_names
from trapy_rl.analysis.openings import read_opening_json, write_opening_table
from trapy_rl.analysis.published import map_stem

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "trapy_rl" / "analysis" / "data"


def test_the_shipped_maps_are_docs_maps_byte_for_byte():
    docs = {path.name: path for path in (ROOT / "docs").glob("openings-*.json")}
    shipped = {path.name: path for path in SHIPPED.glob("openings-*.json")}
    assert set(shipped) == set(docs) == {"openings-seed_0.json", "openings-seed_1.json"}
    for name, path in shipped.items():
        assert path.read_bytes() == docs[name].read_bytes(), name


def test_a_shipped_map_is_read_by_its_label():
    assert shipped_map_names() == ("seed_0", "seed_1")
    board, table = load_played_map("seed 0")
    docs_board, docs_table = read_opening_json(ROOT / "docs" / "openings-seed_0.json")
    assert board.side == docs_board.side == 10
    pd.testing.assert_frame_equal(table, docs_table)
    assert table.attrs["key"] == docs_table.attrs["key"]
    _, same = load_played_map("seed_0")
    pd.testing.assert_frame_equal(same, table)
    _, other = load_played_map("seed 1")
    assert not other["v"].equals(table["v"])


def test_any_map_is_read_by_its_path(tmp_path, monkeypatch):
    _, table = load_played_map("seed 1")
    _, json_path = write_opening_table(table, tmp_path / "mine")
    for source in (json_path, str(json_path)):
        _, again = load_played_map(source)
        pd.testing.assert_frame_equal(again, table)
    # A file whose name is a shipped label is read as a file when given as a path.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seed 0").write_bytes(json_path.read_bytes())
    _, by_path = load_played_map(Path("seed 0"))
    pd.testing.assert_frame_equal(by_path, table)


def test_neither_a_shipped_map_nor_a_file_is_one_line(tmp_path):
    missing = tmp_path / "nothing.json"
    with pytest.raises(ValueError) as error:
        load_played_map("seed 7")
    assert str(error.value) == (
        "'seed 7': no such file, nor a played map the package ships (seed_0, seed_1)"
    )
    with pytest.raises(ValueError, match=r"no such file, nor a played map") as error:
        load_played_map(missing)
    assert "\n" not in str(error.value)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match=r"bad.json: not an opening table's JSON"):
        load_played_map(tmp_path / "bad.json")


def test_the_stem_of_a_label():
    assert map_stem("seed 0") == map_stem("seed_0") == "openings-seed_0"
    assert map_stem(" a/b  c ") == "openings-a_b_c"
