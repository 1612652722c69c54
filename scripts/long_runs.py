"""Training runs longer than a sitting: legs that anyone can continue from the repository.

A long run trains in legs. Each leg resumes the run and trains until its sitting ends; between
legs the run's state is committed under ``benchmarks/long_runs/NAME/``:

    start.pt        the run's newest checkpoint without its replay window: net, optimiser,
                    counters, random states, games in progress, resignation calibration and
                    the training clock (wall and CPU), a few hundred KB to a few MB
    net_*.pt        net-only copies, one each ``--every`` CPU-hours, for the strength curve
    legs.json       every leg: its command, commit, machine, date, and where it began and ended

    python scripts/long_runs.py start NAME -- experiment=trapy_cpu minutes=600 seed=0
    python scripts/long_runs.py start NAME -- resume=benchmarks/long_runs/OTHER/start.pt ...
                                                     # a branch of OTHER with other settings
    python scripts/long_runs.py resume NAME -- minutes=3000   # the next leg (nohup ... &)
    python scripts/long_runs.py snapshot NAME        # commit what the leg reached (then git add)
    python scripts/long_runs.py average NAME --last 5  # the mean of the last 5 kept nets

``average`` writes ``mean_itFIRST-LAST.pt`` beside the kept nets: their weights averaged
(`trapy_rl.train.checkpoint.average_networks`), the net a run ships and maps.

``resume`` continues the run folder (``--runs``, default ``outputs/long_runs``) exactly when it
is there and is at least as far as ``start.pt``; on another machine it resumes from ``start.pt``,
with an empty replay window that the first iterations refill (the leg records ``exact: false``).
The training clock counts on across legs, so ``minutes`` ends the run where it would have ended
in one sitting; ``perf/cpu_hours`` and the checkpoints' ``clock.cpu_seconds`` are the CPU time.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

from trapy_rl.errors import reported
from trapy_rl.nn.checkpoint import CHECKPOINT_DIR, load_checkpoint
from trapy_rl.provenance import git_commit, machine
from trapy_rl.train.checkpoint import average_networks, export_network, save_checkpoint

ROOT = Path(__file__).resolve().parents[1]
LONG_RUNS = ROOT / "benchmarks" / "long_runs"
# What a leg's start keeps of a checkpoint: all that resuming reads but the replay window.
START_KEYS = (
    "side",
    "model",
    "learner",
    "counters",
    "rng",
    "selfplay",
    "config",
    "clock",
    "resign",
)


def _legs(name: str) -> list[dict]:
    path = LONG_RUNS / name / "legs.json"
    return json.loads(path.read_text()) if path.is_file() else []


def _write_legs(name: str, legs: list[dict]) -> None:
    folder = LONG_RUNS / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "legs.json").write_text(json.dumps(legs, indent=1) + "\n")


# Overrides that say where a leg runs or how long, not how it trains.
_NOT_RECIPE = ("resume=", "minutes=", "hydra.run.dir=")


def recipe_changes(name: str) -> list[tuple[float, str]]:
    """(CPU-hours, override) of each training override that a later leg added to the run:
    one not in any earlier leg's command (where and how long a leg runs left out)."""
    seen: set[str] = set()
    changes = []
    for number, leg in enumerate(_legs(name)):
        for override in leg["command"].split()[1:]:
            if override.startswith(_NOT_RECIPE) or override in seen:
                continue
            seen.add(override)
            if number > 0 and isinstance(leg["from"], dict):
                changes.append((leg["from"]["cpu_hours"], override))
    return changes


def where(payload: dict) -> dict:
    """Where a checkpoint stands: its iteration, CPU-hours and hours of training clock."""
    clock = payload.get("clock") or {}
    return {
        "iteration": int(payload["counters"]["iteration"]),
        "cpu_hours": round(float(clock.get("cpu_seconds", 0.0)) / 3600, 3),
        "clock_hours": round(float(clock.get("seconds", 0.0)) / 3600, 3),
    }


