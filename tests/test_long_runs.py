"""scripts/long_runs.py: a run in legs, continued here and, from its committed start, elsewhere."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
from tiny import tiny_payload

from trapy_rl.train import load_checkpoint
from trapy_rl.train.checkpoint import save_checkpoint

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# A smoke run without evaluation, a checkpoint every second iteration.
OVERRIDES = [
    "debug=smoke", "eval.every=0", "eval.final_games=0", "checkpoint.every=2",
    "logger.progress=false", "threads=1",
]  # fmt: skip


@pytest.fixture
def long_runs(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("long_runs", SCRIPTS / "long_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "LONG_RUNS", tmp_path / "committed")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return module


def test_legs_continue_the_run_here_exactly_and_elsewhere_from_the_committed_start(
    long_runs, tmp_path
):
    runs, committed = tmp_path / "runs", tmp_path / "committed" / "run-s0"
    assert long_runs.main(["start", "run-s0", "--runs", str(runs), "--", *OVERRIDES,
                           "iterations=4"]) == 0  # fmt: skip
    long_runs.main(["snapshot", "run-s0", "--runs", str(runs)])
    start = load_checkpoint(committed / "start.pt")
    assert "replay" not in start and {"model", "learner", "counters", "rng"} <= set(start)
    assert start["counters"]["iteration"] == 4
    assert [p.name for p in committed.glob("net_*.pt")] == ["net_it000002.pt"]  # one per 0.5 h

    # The same machine: the run folder is there and as far as the start, so it goes on exactly.
    assert long_runs.main(["resume", "run-s0", "--runs", str(runs), "--", "iterations=6"]) == 0
    # Another machine: no run folder, so a new one from the committed start.
    long_runs.main(["snapshot", "run-s0", "--runs", str(runs)])
    shutil.rmtree(runs / "run-s0")
    assert long_runs.main(["resume", "run-s0", "--runs", str(runs), "--", "iterations=8"]) == 0
    long_runs.main(["snapshot", "run-s0", "--runs", str(runs)])
    # The new run folder's first checkpoint is not kept: the next net is 0.5 h past the last.
    assert [p.name for p in committed.glob("net_*.pt")] == ["net_it000002.pt"]

    legs = json.loads((committed / "legs.json").read_text())
    assert [leg["to"]["iteration"] for leg in legs] == [4, 6, 8]
    assert legs[0]["from"] == "scratch"
    assert [leg["from"]["iteration"] for leg in legs[1:]] == [4, 6]
    assert [leg.get("exact") for leg in legs] == [None, True, False]
    assert legs[0]["command"].startswith("trapy-train debug=smoke")
    assert all(str(runs) not in leg["command"] for leg in legs)  # RUNS, for any machine
    start = os.path.relpath(committed / "start.pt", long_runs.ROOT)  # as the repository names it
    assert legs[2]["command"] == (
        f"trapy-train resume={start} hydra.run.dir=RUNS/run-s0 iterations=8"
    )
    assert load_checkpoint(committed / "start.pt")["counters"]["iteration"] == 8

    # A branch: a new run from this one's committed start, with another learning rate.
    assert long_runs.main(["start", "run-s0-lr", "--runs", str(runs), "--",
                           f"resume={committed / 'start.pt'}", "iterations=10",
                           "optim.lr=2e-4"]) == 0  # fmt: skip
    long_runs.main(["snapshot", "run-s0-lr", "--runs", str(runs)])
    branch = committed.parent / "run-s0-lr"
    (leg,) = json.loads((branch / "legs.json").read_text())
    assert (leg["from"]["iteration"], leg["to"]["iteration"]) == (8, 10)
    assert leg["exact"] is False and leg["branch_of"] == str(committed / "start.pt")
    assert load_checkpoint(branch / "start.pt")["config"]["optim"]["lr"] == 2e-4
    assert load_checkpoint(committed / "start.pt")["counters"]["iteration"] == 8  # untouched


def test_a_run_with_legs_is_not_started_again_and_one_without_is_not_resumed(long_runs, tmp_path):
    runs = str(tmp_path / "runs")
    with pytest.raises(SystemExit, match=r"neither .* start it"):
        long_runs.main(["resume", "run-s0", "--runs", runs])
    with pytest.raises(SystemExit, match="no checkpoints yet"):
        long_runs.main(["snapshot", "run-s0", "--runs", runs])
    long_runs._write_legs("run-s0", [{"from": "scratch"}])
    with pytest.raises(SystemExit, match="has legs already: resume it"):
        long_runs.main(["start", "run-s0", "--runs", runs])


def test_a_branch_from_a_missing_start_is_one_line(long_runs, tmp_path, capsys):
    with pytest.raises(SystemExit):
        long_runs.main(["start", "run-s0-lr", "--runs", str(tmp_path / "runs"), "--",
                        f"resume={tmp_path / 'no-run' / 'start.pt'}"])  # fmt: skip
    error = capsys.readouterr().err
    assert error.startswith("long_runs: error:") and "start.pt" in error
    assert error.count("\n") == 1 and not (tmp_path / "committed" / "run-s0-lr").exists()


def test_recipe_changes_are_the_overrides_a_later_leg_added(long_runs, tmp_path):
    """Where and how long a leg runs is not the recipe; an override first seen in a later leg
    is a change, marked at the CPU-hours where that leg began (a lost leg's too)."""
    folder = tmp_path / "committed" / "run-s1"
    folder.mkdir(parents=True)
    start = {"iteration": 4, "cpu_hours": 1.5, "clock_hours": 2.0}
    later = {"iteration": 9, "cpu_hours": 2.25, "clock_hours": 3.0}
    legs = [
        {"from": "scratch", "command": "trapy-train experiment=trapy_cpu minutes=600 seed=1 "
                                       "hydra.run.dir=RUNS/run-s1"},
        {"from": start, "command": "trapy-train resume=RUNS/run-s1 minutes=900"},
        {"from": later, "command": "trapy-train resume=RUNS/run-s1 minutes=900 a.b=true seed=1"},
        {"from": later, "command": "trapy-train resume=RUNS/run-s1 a.b=true c=2"},
    ]  # fmt: skip
    (folder / "legs.json").write_text(json.dumps(legs))
    assert long_runs.recipe_changes("run-s1") == [(2.25, "a.b=true"), (2.25, "c=2")]
    assert long_runs.recipe_changes("no-such-run") == []


def test_average_writes_the_mean_of_the_last_kept_nets_named_by_their_iterations(long_runs):
    folder = long_runs.LONG_RUNS / "run-s0"
    folder.mkdir(parents=True)
    for seed, iteration in enumerate((10, 20, 30)):
        payload = tiny_payload(side=4, seed=seed, iteration=iteration)
        save_checkpoint(folder / f"net_it{iteration:06d}.pt", payload)
    target = long_runs.average("run-s0", 2)
    assert target.name == "mean_it000020-000030.pt"
    assert load_checkpoint(target)["source"] == "mean of net_it000020.pt, net_it000030.pt"
    with pytest.raises(SystemExit, match="keeps 3 nets, fewer than --last 4"):
        long_runs.average("run-s0", 4)
