"""The opening report: two played maps, compared, drawn and written as Markdown."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from tiny import write_tiny_checkpoint

import trapy_rl.analysis.report as report_module
from trapy_rl.analysis.openings import read_opening_table
from trapy_rl.analysis.report import opening_report

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_report_compares_two_maps_and_writes_every_cell(tmp_path):
    nets = [write_tiny_checkpoint(tmp_path / f"net{seed}.pt", side=3, seed=seed) for seed in (0, 1)]
    report = opening_report(
        tmp_path / "out",
        agents=[f"mcts:{net}:4,noise=true,temperature_moves=3" for net in nets],
        labels=["a", "b"],
        net=nets[0],
        side=3,
        playouts=4,
        refine_fairest=2,
        half_width=0.15,
        cache_dir=tmp_path / "cache",
        ship=tmp_path / "ship",
        command="the command",
    )
    assert set(report.tables) == {"a", "b"} and report.net_table is not None
    for label in ("a", "b"):  # the package's copy of each map is the report's, byte for byte
        shipped = report.paths[f"shipped-{label}"]
        assert shipped == tmp_path / "ship" / f"openings-{label}.json"
        assert shipped.read_bytes() == report.paths[f"json-{label}"].read_bytes()
    assert sorted(p.name for p in (tmp_path / "ship").iterdir()) == [
        "openings-a.json",
        "openings-b.json",
    ]
    for label in ("a", "b"):
        board, table = read_opening_table(report.paths[f"csv-{label}"])
        assert board.side == 3 and table["games"].min() >= 4
        rows = json.loads(report.paths[f"json-{label}"].read_text())["rows"]
        assert [row["v"] for row in rows] == pytest.approx(table["v"].tolist())
        fairest = table.sort_values("rank").head(2)
        assert ((fairest["high"] - fairest["low"]) / 2 <= 0.15).all()
    text = report.paths["report"].read_text()
    assert "the command" in text and f"{report.agreement.spearman:.3f}" in text
    table_lines = [
        line for line in text.splitlines() if line.startswith("| ") and "cell" not in line
    ]
    assert len(table_lines) == 12  # every cell once
    assert sorted(line.split(" | ")[1].split()[0] for line in table_lines) == sorted(
        report.tables["a"]["name"]
    )
    assert "Mann-Whitney" in text and "contain 1/2" in text
    assert "- Unlimited games: the maps' Pearson r is" in text
    assert re.search(r"meet all three bars .* in \d+% with a's map as the truth", text)
    assert "`temperature_moves=3` draws the first 3 moves of a game" in text
    assert text.count("minutes of training clock") == 2  # each net's training record
    for picture in ("map", "fairest"):
        assert report.paths[picture].stat().st_size > 10_000
    # The tables are cached: a second report plays no games and says the same.
    again = opening_report(
        tmp_path / "again",
        agents=[f"mcts:{net}:4,noise=true,temperature_moves=3" for net in nets],
        labels=["a", "b"],
        side=3,
        playouts=4,
        refine_fairest=2,
        half_width=0.15,
        cache_dir=tmp_path / "cache",
    )
    assert all(t.attrs["cached"] for t in again.tables.values())
    pd.testing.assert_frame_equal(again.tables["a"], report.tables["a"])


def test_a_report_extends_the_maps_of_an_earlier_one(tmp_path):
    nets = [write_tiny_checkpoint(tmp_path / f"net{seed}.pt", side=3, seed=seed) for seed in (0, 1)]
    settings = dict(
        agents=[f"mcts:{net}:4,noise=true,temperature_moves=3" for net in nets],
        labels=["seed 0", "seed 1"],
        side=3,
        refine_fairest=0,
        cache_dir=None,
    )
    first = opening_report(tmp_path / "first", playouts=2, **settings)
    more = opening_report(tmp_path / "more", playouts=3, extend=tmp_path / "first", **settings)
    for label in ("seed 0", "seed 1"):
        # 2 then 3 games a cell, pooled with the mirror cell's: 10 a pair, 5 on the axis
        added = more.tables[label]["games"] - first.tables[label]["games"]
        assert set(added) <= {3, 6} and set(more.tables[label]["games"]) <= {5, 10}
        assert more.tables[label].attrs["key"]["sitting"] == 1
    text = more.paths["report"].read_text()
    assert "2 per cell first, then 3 more per cell in a later sitting" in text
    assert "played in 2 sittings" in text


def test_a_report_sets_its_agreement_beside_the_pair_before(tmp_path):
    """The earlier pair's row is its own two maps compared (read back from its JSON)."""
    nets = [write_tiny_checkpoint(tmp_path / f"net{seed}.pt", side=3, seed=seed) for seed in (0, 1)]
    settings = dict(labels=["seed 0", "seed 1"], side=3, refine_fairest=0, cache_dir=None)
    spec = "mcts:{}:4,noise=true,temperature_moves=3"
    earlier = opening_report(
        tmp_path / "earlier", agents=[spec.format(n) for n in nets], playouts=2, **settings
    )
    later = opening_report(
        tmp_path / "later",
        agents=[spec.format(n) for n in reversed(nets)],
        playouts=3,
        before=tmp_path / "earlier",
        **settings,
    )
    rows = [
        line
        for line in later.paths["report"].read_text().splitlines()
        if line.startswith(("| before |", "| these |"))
    ]
    assert len(rows) == 2
    for row, report in zip(rows, (earlier, later)):
        agreement = report.agreement
        assert f"| {agreement.spearman:.3f} | {agreement.fairest_shared} of 12 |" in row
        assert f"| {agreement.same_decision} of {agreement.sure_in_both} |" in row
    assert "net0.pt" in rows[0] and rows[0].index("net0.pt") < rows[0].index("net1.pt")
    assert rows[1].index("net1.pt") < rows[1].index("net0.pt")
    with pytest.raises(ValueError, match="no such file"):
        opening_report(
            tmp_path / "x", agents=[spec.format(n) for n in nets], playouts=2,
            before=tmp_path / "nowhere", **settings,
        )  # fmt: skip


