"""The published opening map (docs/openings.md): two shipped nets' played maps and their
agreement, written by `trapy_rl.analysis.report.opening_report`.

    python scripts/openings_report.py                      # docs/ from the two shipped nets
                                                           # (its maps' JSON also into the
                                                           # package: trapy_rl/analysis/data)
    python scripts/openings_report.py --out /tmp/openings --playouts 4 --refine-fairest 5
    python scripts/openings_report.py --extend docs --playouts 64 --workers 2
                                                           # 64 more games a cell for docs/
    python scripts/openings_report.py --nets A B --before benchmarks/reference/openings
                                                           # beside the earlier pair's maps
    python scripts/openings_report.py ... --notes docs/openings-notes.md
                                                           # and what later tests found

Each map is hours of games on a CPU; the tables are cached (~/.cache/trapy_rl/openings), so
running it again only redraws. ``--workers 2`` plays each map on two processes, and a map
that was stopped resumes from its journal in the cache when the command runs again.
``trapy-openings estimator=playout agent=...`` computes one map with the same settings (and
fills the same cache).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from trapy_rl.errors import reported

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# The played maps the package ships (trapy_rl.analysis.published): copies of docs/'s.
SHIPPED = ROOT / "trapy_rl" / "analysis" / "data"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--nets",
        nargs=2,
        default=["pretrained", "pretrained_seed1"],
        help="two checkpoints or shipped names (default: the two shipped nets)",
    )
    parser.add_argument("--labels", nargs=2, default=["seed 0", "seed 1"])
    parser.add_argument("--simulations", type=int, default=64)
    parser.add_argument(
        "--temperature-moves",
        type=int,
        default=12,
        help="moves of a game drawn from the visit counts, as self-play draws them (default 12)",
    )
    parser.add_argument("--side", type=int, default=10)
    parser.add_argument("--playouts", type=int, default=128, help="games per cell at first")
    parser.add_argument("--refine-fairest", type=int, default=20)
    parser.add_argument("--half-width", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workers", type=int, default=1, help="batches of games played at once, one process each"
    )
    parser.add_argument(
        "--extend",
        type=Path,
        help="a folder of an earlier report (docs): keep its maps' games, add --playouts more",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="a folder of an earlier report (the pair before): its agreement beside these maps'",
    )
    parser.add_argument(
        "--notes",
        type=Path,
        help="a Markdown file written into the report after the agreement (later findings)",
    )
    parser.add_argument("--cache-dir", default="default")
    parser.add_argument("--out", type=Path, default=DOCS)
    parser.add_argument(
        "--ship",
        type=Path,
        help="also copy the maps' JSON here (default: trapy_rl/analysis/data when --out is "
        "docs/, the copies the package ships; else none)",
    )
    args = parser.parse_args(argv)
    ship = args.ship
    if ship is None and args.out.resolve() == DOCS.resolve():
        ship = SHIPPED

    from trapy_rl.analysis.report import opening_report

    with reported("openings_report"):
        report = opening_report(
            args.out,
            agents=[
                f"mcts:{net}:{args.simulations},noise=true,temperature_moves={args.temperature_moves}"
                for net in args.nets
            ],
            labels=args.labels,
            net=args.nets[0],
            side=args.side,
            playouts=args.playouts,
            refine_fairest=args.refine_fairest,
            half_width=args.half_width,
            seed=args.seed,
            workers=args.workers,
            extend=args.extend,
            before=args.before,
            notes=args.notes,
            ship=ship,
            cache_dir=None if args.cache_dir == "null" else args.cache_dir,
            command=" ".join(
                ["python scripts/openings_report.py"]
                + [shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)]
            ),
        )
        print(report.agreement)
        for name, path in report.paths.items():
            print(f"{name}: {path}")


if __name__ == "__main__":
    main()