def _train(run: Path, overrides: list[str], leg: dict, name: str) -> int:
    command = [str(Path(sys.executable).with_name("trapy-train")), *overrides]
    leg |= {
        # The run folder as RUNS, as the legs are replayed with any --runs.
        "command": " ".join(["trapy-train", *overrides]).replace(str(run.parent), "RUNS"),
        "commit": git_commit(ROOT),
        "machine": machine(),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    legs = _legs(name)
    legs.append(leg)
    _write_legs(name, legs)
    print(f"leg {len(legs)} of {name}: {leg['command']}", flush=True)
    return subprocess.call(command, cwd=ROOT)


def start(name: str, runs: Path, overrides: list[str]) -> int:
    if _legs(name):
        raise SystemExit(f"long_runs: {name} has legs already: resume it")
    run = runs / name
    # A branch (`resume=` another run's committed start.pt) records where it branched off.
    branch = next((o.removeprefix("resume=") for o in overrides if o.startswith("resume=")), None)
    leg = {"from": "scratch"}
    if branch is not None:
        leg = {"from": where(load_checkpoint(ROOT / branch)), "branch_of": branch, "exact": False}
    return _train(run, [*overrides, f"hydra.run.dir={run}"], leg, name)


def resume(name: str, runs: Path, overrides: list[str]) -> int:
    begin = LONG_RUNS / name / "start.pt"
    run = runs / name
    latest = run / CHECKPOINT_DIR / "latest.pt"
    if not begin.is_file() and not latest.is_file():
        raise SystemExit(f"long_runs: {name}: neither {begin} nor {latest}: start it")
    committed = where(load_checkpoint(begin)) if begin.is_file() else None
    here = where(load_checkpoint(latest)) if latest.is_file() else None
    if here is not None and (committed is None or here["iteration"] >= committed["iteration"]):
        return _train(run, [f"resume={run}", *overrides], {"from": here, "exact": True}, name)
    # Another machine: a new run folder from the committed start, named as the repository does
    # (trapy-train runs in its root), so the leg's command holds no path of this machine.
    return _train(
        run,
        [f"resume={os.path.relpath(begin, ROOT)}", f"hydra.run.dir={run}", *overrides],
        {"from": committed, "exact": False},
        name,
    )


def snapshot(name: str, runs: Path, every: float) -> None:
    run = runs / name
    checkpoints = sorted((run / CHECKPOINT_DIR).glob("ckpt_*.pt"))
    if not checkpoints:
        raise SystemExit(f"long_runs: {run}: no checkpoints yet")
    folder = LONG_RUNS / name
    folder.mkdir(parents=True, exist_ok=True)
    newest = load_checkpoint(checkpoints[-1])
    save_checkpoint(folder / "start.pt", {key: newest[key] for key in START_KEYS if key in newest})
    # Net-only copies, the first checkpoint past each multiple of `every` CPU-hours, counted on
    # from the newest net kept: a leg resumed on another machine has a new run folder, whose
    # first checkpoint lies just past that net and is not a new point of the curve.
    kept = {p.name for p in folder.glob("net_*.pt")}
    last = max(folder.glob("net_it*.pt"), default=None)  # names zero-padded: the newest
    mark = (where(load_checkpoint(last))["cpu_hours"] // every + 1) * every if last else 0.0
    for path in checkpoints:
        stands = where(load_checkpoint(path))
        if stands["cpu_hours"] >= mark:
            target = f"net_it{stands['iteration']:06d}.pt"
            if target not in kept:
                export_network(path, folder / target)
            mark = (stands["cpu_hours"] // every + 1) * every
    legs = _legs(name)
    # A leg stopped without a snapshot ended exactly where the next one began.
    for leg, after in itertools.pairwise(legs):
        if leg.get("to") is None and after.get("exact"):
            leg["to"] = after["from"]
    if legs:
        legs[-1]["to"] = where(newest)
        legs[-1]["ended"] = datetime.datetime.now().isoformat(timespec="seconds")
        _write_legs(name, legs)
    print(f"{name}: start.pt at {where(newest)}; nets: {len(list(folder.glob('net_*.pt')))}")


def average(name: str, last: int) -> Path:
    nets = sorted((LONG_RUNS / name).glob("net_it*.pt"))[-last:]
    if len(nets) < last:
        raise SystemExit(f"long_runs: {name} keeps {len(nets)} nets, fewer than --last {last}")
    first, final = (net.stem.removeprefix("net_it") for net in (nets[0], nets[-1]))  # snapshot's
    target = average_networks(nets, LONG_RUNS / name / f"mean_it{first}-{final}.pt")
    print(f"{name}: {target.name}, the mean of {', '.join(net.name for net in nets)}")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "resume", "snapshot", "average"])
    parser.add_argument("name", help="the run's name, a folder of benchmarks/long_runs/")
    parser.add_argument("--runs", type=Path, default=ROOT / "outputs" / "long_runs")
    parser.add_argument("--every", type=float, default=0.5, help="CPU-hours between kept nets")
    parser.add_argument("--last", type=int, default=5, help="average: how many kept nets")
    parser.add_argument("overrides", nargs="*", help="the leg's trapy-train overrides, after --")
    argv = sys.argv[1:] if argv is None else argv
    # The overrides are split off by hand: argparse refuses `-- k=v` once an option came
    # between the positionals and them.
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.overrides += argv[cut + 1 :]
    # A missing or damaged checkpoint (a branch's start, a kept net), nets of different
    # shapes: one line, whichever action met it.
    with reported("long_runs"):
        if args.action == "start":
            return start(args.name, args.runs, args.overrides)
        if args.action == "resume":
            return resume(args.name, args.runs, args.overrides)
        if args.action == "average":
            average(args.name, args.last)
        else:
            snapshot(args.name, args.runs, args.every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