def test_a_report_keeps_its_notes_after_the_agreement(tmp_path):
    """Later findings written into the report each time it is written; a missing notes file
    is refused before any game."""
    nets = [write_tiny_checkpoint(tmp_path / f"net{seed}.pt", side=3, seed=seed) for seed in (0, 1)]
    spec = "mcts:{}:4,noise=true,temperature_moves=3"
    settings = dict(
        agents=[spec.format(n) for n in nets],
        labels=["a", "b"],
        side=3,
        playouts=2,
        refine_fairest=0,
        cache_dir=tmp_path / "cache",
    )
    notes = tmp_path / "notes.md"
    notes.write_text("## What settles it\n\nDeeper play.\n\n", encoding="utf-8")
    text = opening_report(tmp_path / "out", notes=notes, **settings).paths["report"].read_text()
    agreement, claims = text.index("## Do two nets agree?"), text.index("## The original")
    assert agreement < text.index("## What settles it\n\nDeeper play.\n\n## The original") < claims
    with pytest.raises(FileNotFoundError, match=r"nowhere\.md"):
        opening_report(tmp_path / "x", notes=tmp_path / "nowhere.md", **settings)
    assert not (tmp_path / "x").exists()


def test_the_script_refuses_a_bad_net_in_one_line(tmp_path):
    command = [
        sys.executable,
        str(ROOT / "scripts" / "openings_report.py"),
        "--nets",
        str(tmp_path / "missing.pt"),
        "pretrained",
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        "null",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    first = done.stderr.splitlines()[0]
    assert done.returncode != 0 and first.startswith("openings_report: error:")
    assert "missing.pt" in first and "Traceback (most recent call" not in done.stderr


def test_the_script_ships_the_maps_only_of_the_docs_report(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "openings_report", ROOT / "scripts" / "openings_report.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    seen = []

    def fake_report(out_dir, **settings):
        seen.append((Path(out_dir), settings["ship"]))
        return types.SimpleNamespace(agreement="", paths={})

    monkeypatch.setattr(report_module, "opening_report", fake_report)
    script.main([])  # docs/: the package's copies too
    script.main(["--out", str(tmp_path / "out")])  # elsewhere: only there
    script.main(["--out", str(tmp_path / "out"), "--ship", str(tmp_path / "ship")])
    assert seen == [
        (ROOT / "docs", ROOT / "trapy_rl" / "analysis" / "data"),
        (tmp_path / "out", None),
        (tmp_path / "out", tmp_path / "ship"),
    ]
