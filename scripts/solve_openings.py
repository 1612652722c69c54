"""Solve every first move of a small board: ``trapy_rl/solve/data/side{n}.json``.

    python scripts/solve_openings.py --side 4              # all of side 4, about a minute
    nohup python scripts/solve_openings.py --side 5 > side5.log 2>&1 &   # hours; resumable

Each cell's two positions (see `trapy_rl.solve.openings`) are solved in cell order, one cell
of each mirror pair, and the file is rewritten after every cell, so an interrupted run loses
only the cell in progress: the same command resumes from the cells already in the file
(``--fresh`` starts over). A line per cell on stderr gives the value, the proof size, the
time, the rate and an estimate of the time left (the mean time of the cells solved so far
times the cells left: the cells differ by orders of magnitude, so it is rough).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from trapy_rl.errors import reported
from trapy_rl.game.board import Board
from trapy_rl.solve import Solver
from trapy_rl.solve.openings import new_table, read_openings, solve_openings, write_openings

DATA = Path(__file__).resolve().parent.parent / "trapy_rl" / "solve" / "data"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solve_openings.py", description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=4, help="board side (default 4)")
    parser.add_argument("--out", type=Path, help="the JSON file (default: the package data)")
    parser.add_argument(
        "--table-bits", type=int, help="2**bits table entries (default: 20 to side 4, else 25)"
    )
    parser.add_argument("--method", default="dfpn", choices=("dfpn", "alphabeta"))
    parser.add_argument("--fresh", action="store_true", help="ignore an existing file")
    parser.add_argument(
        "--note", default="", help="what else ran on the machine, kept in the file's 'machine'"
    )
    args = parser.parse_args(argv)
    with reported(parser.prog):
        board = Board(args.side)
        out = args.out or DATA / f"side{args.side}.json"
        bits = args.table_bits or (20 if args.side <= 4 else 25)
        solver = Solver(board, method=args.method, table_bits=bits)
        machine = (
            f"{platform.machine()}, {os.cpu_count()} logical cores, "
            f"{platform.python_implementation()} {platform.python_version()}"
        ) + (f"; {args.note}" if args.note else "")
        table = new_table(solver, machine=machine)
        if out.exists() and not args.fresh:
            table = read_openings(out)
            if table["side"] != args.side:
                raise ValueError(f"{out} holds side {table['side']}, not side {args.side}")
            if machine not in table["machine"]:
                table["machine"] += f"; resumed on {machine}"
        run(solver, table, out)
    return 0


def run(solver: Solver, table: dict, out: Path) -> None:
    """Solve the cells ``table`` lacks, writing ``out`` after each; progress on stderr."""
    board = solver.board
    to_solve = sum(
        1
        for c in range(board.num_cells)
        if board.mirror_cells[c] >= c and board.cell_name(c) not in table["cells"]
    )
    print(
        f"side {board.side}: {len(table['cells'])} of {board.num_cells} cells in {out}; "
        f"{to_solve} to solve (one of each mirror pair)",
        file=sys.stderr,
        flush=True,
    )
    started, nodes, solved = time.perf_counter(), 0, 0
    for opening in solve_openings(solver, table):
        write_openings(table, out)
        if opening.mirror_of is not None:
            continue
        solved += 1
        nodes += opening.nodes
        elapsed = time.perf_counter() - started
        left = (to_solve - solved) * elapsed / solved
        verdict = "stone wins" if opening.stone_wins else f"stone loses to {opening.reply}"
        print(
            f"[{solved}/{to_solve}] {opening.cell}: {verdict}; {opening.nodes:,} nodes, "
            f"{opening.seconds:.1f} s ({opening.cpu_seconds:.1f} s CPU); "
            f"{nodes / elapsed:,.0f} nodes/s; ETA {_duration(left)}",
            file=sys.stderr,
            flush=True,
        )
    totals = table["totals"]
    print(
        f"done: {totals['solved']} cells solved, {totals['nodes']:,} nodes, "
        f"{totals['seconds']:.0f} s ({totals['cpu_seconds']:.0f} s CPU); complete: "
        f"{table['complete']}",
        file=sys.stderr,
    )


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


if __name__ == "__main__":
    sys.exit(main())
