"""What two played opening maps of one agent reach, by the method's settings: the agreement
bars' ceiling before any games are played (`trapy_rl.analysis.replication`).

    python scripts/opening_bars.py                         # the published method and richer ones
    python scripts/opening_bars.py --truth docs/openings-seed_0.json --draws 400

Each truth map (default: the two-hour pair's played maps in benchmarks/reference/openings/) is
taken as the agents' chances; the method is replayed on it with binomial games, twice, and the
pair compared: Spearman's rho, the 20 fairest cells shared, opposite sure decisions. A row says
how often a pair meets the bars (rho >= 0.95, 15 of 20 shared, no opposite sure decision) and
how many games a map costs. Seconds a row.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from trapy_rl.analysis.openings import read_opening_json
from trapy_rl.analysis.replication import (
    FAIREST_SHARED_BAR,
    SPEARMAN_BAR,
    replicate_playout_map,
)
from trapy_rl.errors import reported

REFERENCE = Path("benchmarks") / "reference" / "openings"
# (playouts, refine_fairest, half_width): the published method first, then richer ones.
METHODS = [(128, 20, 0.05), (256, 20, 0.05), (128, 40, 0.03), (256, 40, 0.03), (512, 20, 0.05)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--truth",
        type=Path,
        nargs="+",
        default=sorted(REFERENCE.glob("openings-*.json")),
        help="played maps' JSON taken as the truth",
    )
    parser.add_argument("--draws", type=int, default=200, help="pairs of maps a row")
    parser.add_argument("--spearman", type=float, default=SPEARMAN_BAR)
    parser.add_argument("--fairest-shared", type=int, default=FAIREST_SHARED_BAR)
    args = parser.parse_args(argv)

    with reported("opening_bars"):
        print(
            f"| truth | games a cell first | refined (fairest, +-) | games a map | rho | "
            f"P(rho >= {args.spearman}) | fairest shared | P(>= {args.fairest_shared}) | "
            "P(no opposite) | P(all three) |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        bars = {"spearman": args.spearman, "fairest_shared": args.fairest_shared}
        for path in args.truth:
            board, truth = read_opening_json(path)
            for playouts, refine, half_width in METHODS:
                r = replicate_playout_map(
                    truth,
                    board,
                    playouts=playouts,
                    refine_fairest=refine,
                    half_width=half_width,
                    draws=args.draws,
                )
                print(
                    f"| {path.stem} | {2 * playouts} | {refine}, {half_width} | "
                    f"{np.median(r.games):,.0f} | {np.median(r.spearman):.3f} | "
                    f"{np.mean(r.spearman >= args.spearman):.2f} | "
                    f"{np.median(r.fairest_shared):.0f} | "
                    f"{np.mean(r.fairest_shared >= args.fairest_shared):.2f} | "
                    f"{np.mean(r.opposite == 0):.2f} | "
                    f"{np.mean(r.meets(**bars)):.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
