"""Learned answers checked against the exact ones on sides 4 and 5.

The figures: docs/experiments/2026-12-03-exact-values.md.

    python scripts/check_learned.py claims                       # v* and the description's claim
    python scripts/check_learned.py cost                         # what side 6 would cost
    python scripts/check_learned.py maps --side 5 --checkpoints RUN/checkpoints/ckpt_000005.pt \\
        RUN/checkpoints/latest.pt --simulations 16 64 --playouts 32
    python scripts/check_learned.py moves --side 5 --checkpoint RUN/checkpoints/latest.pt \\
        --games 120

- ``claims``: v*(c) of every solved first move (`trapy_rl.solve.openings.exact_values`): the
  share of first moves yellow should swap, and the claim of the game's description that the
  middle of the long edge is strongest: the share of winning stones near it and elsewhere
  (`trapy_rl.analysis.near_long_edge_middle`), a one-sided Mann-Whitney test.
- ``maps``: the played opening map (``estimator=playout``, the published method of
  docs/openings.md: the net playing both sides with root noise and the first moves drawn) of
  each checkpoint and simulation count; its swap decisions (v > 1/2) against v*: the share that
  agree, and each disagreeing cell with its interval (an interval clear of 1/2 is the agent's
  own error, which more games cannot mend).
- ``moves``: positions of the net's own games (the map's agent, from the empty board); in each
  won position for the player to move, whether the policy's move (``net:``) and the move of a
  200-simulation search (``mcts:...:200``) keep it won, the solver deciding. A position or a
  move the solver cannot prove within ``--max-nodes`` is left out and counted.
- ``cost``: nodes and time per first move on sides 4 and 5, and side 6 extrapolated from them.

``--table`` reads a solved-openings file instead of the shipped one (a side-5 table in progress,
say). Heavy parts print their progress; run them under ``nice`` on a shared machine.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu

from trapy_rl.agents.kinds import parse_agent
from trapy_rl.analysis import estimate_openings, near_long_edge_middle
from trapy_rl.analysis.learned import exact_swap_agreement
from trapy_rl.errors import reported
from trapy_rl.eval.arena import play_games
from trapy_rl.eval.stats import wilson_interval
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.solve import SolveBudgetError, Solver
from trapy_rl.solve.openings import (
    draw_exact_values,
    exact_values,
    load_openings,
    read_openings,
)


def exact_table(side: int, path: Path | None) -> dict:
    """The solved openings of ``side``: the file ``path``, else the shipped table."""
    table = load_openings(side) if path is None else read_openings(path)
    if table["side"] != side:
        raise ValueError(f"{path} holds side {table['side']}, not side {side}")
    return table


def _solved(v_star: np.ndarray) -> np.ndarray:
    return ~np.isnan(v_star)


# ---------------------------------------------------------------------- claims
def claims(side: int, table: dict) -> dict:
    """v* near the middle of the long edge and elsewhere, over the solved cells."""
    board = Board(side)
    v_star = exact_values(table)
    solved = _solved(v_star)
    near = near_long_edge_middle(board)
    middle = board.names[board.cell_index(0, 0)]
    wins = [board.names[c] for c in np.flatnonzero(solved & (v_star == 1.0))]
    a, b = v_star[solved & near], v_star[solved & ~near]
    p = float(mannwhitneyu(a, b, alternative="greater").pvalue) if len(a) and len(b) else math.nan
    result = {
        "side": side,
        "solved": int(solved.sum()),
        "cells": board.num_cells,
        "swap_share": float(v_star[solved].mean()),
        "winning_stones": wins,
        "middle": middle,
        "middle_wins": bool(v_star[board.cell_index(0, 0)] == 1.0),
        "near": [board.names[c] for c in np.flatnonzero(near)],
        "near_share": float(a.mean()) if len(a) else math.nan,
        "elsewhere_share": float(b.mean()) if len(b) else math.nan,
        "p_value": p,
        "bottom_row": {
            board.names[c]: int(v_star[c]) if solved[c] else None
            for c in range(board.num_cells)
            if board.names[c].endswith("1") and len(board.names[c]) == 2
        },
    }
    print(
        f"side {side}: {result['solved']} of {board.num_cells} first moves solved; "
        f"the stone wins on {len(wins)} ({result['swap_share']:.0%}: yellow swaps those): "
        f"{' '.join(wins)}"
    )
    print(
        f"  middle of the long edge {middle}: the stone "
        f"{'wins' if result['middle_wins'] else 'loses'}; near it ({' '.join(result['near'])}) "
        f"{result['near_share']:.0%} of the stones win, elsewhere {result['elsewhere_share']:.0%}; "
        f"one-sided Mann-Whitney p = {p:.2g}"
    )
    row = " ".join(
        f"{k}:{'-' if v is None else 'W' if v else 'l'}" for k, v in result["bottom_row"].items()
    )
    print(f"  the long edge (W: the stone wins): {row}")
    return result


def draw_exact(tables: dict[int, dict], path: Path) -> None:
    """v* of each table side by side (`draw_exact_values`), written to ``path``."""
    from matplotlib.figure import Figure  # only for the picture (slow to import)

    fig = Figure(figsize=(6.5 * len(tables), 5.2), layout="constrained")
    for ax, table in zip(fig.subplots(1, len(tables)), tables.values(), strict=True):
        draw_exact_values(table, ax=ax)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


# ---------------------------------------------------------------------- maps
def maps(args: argparse.Namespace, table: dict) -> list[dict]:
    """The played map of every checkpoint and simulation count against v*."""
    board = Board(args.side)
    v_star = exact_values(table)
    rows = []
    for checkpoint in args.checkpoints:
        for simulations in args.simulations:
            agent = (
                f"mcts:{checkpoint}:{simulations},noise=true,"
                f"temperature_moves={args.temperature_moves},device=cpu"
            )
            started = time.perf_counter()
            if args.estimator == "search":
                print(f"map: search, {checkpoint}, {simulations} simulations an opening ...")
            else:
                print(f"map: {agent}, {args.playouts} games a cell ...", flush=True)
            played = estimate_openings(
                side=args.side,
                estimator=args.estimator,
                checkpoint=checkpoint if args.estimator == "search" else None,
                search=SearchSettings(num_simulations=simulations),
                agent=agent,
                playouts=args.playouts,
                refine_fairest=0,
                seed=args.seed,
                cache_dir=args.cache_dir,
                progress=True,
            )
            row = exact_swap_agreement(played, v_star, board)
            row.update(
                games=args.playouts * board.num_cells if args.estimator == "playout" else 0,
                checkpoint=str(checkpoint),
                simulations=simulations,
                seconds=round(time.perf_counter() - started, 1),
                cached=bool(played.attrs.get("cached")),
            )
            rows.append(row)
            print(
                f"  swap decisions agree with v* on {row['agree']} of {row['solved']} cells "
                f"({row['share']:.1%}); sure (interval clear of 1/2): {row['sure_agree']} of "
                f"{row['sure']} agree; {row['games']:,} games, {row['seconds']:.0f} s"
                f"{' (cached)' if row['cached'] else ''}",
                flush=True,
            )
            for name, v, low, high in row["wrong"]:
                kind = (
                    "no interval"
                    if math.isnan(low)
                    else "the agent's error"
                    if low > 0.5 or high < 0.5
                    else "within noise"
                )
                print(
                    f"    {name}: v = {v:.3f} [{low:.2f}, {high:.2f}], v* = "
                    f"{int(v_star[board.parse_action(name)])} ({kind})"
                )
    return rows


# ---------------------------------------------------------------------- moves
def own_positions(args: argparse.Namespace, board: Board) -> list[GameState]:
    """Every position (the game not over) of ``args.games`` games of the map's agent with itself."""
    agent = parse_agent(
        f"mcts:{args.checkpoint}:{args.game_simulations},noise=true,"
        f"temperature_moves={args.temperature_moves},device=cpu",
        board=board,
        seed=args.seed,
    )
    batch = BatchGame(args.games, board)
    play_games(batch, agent, agent, a_is_blue=np.ones(args.games, dtype=bool), progress=True)
    positions = []
    for game in range(args.games):
        state = GameState(board)
        for action in batch.history[game, : batch.move_count[game]]:
            positions.append(state.copy())
            state.play(int(action))
    return positions


