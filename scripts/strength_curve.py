"""Elo against CPU-hours of the long runs: rate their kept nets on the pool, draw the curve.

    python scripts/strength_curve.py rate side10-tiny-s0 side10-small-s0  # nets not yet rated
    python scripts/strength_curve.py draw --plot docs/long-runs-elo.png   # table and picture

Each kept net of ``benchmarks/long_runs/NAME/`` (`scripts/long_runs.py`) plays at 200
simulations (``--simulations``) and is rated as ``trapy-eval mode=benchmark`` rates: steps of
20 games against the member nearest its estimate until the 95% interval is within +-100 Elo
(`trapy_rl.eval.pool.rate_adaptively`). Every match goes into
``benchmarks/long_runs/matches.jsonl``, which is committed, so ``draw`` refits every net on the
pool of the day without playing (`trapy_rl.eval.pool.rating_from_cache`): a recalibrated pool
redraws the curve for free. The x-axis is the net's training CPU time (``clock.cpu_seconds``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from long_runs import where  # this folder's script: the legs' bookkeeping

from trapy_rl.eval.pool import load_pool, rate_adaptively, rating_from_cache
from trapy_rl.eval.report import plot_rating_curves
from trapy_rl.game.board import Board
from trapy_rl.nn.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parents[1]
LONG_RUNS = Path("benchmarks") / "long_runs"  # relative: the specs in the cache name it so
CACHE = LONG_RUNS / "matches.jsonl"
SIDE = 10


def _nets(names: list[str]) -> list[tuple[str, Path]]:
    """(run name, net file) of each kept side-10 net of the runs (all runs when none are
    named); nets of a curriculum's smaller boards are left out."""
    names = names or sorted(p.name for p in LONG_RUNS.iterdir() if p.is_dir())
    nets = [(name, net) for name in names for net in sorted((LONG_RUNS / name).glob("net_it*.pt"))]
    return [(name, net) for name, net in nets if load_checkpoint(net)["side"] == SIDE]


def rate(names: list[str], simulations: int, target: float) -> None:
    pool, board = load_pool("default", side=SIDE), Board(SIDE)
    for name, net in _nets(names):
        spec = f"mcts:{net.as_posix()}:{simulations}"
        known = rating_from_cache(spec, pool, CACHE)
        if known is not None and (known.upper[-1] - known.lower[-1]) / 2 <= target:
            continue
        started = time.perf_counter()
        rated = rate_adaptively(spec, pool, board=board, cache_path=CACHE, progress=True)
        minutes = (time.perf_counter() - started) / 60
        steps = ", ".join(f"{member} {games}" for member, games in rated.steps)
        print(f"{name} {net.name}: {rated.elo:.0f} +-{rated.half_width:.0f} after "
              f"{rated.games} games in {minutes:.1f} min ({steps})", flush=True)  # fmt: skip


def draw(names: list[str], simulations: int, plot: Path | None) -> None:
    pool = load_pool("default", side=SIDE)
    curves: dict[str, list[tuple[float, float, float, float]]] = {}
    print("| run | iteration | CPU-hours | Elo [95%] | games |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, net in _nets(names):
        spec = f"mcts:{net.as_posix()}:{simulations}"
        fit = rating_from_cache(spec, pool, CACHE)
        if fit is None:
            continue
        stands = where(load_checkpoint(net))
        iteration, hours = stands["iteration"], stands["cpu_hours"]
        elo, low, high = (float(v[-1]) for v in (fit.ratings, fit.lower, fit.upper))
        games = int(fit.games[-1])
        print(f"| {name} | {iteration} | {hours:.2f} | {elo:.0f} [{low:.0f}, {high:.0f}] | "
              f"{games} |")  # fmt: skip
        curves.setdefault(name, []).append((hours, elo, low, high))
    if plot and curves:
        lows = [p[2] for points in curves.values() for p in points]
        highs = [p[3] for points in curves.values() for p in points]
        near = {m.spec: m.elo for m in pool.members if min(lows) - 150 <= m.elo <= max(highs) + 150}
        title = f"Elo against CPU-hours, each net at {simulations} simulations on the side-10 pool"
        print(plot_rating_curves(curves, plot, references=near, title=title))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["rate", "draw"])
    parser.add_argument("names", nargs="*", help="runs of benchmarks/long_runs/ (default: all)")
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--target", type=float, default=100.0, help="+-Elo to rate each net to")
    parser.add_argument("--plot", type=Path, default=None, help="the curve's PNG (draw)")
    args = parser.parse_args(argv)
    plot = None if args.plot is None else args.plot.resolve()
    os.chdir(ROOT)  # the nets are named by paths relative to the repository, as cached
    if args.action == "rate":
        rate(args.names, args.simulations, args.target)
    else:
        draw(args.names, args.simulations, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
