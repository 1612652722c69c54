"""The solver's connections against each other: first moves solved from scratch, in one run.

    nice -n 5 python scripts/compare_solvers.py --side 5                      # every first move
    nice -n 5 python scripts/compare_solvers.py --side 5 --cells a1 b1 e1     # a subset

Each variant (``--variants``, default ``greedy hsearch``; `VARIANTS`: `Solver`'s settings)
gets a fresh solver and solves the first moves (`trapy_rl.solve.openings.solve_opening`: both
positions of each stone, one cell of each mirror pair, the table kept from cell to cell as in
``scripts/solve_openings.py``), variant after variant in one process. A line per cell and
variant: the value, the positions expanded and the CPU-seconds; then the totals and their
ratios to the first variant. Every value is checked against the shipped table where one exists.
"""

from __future__ import annotations

import argparse
import sys

from trapy_rl.errors import reported
from trapy_rl.game.board import Board
from trapy_rl.solve import Solver
from trapy_rl.solve.openings import load_openings, solve_opening

# A variant's name and the `Solver` settings it stands for.
VARIANTS: dict[str, dict] = {
    "greedy": {"connections": "greedy"},  # the solver of the shipped tables
    "hsearch": {"connections": "hsearch"},  # today's default: H-search and proof sets
    "hsearch-no-sets": {"connections": "hsearch", "proof_sets": False},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compare_solvers.py", description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=4, help="board side (default 4)")
    parser.add_argument("--cells", nargs="*", help="first moves by name (default: all)")
    parser.add_argument(
        "--variants", nargs="+", default=["greedy", "hsearch"], choices=list(VARIANTS)
    )
    parser.add_argument("--table-bits", type=int, default=22, help="2**bits entries (22)")
    args = parser.parse_args(argv)
    with reported(parser.prog):
        board = Board(args.side)
        if args.cells:
            cells = [board.parse_action(name) for name in args.cells]
        else:
            cells = [c for c in range(board.num_cells) if board.mirror_cells[c] >= c]
        try:
            shipped = load_openings(args.side)["cells"]
        except ValueError:
            shipped = {}
        totals = {}
        for variant in args.variants:
            solver = Solver(board, table_bits=args.table_bits, **VARIANTS[variant])
            nodes = cpu = 0.0
            for cell in cells:
                opening = solve_opening(solver, cell)
                known = shipped.get(opening.cell)
                if known is not None and known["stone_wins"] != opening.stone_wins:
                    raise AssertionError(f"{opening.cell}: {variant} disagrees with the table")
                nodes += opening.nodes
                cpu += opening.cpu_seconds
                print(
                    f"{variant:15} {opening.cell:4} stone_wins={opening.stone_wins!s:5} "
                    f"nodes={opening.nodes:>11,} cpu_s={opening.cpu_seconds:9.2f}",
                    flush=True,
                )
            totals[variant] = (nodes, cpu)
        first_nodes, first_cpu = totals[args.variants[0]]
        for variant, (nodes, cpu) in totals.items():
            print(
                f"total {variant:15} {len(cells)} cells: nodes={int(nodes):,} cpu_s={cpu:.1f} "
                f"({first_nodes / max(nodes, 1):.1f}x fewer nodes, "
                f"{first_cpu / max(cpu, 1e-9):.1f}x less CPU than {args.variants[0]})",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
