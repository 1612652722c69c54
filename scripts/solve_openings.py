"""Solve every first move of a small board: ``trapy_rl/solve/data/side{n}.json``.

    python scripts/solve_openings.py --side 4              # all of side 4, about a minute
    nohup python scripts/solve_openings.py --side 5 > side5.log 2>&1 &   # hours; resumable
    nohup nice -n 19 python scripts/solve_openings.py --side 6 --max-nodes 2e6 > leg.log 2>&1 &

Each cell's two positions (see `trapy_rl.solve.openings`) are solved in cell order, one cell
of each mirror pair, and the file is rewritten after every cell, so an interrupted run loses
only the cell in progress: the same command resumes from the cells already in the file
(``--fresh`` starts over). A line per cell on stderr gives the value, the proof size, the
time, the rate and an estimate of the time left (the mean time of the cells solved so far
times the cells left: the cells differ by orders of magnitude, so it is rough).

A board too large for one run is solved in legs: ``--max-nodes`` gives each cell a budget, a
cell not proven within it is listed as unproven (and skipped by later legs with no larger
budget), and each leg appends its command, commit, budget and totals to the file's ``legs``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

from trapy_rl import provenance
from trapy_rl.errors import reported
from trapy_rl.game.board import Board
from trapy_rl.solve import Solver
from trapy_rl.solve.openings import (
    Opening,
    Unproven,
    new_table,
    read_openings,
    solve_openings,
    write_openings,
)
from trapy_rl.solve.solver import check_node_budget

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "trapy_rl" / "solve" / "data"


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
        "--max-nodes", type=float, help="a cell's budget of positions (default: none); a leg"
    )
    parser.add_argument(
        "--note", default="", help="what else ran on the machine, kept in the file's 'machine'"
    )
    args = parser.parse_args(argv)
    with reported(parser.prog):
        board = Board(args.side)
        out = args.out or DATA / f"side{args.side}.json"
        bits = args.table_bits or (20 if args.side <= 4 else 25)
        solver = Solver(board, method=args.method, table_bits=bits)
        machine = provenance.machine() + (f"; {args.note}" if args.note else "")
        table = new_table(solver, machine=machine)
        if out.exists() and not args.fresh:
            table = read_openings(out)
            if table["side"] != args.side:
                raise ValueError(f"{out} holds side {table['side']}, not side {args.side}")
            if machine not in table["machine"]:
                table["machine"] += f"; resumed on {machine}"
        max_nodes = None
        if args.max_nodes is not None:
            max_nodes = check_node_budget(args.max_nodes, "--max-nodes")
        words = sys.argv[1:] if argv is None else argv
        command = " ".join(["python scripts/solve_openings.py", *words])
        run(solver, table, out, max_nodes=max_nodes, command=command)
    return 0


def run(
    solver: Solver, table: dict, out: Path, *, max_nodes: int | None = None, command: str = ""
) -> None:
    """Solve the cells ``table`` lacks, writing ``out`` after each; progress on stderr. With
    ``max_nodes`` (a leg), each cell gets that budget and the leg is recorded in ``legs``."""
    board = solver.board
    tried = table.get("unproven", {})
    to_solve = sum(
        1
        for c in range(board.num_cells)
        if board.mirror_cells[c] >= c
        and board.cell_name(c) not in table["cells"]
        and (max_nodes is None or tried.get(board.cell_name(c), {}).get("max_nodes", 0) < max_nodes)
    )
    leg = None
    if max_nodes is not None and to_solve:  # a leg that tries nothing leaves no record
        leg = {
            "command": command,
            "commit": provenance.git_commit(ROOT),
            "started": datetime.datetime.now().isoformat(timespec="seconds"),
            "max_nodes": max_nodes,
            "proven": 0,
            "unproven": 0,
            "cpu_seconds": 0.0,
        }
        table.setdefault("legs", []).append(leg)
    print(
        f"side {board.side}: {len(table['cells'])} of {board.num_cells} cells in {out}; "
        f"{to_solve} to solve (one of each mirror pair)",
        file=sys.stderr,
        flush=True,
    )
    started, nodes, solved = time.perf_counter(), 0, 0
    for opening in solve_openings(solver, table, max_nodes=max_nodes):
        if leg is not None and not (isinstance(opening, Opening) and opening.mirror_of):
            leg["proven" if isinstance(opening, Opening) else "unproven"] += 1
            leg["cpu_seconds"] = round(leg["cpu_seconds"] + opening.cpu_seconds, 3)
        write_openings(table, out)
        if isinstance(opening, Unproven):
            solved += 1
            print(
                f"[{solved}/{to_solve}] {opening.cell}: not proven within {opening.max_nodes:,} "
                f"positions, {opening.seconds:.1f} s ({opening.cpu_seconds:.1f} s CPU)",
                file=sys.stderr,
                flush=True,
            )
            continue
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
