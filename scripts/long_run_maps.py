"""The long runs' opening maps from search: does each kept net answer the opening question as
the nets before it did, and do two seeds answer it alike?

    python scripts/long_run_maps.py                                   # the table
    python scripts/long_run_maps.py --plot docs/long-runs-maps.png    # and the picture
    python scripts/long_run_maps.py --pair side10-small-s0/net_it001899.pt \
        side10-small-s1/net_it002176.pt --simulations 3200          # two nets in full
    python scripts/long_run_maps.py --pair s0/a.pt,s0/b.pt s1/c.pt,s1/d.pt  # averaged maps
    python scripts/long_run_maps.py --among s0/a.pt s1/b.pt s2/c.pt s3/d.pt  # every pair, halves

Each kept side-10 net of ``benchmarks/long_runs/`` (`scripts/long_runs.py`) values every first
move c by search on the position after ``c, swap`` (``--simulations`` an opening, no noise:
``trapy-openings estimator=search``, cached, about a minute a map for the small net on one
core). Each map is compared (Spearman's rho over the 145 cells, `compare_maps`) with a fixed
reference, the played map of the two-hour recipe's seed 0 (``--reference``, the shipped pair's
map of 2026-12-02), and with the map of each other seed's net nearest in CPU-hours (if within
0.35 of an hour), one row per other seed. The column "swap" is the share of first moves the
map says yellow should swap (v > 1/2).

A search map is the net's own opinion in one position, cheap beside the published map from
play (hours of games a net); it shows where a net's reply after a swap is off its training
distribution long before the played maps are paid for.

``--pair A B`` compares two maps in full (`MapAgreement`: rho, the 20 fairest cells shared,
opposite decisions); a side named as several nets joined by commas is the mean of their maps.
``--among`` takes three or more sides (one a seed) and compares every pair of them, then every
split of the sides into two halves, each half's map the mean of its sides' maps: how far the
answer of half the seeds agrees with the other half's, the answer that depends on no one seed.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
from long_runs import where  # this folder's scripts: the legs' bookkeeping, the kept nets
from strength_curve import kept_nets

from trapy_rl.analysis.agreement import compare_maps
from trapy_rl.analysis.learned import LABELS, seed_agreement
from trapy_rl.analysis.openings import estimate_openings, opening_table, read_opening_json
from trapy_rl.errors import reported
from trapy_rl.eval.report import plot_curve_panels
from trapy_rl.game.board import Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.checkpoint import load_checkpoint

REFERENCE = Path("benchmarks") / "reference" / "openings" / "openings-seed_0.json"
_SEED = re.compile(r"-s\d+(?=-|$)")  # a run name's seed token: -s0, -s1
NEAR_HOURS = 0.35  # the other seed's net compared: the nearest in CPU-hours, if this near


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="runs of benchmarks/long_runs/ (default: all)")
    parser.add_argument("--simulations", type=int, default=800)
    parser.add_argument("--reference", type=Path, default=REFERENCE, help="an opening map's JSON")
    parser.add_argument("--cache-dir", default="default")
    parser.add_argument("--plot", type=Path, default=None, help="the picture (PNG)")
    parser.add_argument("--pair", nargs=2, metavar=("A", "B"), help="compare two (mean) maps")
    parser.add_argument("--among", nargs="+", metavar="SIDE", help="every pair and every halving")
    args = parser.parse_args(argv)
    search = SearchSettings(num_simulations=args.simulations)
    if args.pair:
        with reported("long_run_maps"):
            a, b = (_mean_map(side, search, args.cache_dir) for side in args.pair)
        print(f"{args.pair[0]} against {args.pair[1]}, {args.simulations} simulations:")
        print(compare_maps(a, b))
        return 0
    if args.among:
        if not 3 <= len(args.among) <= len(LABELS):
            parser.error(f"--among takes 3 to {len(LABELS)} sides (two: --pair)")
        with reported("long_run_maps"):
            v = np.stack([_mean_map(s, search, args.cache_dir)["v"].to_numpy() for s in args.among])
        labels = (f"{LABELS[i]} = {side}" for i, side in enumerate(args.among))
        print(f"{args.simulations} simulations; " + ", ".join(labels))
        print(seed_agreement(v, Board(10)).table())
        return 0

    _, reference = read_opening_json(args.reference)
    maps = {}  # run -> [(CPU-hours, iteration, table)]
    for run, net in kept_nets(args.names):
        table = estimate_openings(
            side=10, estimator="search", checkpoint=net, search=search, cache_dir=args.cache_dir
        )
        stands = where(load_checkpoint(net))
        maps.setdefault(run, []).append((stands["cpu_hours"], stands["iteration"], table))

    print("| run | iteration | CPU-hours | rho vs the reference | other seed | rho | swap |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: |")
    # Two panels: each run against the reference, and each pair of seeds against each other.
    panels: dict[str, dict[str, list[tuple[float, float, float, float]]]] = {
        "each run against the reference played map": {},
        "two seeds against each other (nets nearest in CPU-hours)": {},
    }
    to_reference, across_seeds = panels.values()
    for run, points in maps.items():
        others = [(r, p) for r, p in maps.items() if r != run and _same_recipe(r, run)]
        for hours, iteration, table in sorted(points, key=lambda p: p[0]):
            rho = compare_maps(table, reference).spearman
            to_reference.setdefault(run, []).append((hours, rho, rho, rho))
            row = f"| {run} | {iteration} | {hours:.2f} | {rho:.2f} |"
            swap = f"{table['swap'].mean():.2f} |"
            # One row for each other seed with a net this near in CPU-hours.
            near = [(r, min(p, key=lambda q: abs(q[0] - hours))) for r, p in others]
            near = [(r, q) for r, q in near if abs(q[0] - hours) <= NEAR_HOURS]
            for other_run, (other_hours, _, other_table) in near:
                cross = compare_maps(table, other_table).spearman
                print(f"{row} {other_run} at {other_hours:.2f} h | {cross:.2f} | {swap}")
                if run < other_run:  # one curve per pair of seeds
                    pair = f"{run} vs {other_run}"
                    across_seeds.setdefault(pair, []).append((hours, cross, cross, cross))
            if not near:
                print(f"{row} - |  | {swap}")
    if args.plot is not None:
        title = f"Opening maps by search ({args.simulations} simulations) of the long runs' nets"
        print(plot_curve_panels(panels, args.plot, title=title, y_label="Spearman's rho"))
    return 0


def _mean_map(nets: str, search: SearchSettings, cache_dir: str):
    """The map by search of the kept nets named (``RUN/net.pt``, joined by commas): the mean of
    their stone values (one net's own map when one is named)."""
    v = [
        estimate_openings(
            side=10, estimator="search", checkpoint=net, search=search, cache_dir=cache_dir
        )["v"].to_numpy()
        for _, net in kept_nets(nets.split(","))
    ]
    return opening_table(np.mean(v, axis=0), Board(10))  # v: [nets, K]


def _same_recipe(a: str, b: str) -> bool:
    """Two runs of one recipe and net size with other seeds: their names differ in the seed
    (``side10-small-s0`` and ``side10-small-s1``, or the branches ``side10-small-s0-lr`` and
    ``side10-small-s1-lr``)."""
    return _SEED.sub("", a) == _SEED.sub("", b)


if __name__ == "__main__":
    raise SystemExit(main())
