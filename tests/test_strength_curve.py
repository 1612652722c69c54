"""scripts/strength_curve.py: the long runs' nets refitted from the committed match cache."""

from __future__ import annotations

import importlib.util
import re
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


def _kept_nets(curve) -> str:
    """A run folder (its legs, a side-5 and a side-10 net) beside a folder that is no run; the
    side-10 net's spec at 2 simulations."""
    folder = curve.LONG_RUNS / "run-s0"
    folder.mkdir(parents=True)
    (folder / "legs.json").write_text("[]")
    (curve.LONG_RUNS / "openings").mkdir()  # the played maps' journals: no legs, no nets
    for iteration, side, cpu_hours in ((10, 5, 0.1), (20, 10, 0.5)):
        payload = tiny_payload(side=side, iteration=iteration)
        payload["clock"] = {"seconds": 7200 * cpu_hours, "cpu_seconds": 3600 * cpu_hours}
        save_checkpoint(folder / f"net_it{iteration:06d}.pt", payload)
    return f"mcts:{(folder / 'net_it000020.pt').as_posix()}:2"


def test_draw_refits_each_side_10_net_from_its_panel_matches_alone(
    curve, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # the script names nets relative to the repository
    net = _kept_nets(curve)
    members = load_pool("default", side=10).select(["random", "uct:1"])
    rate_against_pool([net], members, board=Board(10), num_games=2, cache_path=curve.CACHE)

    # the folder without legs and the side-5 net are left out
    assert [net.name for _, net in curve.kept_nets([])] == ["net_it000020.pt"]
    assert curve.kept_nets(["run-s0/net_it000020.pt"]) == curve.kept_nets(
        ["run-s0"]
    )  # one net by name
    with pytest.raises(SystemExit, match=r"no kept net at .*net_it000030"):
        curve.kept_nets(["run-s0/net_it000030.pt"])
    with pytest.raises(SystemExit, match=r"run-s0/net_it000010.pt is a side-5 net, not side 10"):
        curve.kept_nets(["run-s0/net_it000010.pt"])  # named, not left out in silence
    plot = tmp_path / "curve.png"
    curve.draw([], simulations=2, members=["random", "uct:1"], plot=plot)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| run-s0")]
    assert len(rows) == 1
    assert rows[0].startswith("| run-s0 | 20 | 0.50 |")
    assert "| 4 |" in rows[0] and plot.stat().st_size > 0
    curve.draw([], simulations=2, members=["uct:1"], plot=None)  # uct:1's two games alone
    assert "| 2 |" in capsys.readouterr().out
    curve.draw([], simulations=2, members=["uct:1", "uct:4"], plot=None)
    assert re.search(r"\| [0-2]/2 \| - \|$", capsys.readouterr().out, re.MULTILINE)  # unmet: -
    curve.draw([], simulations=2, members=["uct:4"], plot=None)  # no match with the panel
    assert "| run-s0" not in capsys.readouterr().out
    curve.draw([], simulations=200, members=["random"], plot=None)  # none at 200 simulations
    assert "| run-s0" not in capsys.readouterr().out


def test_rate_plays_only_the_games_each_member_still_lacks_on_a_seed_of_its_own(
    curve, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    net = _kept_nets(curve)
    members = load_pool("default", side=10).select(["random", "uct:1"])
    first = members.select(["random"])
    rate_against_pool([net], first, board=Board(10), num_games=2, cache_path=curve.CACHE)

    curve.rate([], simulations=2, members=["random", "uct:1"], games=4)
    scores = curve._scores(net, members)
    assert {member: games for member, (_, games, _) in scores.items()} == {"random": 4, "uct:1": 4}
    assert scores["random"][2] == {0, 1}  # seed 0 was played; its 2 missing games took seed 1
    cached = curve.CACHE.read_text().splitlines()
    curve.rate([], simulations=2, members=["random", "uct:1"], games=3)  # enough already
    assert curve.CACHE.read_text().splitlines() == cached
