"""Training settings compared at equal wall-clock: train each variant, rate it on the pool.

    python scripts/ablation.py --minutes 30                    # every variant of the table
    python scripts/ablation.py --minutes 30 --only today gumbel --parallel 2
    python scripts/ablation.py --minutes 0.2 --base debug=smoke --pool FILE   # a quick check

Each variant is a list of ``trapy-train`` overrides on top of ``--base`` (default: Trap Y with
``experiment=side10``). Every run trains for ``--minutes`` of its own training clock
(``minutes=...``, one torch thread, ``--parallel`` runs at once: two on a 2-core machine; no
matches during training), keeps a checkpoint every ``--every`` iterations, then its checkpoints
are rated against the rating pool (`trapy-eval mode=benchmark`, Elo on the pool's fixed scale;
the last checkpoint by default, ``--checkpoints`` for a curve against training minutes).
The table of final ratings goes to ``<out>/ablation.md``; each run's folder keeps its ratings,
Elo curve and TensorBoard logs. An interrupted run resumes; finished runs and cached matches
are not played again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# name -> overrides. "today" is the reference. Today's recipe collapses on side 10 (5-10-move
# resigned games), which would swamp any other effect, so the techniques of items 2-5 are each
# added to "no_resign", the simplest recipe that does not collapse.
NO_RESIGN = ["selfplay.resign_threshold=-1"]
VARIANTS: dict[str, list[str]] = {
    "today": [],
    "no_resign": NO_RESIGN,
    "calibrated_resign": [
        "selfplay.resign_false_rate=0.05", "selfplay.resign_min_moves=30",
        "selfplay.resign_playout_fraction=0.2",
    ],
    "gumbel": [*NO_RESIGN, "mcts=gumbel"],
    "playout_cap": [*NO_RESIGN, "selfplay.full_search_share=0.25",
                    "selfplay.cheap_num_simulations=8"],
    "ownership": [*NO_RESIGN, "model.ownership_head=true", "optim.ownership_weight=1.0"],
    "curriculum": [*NO_RESIGN, "curriculum.sides=[5,7]", "curriculum.until=[150,300]"],
    "small_net": [*NO_RESIGN, "model=small"],
    # Needs both cores to itself: run it alone (--only workers --parallel 1).
    "workers": [*NO_RESIGN, "selfplay=workers", "threads=1"],
}  # fmt: skip
BASE = ["experiment=side10"]
# The pool members that tell these nets apart: after 30 minutes they beat random, uct:30 and
# uct:200 in 119-120 of 120 games, which says nothing about which is stronger.
MEMBERS = ["uct:1000", "uct:5000"]


def train_command(name: str, overrides: list[str], args: argparse.Namespace) -> list[str]:
    run = args.out / name
    return [
        sys.executable, "-m", "trapy_rl.train.cli", *args.base, *overrides,
        "iterations=1000000", f"minutes={args.minutes}", f"checkpoint.every={args.every}",
        "checkpoint.keep=0", "checkpoint.replay=false", "eval.every=0", "eval.final_games=0",
        f"seed={args.seed}", f"hydra.run.dir={run}",
    ]  # fmt: skip


def rate_command(name: str, args: argparse.Namespace) -> list[str]:
    run = args.out / name
    members = json.dumps(args.members).replace(" ", "")
    return [
        sys.executable, "-m", "trapy_rl.eval.cli", f"run={run}", "mode=benchmark",
        f"pool={args.pool}", f"pool_members={members}", "every_member=true", f"games={args.games}",
        f"num_simulations={args.simulations}", "device=cpu", "progress=false",
        f"checkpoints={json.dumps(args.checkpoints).replace(' ', '')}",
        f"out={run / 'benchmark'}",
    ]  # fmt: skip


def selfplay_summary(run: Path, after_minutes: float = 10.0) -> dict[str, float]:
    """Means over the iterations after ``after_minutes`` of training (the collapse check):
    game length, resign and false-resign rates, blue's wins; and the last value loss."""
    import numpy as np
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]

    def series(tag: str) -> dict[int, float]:
        return {e.step: e.value for e in events.Scalars(tag)} if tag in tags else {}

    seconds = series("perf/iteration_s")
    clock, late = 0.0, set()
    for step in sorted(seconds):
        clock += seconds[step]
        if clock >= 60.0 * after_minutes:
            late.add(step)
    summary = {}
    for key, tag in (
        ("game_length", "selfplay/game_length"),
        ("resign_rate", "selfplay/resign_rate"),
        ("false_resign_rate", "selfplay/false_resign_rate"),
        ("blue_win_rate", "selfplay/blue_win_rate"),
    ):
        values = [v for step, v in series(tag).items() if step in late]
        summary[key] = float(np.mean(values)) if values else float("nan")
    value_loss = series("loss/value")
    summary["value_loss"] = value_loss[max(value_loss)] if value_loss else float("nan")
    return summary