def _keeps_win(solver: Solver, state: GameState, move: int, budget: int) -> bool:
    """Whether ``move`` keeps the won ``state`` won (the opponent loses the position after it)."""
    child = state.copy().play(int(move))
    if child.is_over:
        return child.winner == state.to_move
    return not solver.solve(child, max_nodes=budget).win


def moves(args: argparse.Namespace) -> dict:
    """The share of won positions whose policy and search moves keep the win."""
    board = Board(args.side)
    print(f"games: {args.games} of the net with itself ...", flush=True)
    positions = own_positions(args, board)
    distinct = len({(s.stones.tobytes(), s.to_move, s.move_count <= 1) for s in positions})
    print(f"{len(positions):,} positions ({distinct:,} distinct); solving them ...", flush=True)
    solver = Solver(board, table_bits=args.table_bits)
    won, skipped, by_ply, over_by_ply = [], 0, {}, {}
    started = time.perf_counter()
    for i, state in enumerate(positions):
        tic = time.perf_counter()
        try:
            answer = solver.solve(state, max_nodes=args.max_nodes)
        except SolveBudgetError:
            skipped += 1
            over_by_ply[state.move_count] = over_by_ply.get(state.move_count, 0) + 1
            continue
        by_ply.setdefault(state.move_count, []).append(time.perf_counter() - tic)
        if answer.win:
            won.append(state)
        if (i + 1) % 250 == 0:
            print(
                f"  {i + 1:,} of {len(positions):,} solved, {len(won):,} won, {skipped} over "
                f"the budget, {time.perf_counter() - started:.0f} s",
                flush=True,
            )
    print(
        f"{len(won):,} won positions of {len(positions) - skipped:,} solved "
        f"({skipped} over {args.max_nodes:,} nodes left out)",
        flush=True,
    )
    result = {
        "positions": len(positions),
        "distinct": distinct,
        "skipped": skipped,
        "won": len(won),
    }
    batch = BatchGame.from_states(won)
    games = np.arange(len(won))
    for label, spec in (
        ("policy", f"net:{args.checkpoint},device=cpu"),
        ("search", f"mcts:{args.checkpoint}:{args.search_simulations},device=cpu"),
    ):
        agent = parse_agent(spec, board=board, seed=args.seed)
        chosen = np.concatenate(
            [agent.act(batch, games[s : s + 256]) for s in range(0, len(won), 256)]
        )
        kept = unproven = 0
        lost = []  # [stones on the board] of the positions whose win the move gave away
        for state, move in zip(won, chosen, strict=True):
            try:
                keeps = _keeps_win(solver, state, int(move), args.max_nodes)
            except SolveBudgetError:
                unproven += 1
                continue
            kept += keeps
            if not keeps:
                lost.append(int((state.stones != 0).sum()))
        judged = len(won) - unproven
        low, high = wilson_interval(kept, judged)
        result[label] = {"spec": spec, "kept": kept, "judged": judged, "low": low, "high": high}
        print(
            f"  {label} ({spec}): keeps the win in {kept:,} of {judged:,} won positions "
            f"({kept / judged:.1%}, 95% [{low:.1%}, {high:.1%}]); {unproven} moves unproven; "
            f"lost wins by stones on the board: {_by_stones(lost, board)}",
            flush=True,
        )
    if args.baseline:
        kept = total = 0
        for state in won:
            for action in state.legal_actions():
                try:
                    kept += _keeps_win(solver, state, int(action), args.max_nodes)
                    total += 1
                except SolveBudgetError:
                    pass
        result["random"] = {"kept": kept, "judged": total}
        print(
            f"  a uniformly random legal move keeps the win {kept / total:.1%} of the time "
            f"({total:,} moves)",
            flush=True,
        )
    times = {
        ply: (len(t), float(np.median(t)), float(np.max(t))) for ply, t in sorted(by_ply.items())
    }
    result["seconds_by_ply"] = times
    early = ", ".join(
        f"ply {p}: {n} positions, median {m:.2f} s, max {x:.1f} s"
        for p, (n, m, x) in times.items()
        if p <= 4
    )
    print(f"  the solver's time on the first plies: {early}")
    over = ", ".join(f"ply {p}: {n}" for p, n in sorted(over_by_ply.items()) if p <= 6)
    print(f"  positions over the budget on the first plies: {over or 'none'}")
    result["over_budget_by_ply"] = over_by_ply
    return result


