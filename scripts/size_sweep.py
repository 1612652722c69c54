"""Where learning breaks between side 5 and side 10: today's recipe on sides 5 to 8, three seeds a
side, each to a CPU cap scaled by the board, then the seeds' agreement and the truth.

    python scripts/size_sweep.py train --part 1/2 &   # one core: half of the runs, in order
    python scripts/size_sweep.py train --part 2/2 &   # the other core: the other half
    python scripts/size_sweep.py train --sides 5 --beyond 2   # on past the cap: a plateau?
    python scripts/size_sweep.py report --plot docs/size-sweep.png

``train`` starts each run of ``--sides`` x ``--seeds`` (or resumes it, in a later sitting) and
trains it to its cap: ``CAP_MINUTES * (cells / 35) ** CAP_POWER`` CPU-minutes, 20 on side 5 (where
a 20-CPU-minute net of the recipe gets every exact swap decision right), 41 on side 6, 75 on side
7 and 125 on side 8: the growth from side 5's 20 minutes to side 10's plateau at about five
CPU-hours. The recipe is the side-10 long runs' (``experiment=trapy_cpu model=small
selfplay.post_swap_samples=true``) without the curriculum, a checkpoint every 25 iterations.
Each run is a folder ``RUNS/sideN-sK``; runs go under ``nice`` at the lowest priority.

``report`` compares, on each side, the seeds' opening maps by search (800 simulations an opening,
`trapy_rl.analysis.learned`) at four points of the cap (the checkpoint of each seed nearest a
quarter, a half, three quarters and all of it): the lowest and the mean Spearman's rho of two
seeds, and the first moves some pair of seeds decides oppositely. On a solved side (4, 5) each
seed's newest net is also scored against the exact values (`trapy_rl.eval.truth`): its policy
alone, and 200-simulation search. ``--plot`` draws the seeds' agreement against the board's
cells, and against the share of the cap.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from long_runs import where  # this folder's script: where a checkpoint stands

from trapy_rl.agents import parse_agent
from trapy_rl.analysis.learned import (
    MAP_SIMULATIONS,
    exact_swap_agreement,
    maps_by_search,
    seed_agreement,
)
from trapy_rl.analysis.openings import opening_table
from trapy_rl.errors import reported
from trapy_rl.eval.report import plot_curve_panels
from trapy_rl.eval.truth import score_agent, truth_sides
from trapy_rl.game.board import Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.checkpoint import CHECKPOINT_DIR, load_checkpoint
from trapy_rl.solve.openings import exact_values, load_openings

ROOT = Path(__file__).resolve().parents[1]
SIDES = (5, 6, 7, 8)
SEEDS = (0, 1, 2)
CAP_MINUTES, CAP_POWER = 20.0, 1.9
RECIPE = (
    "experiment=trapy_cpu model=small selfplay.post_swap_samples=true curriculum=none "
    "eval.pool=null eval.final_games=0 checkpoint.every=25"
)
# The points of the cap where seeds are compared; past 1, where runs were trained on to see
# whether the cap was a plateau (``train --beyond 2``).
FRACTIONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def cap_minutes(side: int) -> int:
    """The CPU-minutes a side-``side`` run trains."""
    return round(CAP_MINUTES * (Board(side).num_cells / 35) ** CAP_POWER)


def run_name(side: int, seed: int) -> str:
    return f"side{side}-s{seed}"


# ---------------------------------------------------------------------- train
def train_command(runs: Path, side: int, seed: int, beyond: float = 1.0) -> list[str]:
    """The trapy-train command that starts the run, or resumes it where it stopped, to
    ``beyond`` times its cap."""
    run = runs / run_name(side, seed)
    minutes = f"minutes={beyond * cap_minutes(side):g}"
    if (run / CHECKPOINT_DIR / "latest.pt").is_file():
        overrides = [f"resume={run}", minutes]
    else:
        overrides = [*RECIPE.split(), f"side={side}", f"seed={seed}", minutes]
        overrides.append(f"hydra.run.dir={run}")
    return [str(Path(sys.executable).with_name("trapy-train")), *overrides]


def train(
    runs: Path, sides: list[int], seeds: list[int], part: tuple[int, int], beyond: float
) -> int:
    index, count = part
    jobs = [(side, seed) for side in sides for seed in seeds][index - 1 :: count]
    for side, seed in jobs:
        command = train_command(runs, side, seed, beyond)
        log = runs / f"{run_name(side, seed)}.log"
        print(f"{run_name(side, seed)}: {' '.join(command[1:])} (log: {log})", flush=True)
        runs.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as out:
            code = subprocess.call(["nice", "-n", "19", *command], cwd=ROOT, stdout=out, stderr=out)
        if code:
            print(f"{run_name(side, seed)}: trapy-train exited {code}", flush=True)
            return code
    return 0


# ---------------------------------------------------------------------- report
def checkpoints(runs: Path, side: int, seed: int) -> list[tuple[float, Path]]:
    """(CPU-minutes, file) of the run's numbered checkpoints, oldest first."""
    folder = runs / run_name(side, seed) / CHECKPOINT_DIR
    found = []
    for path in sorted(folder.glob("ckpt_*.pt")):
        found.append((60 * where(load_checkpoint(path))["cpu_hours"], path))
    return found


