"""Elo against CPU-hours of the long runs: rate their kept nets on the pool, draw the curve.

    python scripts/strength_curve.py rate side10-tiny-s0 side10-small-s0  # nets not yet rated
    python scripts/strength_curve.py rate side10-small-s1/net_it000400.pt  # one net of a run
    python scripts/strength_curve.py draw --plot docs/long-runs-elo.png   # table and picture

Each kept net of ``benchmarks/long_runs/NAME/`` (`scripts/long_runs.py`) plays at 200
simulations (``--simulations``) against one fixed panel of pool members (``--panel``),
``--games`` games against each, colours exchanged. Every point of the curve meets the same
members because the pool's scale is not transitive to within its intervals: one net rated on
two different sets of members moved by about 200 Elo (BENCHMARKS.md). Games a net already
played against a panel member count towards its ``--games``.

Every match goes into ``benchmarks/long_runs/matches.jsonl``, which is committed, so ``draw``
refits every net on the pool of the day without playing (`trapy_rl.eval.pool.rating_from_cache`),
from its matches against the panel alone: a recalibrated pool redraws the curve for free. The
x-axis is the net's training CPU time (``clock.cpu_seconds``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from long_runs import recipe_changes, where  # this folder's script: the legs' bookkeeping

from trapy_rl.eval.cache import ResultCache
from trapy_rl.eval.pool import Pool, load_pool, rate_against_pool, rating_from_cache
from trapy_rl.eval.report import plot_rating_curves
from trapy_rl.game.board import Board
from trapy_rl.nn.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parents[1]
LONG_RUNS = Path("benchmarks") / "long_runs"  # relative: the specs in the cache name it so
CACHE = LONG_RUNS / "matches.jsonl"
SIDE = 10
# The members every net meets: the pool's nets at 200 and 800 simulations, 4287 to 4745 on the
# pool of 2026-12-04, around where the long runs' nets stand, and cheap beside 3200.
PANEL = ("mcts:pool_a:200", "mcts:pool_b:200", "mcts:pool_b:800", "mcts:pool_c:200")


def kept_nets(names: list[str]) -> list[tuple[str, Path]]:
    """(run name, net file) of each kept side-10 net of the runs (all runs when none are
    named), or of the nets named as RUN/net_itN.pt; a run's nets of a curriculum's smaller
    boards are left out, a net named of another board is an error. A run is a folder with its
    legs (``legs.json``); ``openings/`` and the like are not."""
    names = names or sorted(p.parent.name for p in LONG_RUNS.glob("*/legs.json"))
    nets = []
    for name in names:
        run, _, net = name.partition("/")
        files = [LONG_RUNS / name] if net else sorted((LONG_RUNS / run).glob("net_it*.pt"))
        missing = [file for file in files if not file.is_file()]
        if missing or not files:
            raise SystemExit(f"strength_curve: no kept net at {missing[0] if missing else name}")
        sides = [load_checkpoint(file)["side"] for file in files]
        if net and sides[0] != SIDE:
            raise SystemExit(f"strength_curve: {name} is a side-{sides[0]} net, not side {SIDE}")
        nets += [(run, file) for file, side in zip(files, sides, strict=True) if side == SIDE]
    return nets


def panel_pool(members: list[str]) -> Pool:
    """The side-10 pool cut to the panel (a ValueError names a member it does not have)."""
    return load_pool("default", side=SIDE).select(members)


def _scores(spec: str, panel: Pool) -> dict[str, tuple[int, int, set[int]]]:
    """Each panel member's (wins of ``spec``, games, seeds played) in the cache."""
    scores = {member: (0, 0, set()) for member in panel.ratings}
    for match in ResultCache(CACHE).matches_of(spec, side=SIDE):
        if match.agent_b in scores:
            wins, games, seeds = scores[match.agent_b]
            scores[match.agent_b] = (wins + match.wins, games + match.games, seeds | {match.seed})
    return scores


def rate(names: list[str], simulations: int, members: list[str], games: int) -> None:
    panel, board = panel_pool(members), Board(SIDE)
    for name, net in kept_nets(names):
        spec = f"mcts:{net.as_posix()}:{simulations}"
        started, played = time.perf_counter(), 0
        for member, (_, have, seeds) in _scores(spec, panel).items():
            if have >= games:
                continue
            missing = games - have + (games - have) % 2  # whole pairs, colours exchanged
            seed = max(seeds, default=-1) + 1  # a seed of its own: other starts, new games
            rate_against_pool(
                [spec], panel.select([member]), board=board, num_games=missing, seed=seed,
                cache_path=CACHE, progress=True,
            )  # fmt: skip
            played += missing
        fit = rating_from_cache(spec, panel, CACHE)
        low, high = float(fit.lower[-1]), float(fit.upper[-1])
        minutes = (time.perf_counter() - started) / 60
        elo, games_in_all = float(fit.ratings[-1]), int(fit.games[-1])
        print(f"{name} {net.name}: {elo:.0f} +-{(high - low) / 2:.0f} after {games_in_all} "
              f"games ({played} now, {minutes:.1f} min)", flush=True)  # fmt: skip


def draw(names: list[str], simulations: int, members: list[str], plot: Path | None) -> None:
    panel = panel_pool(members)
    curves: dict[str, list[tuple[float, float, float, float]]] = {}
    print(f"| run | iteration | CPU-hours | Elo [95%] | games | {' | '.join(panel.ratings)} |")
    print("| --- | ---: | ---: | ---: | ---: |" + " ---: |" * len(panel.ratings))
    for name, net in kept_nets(names):
        spec = f"mcts:{net.as_posix()}:{simulations}"
        fit = rating_from_cache(spec, panel, CACHE)
        if fit is None:
            continue
        scores = " | ".join(
            f"{wins}/{games}" if games else "-" for wins, games, _ in _scores(spec, panel).values()
        )
        stands = where(load_checkpoint(net))
        iteration, hours = stands["iteration"], stands["cpu_hours"]
        elo, low, high = (float(v[-1]) for v in (fit.ratings, fit.lower, fit.upper))
        games = int(fit.games[-1])
        print(f"| {name} | {iteration} | {hours:.2f} | {elo:.0f} [{low:.0f}, {high:.0f}] | "
              f"{games} | {scores} |")  # fmt: skip
        curves.setdefault(name, []).append((hours, elo, low, high))
    if plot and curves:
        near = {m.spec: m.elo for m in panel.members}
        title = (f"Elo against CPU-hours of training, side 10\neach net at {simulations} "
                 f"simulations against {len(panel.members)} members of the pool")  # fmt: skip
        # Where a run's recipe changed, as its last key: "+post_swap_samples=true".
        marks = {
            name: [(h, f"+{o.rsplit('.', 1)[-1]}") for h, o in recipe_changes(name)]
            for name in curves
        }
        print(plot_rating_curves(curves, plot, references=near, marks=marks, title=title,
                                 legend="outside"))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["rate", "draw"])
    parser.add_argument("names", nargs="*", help="runs of benchmarks/long_runs/ (default: all)")
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--panel", nargs="+", default=list(PANEL), help="members every net meets")
    parser.add_argument("--games", type=int, default=40, help="games against each member (rate)")
    parser.add_argument("--plot", type=Path, default=None, help="the curve's PNG (draw)")
    args = parser.parse_args(argv)
    plot = None if args.plot is None else args.plot.resolve()
    os.chdir(ROOT)  # the nets are named by paths relative to the repository, as cached
    if args.action == "rate":
        rate(args.names, args.simulations, args.panel, args.games)
    else:
        draw(args.names, args.simulations, args.panel, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
