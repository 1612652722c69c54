"""Benchmarks of the toolkit, by section; prints each figure with the machine it ran on.

    python scripts/bench.py                 # every section
    python scripts/bench.py env search      # chosen sections
    python scripts/bench.py env --quick     # a short run, to check the script works
    python scripts/bench.py onegame --baseline 5c9f303   # one game's move, then against now

Each section is a module ``benchmarks/<section>.py`` with ``run(quick: bool) -> list[dict]``;
a row has ``name``, ``value``, ``unit`` and optional ``note``. Figures are medians of repeats.
The peers (mctx's search on pgx's Hex, pgx's engine) have their own script, which needs the
``peers`` extra: ``python -m benchmarks.peers.mctx_pgx``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

from trapy_rl.provenance import machine

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("env", "net", "search", "selfplay", "backends", "ray_scaling", "openings", "onegame")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", metavar="SECTION", help=f"any of {SECTIONS}")
    parser.add_argument("--quick", action="store_true", help="few repeats, small sizes")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument(
        "--baseline", help="onegame: the commit to compare with (TRAPY_BENCH_BASELINE)"
    )
    args = parser.parse_args(argv)
    if args.baseline:
        os.environ["TRAPY_BENCH_BASELINE"] = args.baseline
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    sections = args.sections or list(SECTIONS)
    sys.path.insert(0, str(ROOT))
    print(f"machine: {machine(libraries=True)}")
    rows = []
    for section in sections:
        module = importlib.import_module(f"benchmarks.{section}")
        print(f"\n== {section} ==")
        for row in module.run(args.quick):
            row = {"section": section, **row}
            rows.append(row)
            note = f"  ({row['note']})" if row.get("note") else ""
            print(f"{row['name']:<48} {row['value']:>14,.1f} {row['unit']}{note}", flush=True)
    if args.json:
        args.json.write_text(
            json.dumps({"machine": machine(libraries=True), "rows": rows}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