def _by_stones(lost: list[int], board: Board) -> str:
    """How many given-away wins had at most a third, two thirds, or more of the board filled."""
    thirds = np.digitize(lost, [board.num_cells / 3, 2 * board.num_cells / 3], right=True)
    counts = np.bincount(thirds, minlength=3)
    return f"{counts[0]} early, {counts[1]} middle, {counts[2]} late (board filled by thirds)"


# ---------------------------------------------------------------------- cost
def cost(tables: dict[int, dict]) -> dict:
    """Nodes and seconds per solved first move, and side 6 extrapolated from sides 4 and 5."""
    rows = {}
    for side, table in tables.items():
        cells = [c for c in table["cells"].values() if c["nodes"] is not None]
        nodes = np.array([c["nodes"] for c in cells], dtype=np.float64)
        cpu = np.array([c["cpu_seconds"] for c in cells], dtype=np.float64)
        board = Board(side)
        unique = sum(1 for c in range(board.num_cells) if board.mirror_cells[c] >= c)
        rows[side] = {
            "cells": board.num_cells,
            "unique": unique,
            "solved": len(cells),
            "nodes_mean": float(nodes.mean()),
            "nodes_median": float(np.median(nodes)),
            "nodes_max": float(nodes.max()),
            "cpu_total": float(cpu.sum()),
            "nodes_per_cpu_second": float(nodes.sum() / cpu.sum()),
            "complete": table["complete"],
        }
        print(
            f"side {side}: {len(cells)} of {unique} cells solved (one of each mirror pair); "
            f"nodes per cell mean {nodes.mean():,.0f}, median {np.median(nodes):,.0f}, max "
            f"{nodes.max():,.0f}; {cpu.sum():,.0f} s CPU in all, "
            f"{rows[side]['nodes_per_cpu_second']:,.0f} nodes per CPU second"
        )
    four, five = rows[4], rows[5]
    growth = five["nodes_mean"] / four["nodes_mean"]  # from 22 to 35 cells
    per_cell = growth ** (1 / (five["cells"] - four["cells"]))  # per empty cell added
    six = Board(6)
    unique6 = sum(1 for c in range(six.num_cells) if six.mirror_cells[c] >= c)
    low_nodes = five["nodes_mean"] * growth  # the same factor per side again
    high_nodes = five["nodes_mean"] * per_cell ** (six.num_cells - five["cells"])
    rate = five["nodes_per_cpu_second"]
    out = {
        "growth_4_to_5": growth,
        "per_empty_cell": per_cell,
        "side6_cells": six.num_cells,
        "side6_unique": unique6,
        "side6_nodes_per_cell": (low_nodes, high_nodes),
        "side6_cpu_days": tuple(n * unique6 / rate / 86400 for n in (low_nodes, high_nodes)),
    }
    print(
        f"side 4 -> 5: {growth:,.0f} times the nodes per first move ({per_cell:.2f} per cell "
        f"added, {five['cells'] - four['cells']} cells)"
    )
    print(
        f"side 6 ({six.num_cells} cells, {unique6} to solve): {low_nodes:.1e} (the same factor "
        f"per side) to {high_nodes:.1e} (the same factor per cell) nodes per first move; at "
        f"{rate:,.0f} nodes per CPU second, {out['side6_cpu_days'][0]:.0f} to "
        f"{out['side6_cpu_days'][1]:.0f} CPU-days for the table, if the rate held (it "
        f"would not: the table of 2**25 positions is full long before)"
    )
    return out