def nearest(found: list[tuple[float, Path]], minutes: float) -> tuple[float, Path] | None:
    """The checkpoint nearest ``minutes`` of training, if one lies within 10% of it."""
    if not found:
        return None
    best = min(found, key=lambda item: abs(item[0] - minutes))
    return best if abs(best[0] - minutes) <= 0.1 * minutes else None


def agreement_rows(runs: Path, side: int, seeds: list[int], simulations: int) -> list[dict]:
    """The seeds' agreement at each point of the cap that two or more seeds have reached."""
    cap = cap_minutes(side)
    found = {seed: checkpoints(runs, side, seed) for seed in seeds}
    rows = []
    for fraction in FRACTIONS:
        points = {s: p for s in seeds if (p := nearest(found[s], fraction * cap)) is not None}
        if len(points) < 2:
            continue
        nets = [p for _, p in points.values()]
        v = maps_by_search(nets, side=side, search=SearchSettings(num_simulations=simulations))
        board = Board(side)
        result = seed_agreement(v, board)
        rows.append({
            "side": side,
            "cells": Board(side).num_cells,
            "fraction": fraction,
            "minutes": {s: round(m, 1) for s, (m, _) in points.items()},
            "min_rho": round(result.min_pair, 3),
            "mean_rho": round(result.mean_pair, 3),
            "opposite": list(result.opposite),
            "swap_share": [round(float((m > 0.5).mean()), 3) for m in v],
            "exact": _exact_decisions(v, board),
        })  # fmt: skip
    return rows


def _exact_decisions(v: np.ndarray, board: Board) -> list[str] | None:
    """Each map's swap decisions against v*, as "right/solved", on a solved side."""
    try:
        v_star = exact_values(load_openings(board.side))
    except ValueError:  # not solved
        return None
    scored = (exact_swap_agreement(opening_table(m, board), v_star, board) for m in v)
    return [f"{s['agree']}/{s['solved']}" for s in scored]


def truth_rows(runs: Path, side: int, seeds: list[int]) -> list[dict]:
    """Each seed's newest net against the exact values: policy alone and 200-simulation search."""
    board, rows = Board(side), []
    for seed in seeds:
        found = checkpoints(runs, side, seed)
        if not found:
            continue
        minutes, path = found[-1]
        for spec in (f"net:{path}", f"mcts:{path}:200"):
            score = score_agent(parse_agent(spec, board=board, seed=seed), side)
            rows.append({
                "side": side,
                "seed": seed,
                "minutes": round(minutes, 1),
                "agent": spec.split(":")[0] + ("" if spec.startswith("net") else ":200"),
                "won_kept": str(score.won_kept),
                "value_sign": str(score.value_sign),
                "swaps": str(score.swaps),
                "wrong_swaps": " ".join(score.wrong_swaps),
            })  # fmt: skip
    return rows


