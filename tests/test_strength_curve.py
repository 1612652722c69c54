"""scripts/strength_curve.py: the long runs' nets refitted from the committed match cache."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tiny import tiny_payload

from trapy_rl.eval.pool import load_pool, rate_against_pool
from trapy_rl.game import Board
from trapy_rl.train.checkpoint import save_checkpoint

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def curve(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))  # it imports long_runs from its own folder
    spec = importlib.util.spec_from_file_location("strength_curve", SCRIPTS / "strength_curve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_draw_refits_each_side_10_net_from_the_cache_and_skips_other_sides(
    curve, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # the script names nets relative to the repository
    folder = curve.LONG_RUNS / "run-s0"
    folder.mkdir(parents=True)
    for iteration, side, cpu_hours in ((10, 5, 0.1), (20, 10, 0.5)):
        payload = tiny_payload(side=side, iteration=iteration)
        payload["clock"] = {"seconds": 7200 * cpu_hours, "cpu_seconds": 3600 * cpu_hours}
        save_checkpoint(folder / f"net_it{iteration:06d}.pt", payload)
    net = f"mcts:{(folder / 'net_it000020.pt').as_posix()}:2"
    members = load_pool("default", side=10).select(["random", "uct:1"])
    rate_against_pool([net], members, board=Board(10), num_games=2, cache_path=curve.CACHE)

    assert [net.name for _, net in curve._nets([])] == ["net_it000020.pt"]  # side 5 left out
    plot = tmp_path / "curve.png"
    curve.draw([], simulations=2, plot=plot)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| run-s0")]
    assert len(rows) == 1
    assert rows[0].startswith("| run-s0 | 20 | 0.50 |")
    assert rows[0].endswith("| 4 |") and plot.stat().st_size > 0
    curve.draw([], simulations=200, plot=None)  # no match at 200 simulations: no row
    assert "| run-s0" not in capsys.readouterr().out