# ---------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="check_learned.py", description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=("claims", "maps", "moves", "cost"))
    parser.add_argument("--side", type=int, default=5, choices=(4, 5))
    parser.add_argument("--table", type=Path, help="a solved-openings file (default: shipped)")
    parser.add_argument("--picture", type=Path, help="claims: draw v* into this file")
    parser.add_argument("--table4", type=Path, help="cost: side 4's file (default: shipped)")
    parser.add_argument("--checkpoints", nargs="+", default=[], help="maps: checkpoint files")
    parser.add_argument("--simulations", type=int, nargs="+", default=[64], help="maps: per move")
    parser.add_argument("--playouts", type=int, default=32, help="maps: games a cell")
    parser.add_argument(
        "--estimator",
        default="playout",
        choices=("playout", "search"),
        help="maps: games (the published method) or the net's search alone",
    )
    parser.add_argument(
        "--temperature-moves",
        type=int,
        default=4,
        help="moves drawn from the visits, counted from the empty board",
    )
    parser.add_argument("--cache-dir", default="default", help="maps: the opening cache")
    parser.add_argument("--checkpoint", help="moves: the net")
    parser.add_argument("--games", type=int, default=120, help="moves: games of the net")
    parser.add_argument("--game-simulations", type=int, default=64, help="moves: in its games")
    parser.add_argument("--search-simulations", type=int, default=200, help="moves: the search")
    parser.add_argument("--max-nodes", type=int, default=20_000, help="moves: budget a solve")
    parser.add_argument("--table-bits", type=int, default=22, help="moves: the solver's table")
    parser.add_argument("--baseline", action="store_true", help="moves: every legal move too")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with reported(parser.prog):
        if args.part == "claims":
            tables = {s: exact_table(s, args.table if s == args.side else None) for s in (4, 5)}
            for side, table in tables.items():
                claims(side, table)
            if args.picture:
                draw_exact(tables, args.picture)
        elif args.part == "cost":
            cost({4: exact_table(4, args.table4), 5: exact_table(5, args.table)})
        elif args.part == "maps":
            if not args.checkpoints:
                raise ValueError("maps: give --checkpoints")
            maps(args, exact_table(args.side, args.table))
        else:
            if not args.checkpoint:
                raise ValueError("moves: give --checkpoint")
            moves(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