def report(runs: Path, sides: list[int], seeds: list[int], simulations: int, plot: Path | None):
    agreement = [row for side in sides for row in agreement_rows(runs, side, seeds, simulations)]
    truth = [
        row for side in sides if side in truth_sides() for row in truth_rows(runs, side, seeds)
    ]
    print(
        f"Seeds' maps by search ({simulations} simulations an opening), by side and share of cap:"
    )
    print("| side (cells) | cap share | CPU-minutes by seed | lowest rho | mean rho | "
          "opposite decisions | share swapped by seed | maps against v* |")  # fmt: skip
    print("| --- | ---: | --- | ---: | ---: | --- | --- | --- |")
    for row in agreement:
        minutes = ", ".join(f"s{s} {m}" for s, m in row["minutes"].items())
        print(
            f"| {row['side']} ({row['cells']}) | {row['fraction']:.2f} | {minutes} | "
            f"{row['min_rho']:.3f} | {row['mean_rho']:.3f} | {', '.join(row['opposite']) or 'none'}"
            f" | {', '.join(f'{x:.2f}' for x in row['swap_share'])} |"
            f" {', '.join(row['exact']) if row['exact'] else '-'} |"
        )
    if truth:
        print("\nAgainst the exact values (newest net of each seed):")
        print(
            "| side | seed | CPU-minutes | agent | won kept | value sign | swap decisions | wrong |"
        )
        print("| --- | ---: | ---: | --- | --- | --- | --- | --- |")
        for r in truth:
            print(
                f"| {r['side']} | {r['seed']} | {r['minutes']} | {r['agent']} | {r['won_kept']} | "
                f"{r['value_sign']} | {r['swaps']} | {r['wrong_swaps'] or '-'} |"
            )
    out = runs / "report.json"
    out.write_text(json.dumps({"agreement": agreement, "truth": truth}, indent=1) + "\n")
    print(f"\n{out}")
    if plot is not None:
        print(draw(agreement, plot))


def draw(agreement: list[dict], path: Path) -> Path:
    """Two panels: the seeds' lowest and mean rho at the cap against the board's cells; each
    side's mean rho against the share of its cap."""
    at_cap = [row for row in agreement if row["fraction"] == 1.0]
    by_size = {
        "lowest rho of two seeds": [(r["cells"], r["min_rho"], r["min_rho"], r["min_rho"])
                                    for r in at_cap],
        "mean rho of two seeds": [(r["cells"], r["mean_rho"], r["mean_rho"], r["mean_rho"])
                                  for r in at_cap],
    }  # fmt: skip
    by_share: dict[str, list] = {}
    for r in agreement:
        by_share.setdefault(f"side {r['side']}", []).append(
            (r["fraction"], r["mean_rho"], r["min_rho"], r["mean_rho"])
        )
    return plot_curve_panels(
        {"at the cap, against the board": by_size, "along the way (bars down to the lowest)":
         by_share},
        path,
        title="Do seeds agree? Opening maps by search of today's recipe, three seeds a side",
        x_label="cells of the board (left); share of the CPU cap (right)",
        y_label="Spearman's rho between seeds' maps",
    )  # fmt: skip


def _part(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"--part must be I/N with 1 <= I <= N, got {text!r}")
    return int(index), int(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["train", "report"])
    parser.add_argument("--runs", type=Path, default=ROOT / "outputs" / "size_sweep")
    parser.add_argument("--sides", type=int, nargs="+", default=list(SIDES))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--part", type=_part, default=(1, 1), help="train: I/N, every Nth run")
    parser.add_argument("--beyond", type=float, default=1.0, help="train: to this many caps")
    parser.add_argument("--simulations", type=int, default=MAP_SIMULATIONS)
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args(argv)
    with reported("size_sweep"):
        if args.action == "train":
            return train(args.runs, args.sides, args.seeds, args.part, args.beyond)
        report(args.runs.resolve(), args.sides, args.seeds, args.simulations, args.plot)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
