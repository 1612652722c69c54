"""benchmarks/peers/mctx_pgx.py: our side of each comparison without the extra, and with the
``peers`` extra (mctx, pgx) the whole quick run, end to end (slow: XLA compiles two graphs)."""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the benchmarks and scripts folders, beside the package
mctx_pgx = importlib.import_module("benchmarks.peers.mctx_pgx")


def test_our_side_measures_without_the_extra():
    assert mctx_pgx.our_search_rate(4, 4)(0) > 0
    play, state_bytes = mctx_pgx.our_play_rate(8)
    assert play(0) > 0
    assert state_bytes > 7 * 145  # stones, labels (2 bytes), regions, legal, history (2 bytes)
    assert mctx_pgx.copy_bandwidth(1, mib=4) > 0
    ours, theirs, a, b = mctx_pgx._median_pair(lambda r: r, lambda r: 2 * r, 3)
    assert (ours, theirs, a, b) == (1, 2, [0, 1, 2], [0, 2, 4])


@pytest.mark.slow
def test_the_quick_run_writes_every_row(tmp_path):
    pytest.importorskip("mctx", reason="needs the peers extra (pip install 'trapy-rl[peers]')")
    pytest.importorskip("pgx", reason="needs the peers extra (pip install 'trapy-rl[peers]')")
    out = tmp_path / "peers.json"
    assert mctx_pgx.main(["--quick", "--cores", "all", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert "jax" in written["machine"] and "mctx" in written["machine"]
    names = [row["name"] for row in written["rows"]]
    for wanted in ("(a) ours / mctx", "(b) ours / pgx", "(c) the shipped net, multiply-adds"):
        assert any(name.startswith(wanted) for name in names), wanted
    assert all(math.isfinite(row["value"]) and row["value"] > 0 for row in written["rows"])