def run_variant(name: str, overrides: list[str], args: argparse.Namespace) -> dict:
    """Train (unless finished) and rate one variant; returns its final rating row."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = args.out / name
    log = run.with_suffix(".log")
    run.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    command = train_command(name, overrides, args)
    if (run / "checkpoints" / "latest.pt").is_file():
        # Continue an interrupted run; a finished one stops at once (its clock is spent).
        command.append(f"resume={run}")
    with log.open("a") as out:
        subprocess.run(command, check=True, stdout=out, stderr=subprocess.STDOUT, env=env)
    with log.open("a") as out:
        subprocess.run(
            rate_command(name, args), check=True, stdout=out, stderr=subprocess.STDOUT, env=env
        )
    ratings = json.loads((run / "benchmark" / "ratings.json").read_text())
    curve = ratings["curve"]
    final = curve[-1]["agent"]
    row = next(r for r in ratings["ratings"] if r["name"] == final)
    x_key = "minutes" if "minutes" in curve[-1] else "step"
    print(f"{name}: Elo {row['elo']:.0f} [{row['lower']:.0f}, {row['upper']:.0f}] "
          f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    return {
        **row, "name": name, "overrides": overrides, "x": curve[-1][x_key], "x_key": x_key,
        **selfplay_summary(run),
    }  # fmt: skip


def _percent(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"  # nan: no game resigned to measure


def table(rows: list[dict], args: argparse.Namespace) -> str:
    lines = [
        f"Equal wall-clock: {args.minutes} training minutes each, base `{' '.join(args.base)}`, "
        f"rated against {', '.join(args.members)} ({args.games} games each, the net at "
        f"{args.simulations} simulations), Elo on the pool's scale with 95% intervals.",
        "",
        "Self-play columns: means over the iterations after the first 10 minutes; value loss at "
        "the end.",
        "",
        "| variant | overrides | Elo [95% interval] | games | at | game length | resigned | "
        "false resign | value loss |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        shown = " ".join(f"`{o}`" for o in row["overrides"]) or "(none)"
        lines.append(
            f"| {row['name']} | {shown} | {row['elo']:.0f} [{row['lower']:.0f}, "
            f"{row['upper']:.0f}] | {row['games']} | {row['x']:.4g} {row['x_key']} | "
            f"{row['game_length']:.1f} | {row['resign_rate']:.0%} | "
            f"{_percent(row['false_resign_rate'])} | {row['value_loss']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--only", nargs="*", default=None, help=f"of {list(VARIANTS)}")
    parser.add_argument("--base", nargs="*", default=BASE)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--every", type=int, default=60, help="iterations between checkpoints")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool", default="default")
    parser.add_argument("--members", nargs="*", default=MEMBERS)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument(
        "--checkpoints", nargs="*", type=int, default=[-1],
        help="which checkpoints to rate, counted from the newest as trapy-eval's checkpoints=",
    )  # fmt: skip
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("outputs/ablation"))
    args = parser.parse_args(argv)
    names = args.only or list(VARIANTS)
    unknown = [name for name in names if name not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {list(VARIANTS)}")
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        rows = list(pool.map(lambda n: run_variant(n, VARIANTS[n], args), names))
    text = table(rows, args)
    (args.out / "ablation.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
