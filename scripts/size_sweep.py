"""Where learning breaks between side 5 and side 10: today's recipe on sides 5 to 8, three seeds a
side, each to a CPU cap scaled by the board, then the seeds' agreement and the truth.

    python scripts/size_sweep.py train --part 1/2 &   # one core: half of the runs, in order
    python scripts/size_sweep.py train --part 2/2 &   # the other core: the other half
    python scripts/size_sweep.py train --sides 5 --beyond 2   # on past the cap: a plateau?
    python scripts/size_sweep.py report --plot docs/size-sweep.png --elo 8
    python scripts/size_sweep.py train --sides 6 --variants today gumbel no_resign   # ablation
    python scripts/size_sweep.py report --sides 6 --variants today gumbel no_resign --duel 40

``train`` starts each run of ``--sides`` x ``--seeds`` (or resumes it, in a later sitting; a run at
its cap already is passed over) and trains it to its cap: ``CAP_MINUTES * (cells / 35) **
CAP_POWER`` CPU-minutes, 20 on side 5 (where a 20-CPU-minute net of the recipe gets every exact
swap decision right), 41 on side 6, 75 on side 7 and 125 on side 8: the growth from side 5's 20
minutes to side 10's plateau at about five CPU-hours. The recipe is the side-10 long runs'
(``experiment=trapy_cpu model=small selfplay.post_swap_samples=true``) without the curriculum, a
checkpoint every 25 iterations. Each run is a folder ``RUNS/sideN-sK``; runs go under ``nice`` at
the lowest priority. ``--variants`` trains the ablation's rows (`VARIANTS`: the recipe with one
thing changed, in folders ``RUNS/sideN-VARIANT-sK``) at the same CPU cap: equal CPU time, three
seeds a row. Rows joined by ``+`` are the recipe with each of their changes (``cosine_lr+value_q``:
a change on top of one the recipe adopted, asked against the adopted row with ``--against
cosine_lr``). A row whose learning rate spans the run's clock (`CLOCK_ROWS`) trained to ``--beyond
B`` caps is a run of its own, ``VARIANT-toB`` in folders and the record (``report --beyond B``
reads it).

``report`` compares, on each side, the seeds' opening maps by search (800 simulations an opening,
`trapy_rl.analysis.learned`) at four points of the cap (the checkpoint of each seed nearest a
quarter, a half, three quarters and all of it): the lowest and the mean Spearman's rho of two
seeds, the first moves some pair of seeds decides oppositely, and each seed's rho with its own map
at the share before (how far one run's opinion moves). On a solved side (4, 5) each seed's newest
net is also scored against the exact values (`trapy_rl.eval.truth`): its policy alone, and
200-simulation search. ``--plot`` draws the seeds' agreement against the board's cells, and against
the share of the cap. With ``--variants`` each row is reported the same way, and ``--duel G`` plays
each row's newest nets against today's recipe's, or ``--against ROW``'s (G games a pair of seeds,
200 simulations, from the side's start positions, colours exchanged): its win share and Elo
difference with their 95% intervals. ``--elo G`` rates each side's seeds' nets at those shares of
the cap in one round robin (G games a pair): Elo against CPU-minutes, drawn beside the agreement
picture with ``--plot``. ``--record FILE`` keeps what the report measures in a JSON file: every map
(run, share of the cap, CPU-minutes, the net's digest, v of every cell), so that a run whose folder
is gone is compared from its recorded maps (seeds trained in different sittings meet), and every
agreement row, so that ``--plot`` draws every side recorded. The sweep's record is
``docs/experiments/data/size-sweep.json``; its rows of sides 5 and 6 (whose maps were not kept)
were copied from their pages' reports and name them (``source``). ``--mean N`` maps, in place of
each checkpoint, the mean of the seed's last N checkpoints up to it (weight averaging, as the long
runs ship their nets): a side study, not recorded. ``--arbiter G`` asks play who is right where
seeds decide oppositely at a row's last share: the seeds' nets play each opposite cell's swapped
opening against each other, each on each side, G games a cell and ordered pair
(`trapy_rl.analysis.learned.arbitrate`); a seed whose map sits on the other side of 1/2 from a sure
result is named. ``--track CELL ...`` follows the named first moves' values, seed by seed, along
the cap."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from long_runs import where  # this folder's script: where a checkpoint stands

from trapy_rl.agents import parse_agent
from trapy_rl.analysis.learned import (
    MAP_SIMULATIONS,
    arbitrate,
    exact_swap_agreement,
    maps_by_search,
    seed_agreement,
)
from trapy_rl.analysis.openings import opening_table
from trapy_rl.errors import reported
from trapy_rl.eval.arena import play_match
from trapy_rl.eval.report import plot_curve_panels
from trapy_rl.eval.starts import load_starts
from trapy_rl.eval.stats import wilson_interval
from trapy_rl.eval.tournament import play_tournament
from trapy_rl.eval.truth import score_agent, truth_sides
from trapy_rl.game.board import Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.checkpoint import CHECKPOINT_DIR, load_checkpoint
from trapy_rl.nn.digest import file_sha256
from trapy_rl.solve.openings import exact_values, load_openings
from trapy_rl.train.checkpoint import average_networks

ROOT = Path(__file__).resolve().parents[1]
SIDES = (5, 6, 7, 8)
SEEDS = (0, 1, 2)
CAP_MINUTES, CAP_POWER = 20.0, 1.9
RECIPE = (
    "experiment=trapy_cpu model=small selfplay.post_swap_samples=true curriculum=none "
    "eval.pool=null eval.final_games=0 checkpoint.every=25 optim.lr_schedule=constant"
)  # the recipe the sweep measured: a constant learning rate, as before cosine_lr was adopted
# The ablation's rows: the recipe with one thing changed (one name a row; "today" is the recipe).
VARIANTS: dict[str, tuple[str, ...]] = {
    "today": (),
    "window_100k": ("replay.capacity=100000",),  # the window of the last ~60 CPU-minutes
    "window_growth": ("replay.growth=0.4",),  # KataGo's window: 20,000 positions, then T^0.75
    "value_q": ("optim.value_q_share=0.5",),  # the value target half outcome, half root value
    "tiny_net": ("model=tiny",),
    "sims_64": ("mcts.num_simulations=64",),
    "gumbel": ("mcts=gumbel",),
    "cosine_lr": ("optim.lr_schedule=cosine",),  # the learning rate decays to 0 over the cap
    "no_resign": ("selfplay.resign_threshold=-1",),
    "no_random_starts": ("selfplay.random_opening_share=0", "selfplay.swap_coin_share=0"),
    # A random opening runs 1 to 13 drawn moves: the net meets positions of random stones, as
    # the solved test sets' (13 stones on side 5's 35 cells), not only those self-play reaches.
    "random_runs": ("selfplay.random_opening_moves=13",),
    # The same in half the random openings: the others draw the first stone alone, as today's,
    # which the opening map's positions follow (random_runs lost two exact swap decisions).
    "random_runs_half": ("selfplay.random_opening_moves=13", "selfplay.random_run_share=0.5"),
    # KataGo's playout cap: a quarter of the moves searched at 4x today's 32 simulations and
    # recorded, the rest at 8 and not, with forced playouts and policy target pruning.
    "playout_cap": (
        "mcts.num_simulations=128", "selfplay.full_search_share=0.25",
        "selfplay.cheap_num_simulations=8", "selfplay.forced_playouts=2",
    ),
}  # fmt: skip
# Rows whose learning rate follows the run's own clock: a run trained to another share of the
# cap is another run, not a point of the full one, so it is named (and recorded) apart.
CLOCK_ROWS = ("cosine_lr",)
# A row may join rows with "+" (``cosine_lr+value_q``): a change on top of an adopted one.
JOIN = "+"
DUEL_SIMULATIONS = 200
# The points of the cap where seeds are compared; past 1, where runs were trained on to see
# whether the cap was a plateau (``train --beyond 2``).
FRACTIONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def cap_minutes(side: int) -> int:
    """The CPU-minutes a side-``side`` run trains."""
    return round(CAP_MINUTES * (Board(side).num_cells / 35) ** CAP_POWER)


def row_overrides(variant: str) -> tuple[str, ...]:
    """The overrides a row adds to the recipe: those of each of its joined `VARIANTS`, in
    order (a later one wins where two set the same key)."""
    parts = variant.split(JOIN)
    unknown = [part for part in parts if part not in VARIANTS]
    if unknown or ("today" in parts and len(parts) > 1):
        raise ValueError(
            f"unknown ablation row {variant!r}: rows are {', '.join(VARIANTS)}, "
            f"or several of them (not today) joined by {JOIN!r}"
        )
    return tuple(override for part in parts for override in VARIANTS[part])


def row_name(variant: str, beyond: float = 1.0) -> str:
    """The row's name in run folders and the record: ``VARIANT``, or ``VARIANT-toB`` for a row
    with one of `CLOCK_ROWS` in it trained to ``beyond`` caps other than one
    (``cosine_lr-to0.5``)."""
    clock = any(part in CLOCK_ROWS for part in variant.split(JOIN))
    return variant if not clock or beyond == 1.0 else f"{variant}-to{beyond:g}"


def run_name(side: int, seed: int, variant: str = "today") -> str:
    """The run's folder: ``sideN-sK`` for today's recipe, ``sideN-VARIANT-sK`` for a row."""
    return f"side{side}-s{seed}" if variant == "today" else f"side{side}-{variant}-s{seed}"


# ---------------------------------------------------------------------- train
def train_command(
    runs: Path, side: int, seed: int, beyond: float = 1.0, variant: str = "today"
) -> list[str]:
    """The trapy-train command that starts the run, or resumes it where it stopped, to
    ``beyond`` times its cap."""
    run = runs / run_name(side, seed, row_name(variant, beyond))
    minutes = f"minutes={beyond * cap_minutes(side):g}"
    if (run / CHECKPOINT_DIR / "latest.pt").is_file():
        overrides = [f"resume={run}", minutes]
    else:
        recipe = [*RECIPE.split(), *row_overrides(variant)]
        overrides = [*recipe, f"side={side}", f"seed={seed}", minutes]
        overrides.append(f"hydra.run.dir={run}")
    return [str(Path(sys.executable).with_name("trapy-train")), *overrides]


def trained_minutes(run: Path) -> float:
    """The CPU-minutes the run in folder ``run`` has trained (0 before its first checkpoint)."""
    latest = run / CHECKPOINT_DIR / "latest.pt"
    if not latest.is_file():
        return 0.0
    return float((load_checkpoint(latest).get("clock") or {}).get("cpu_seconds", 0.0)) / 60


def train(
    runs: Path,
    sides: list[int],
    seeds: list[int],
    part: tuple[int, int],
    beyond: float,
    variants: list[str] = ("today",),
) -> int:
    index, count = part
    jobs = [(side, variant, seed) for side in sides for variant in variants for seed in seeds]
    for side, variant, seed in jobs[index - 1 :: count]:
        name = run_name(side, seed, row_name(variant, beyond))
        if (done := trained_minutes(runs / name)) >= beyond * cap_minutes(side):
            print(f"{name}: trained to {done:.1f} CPU-minutes already, on to the next", flush=True)
            continue
        command = train_command(runs, side, seed, beyond, variant)
        log = runs / f"{name}.log"
        print(f"{name}: {' '.join(command[1:])} (log: {log})", flush=True)
        runs.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as out:
            code = subprocess.call(["nice", "-n", "19", *command], cwd=ROOT, stdout=out, stderr=out)
        if code:
            print(f"{name}: trapy-train exited {code}", flush=True)
            return code
    return 0


# ---------------------------------------------------------------------- report
def checkpoints(
    runs: Path, side: int, seed: int, variant: str = "today"
) -> list[tuple[float, Path]]:
    """(CPU-minutes, file) of the run's numbered checkpoints, oldest first."""
    folder = runs / run_name(side, seed, variant) / CHECKPOINT_DIR
    found = []
    for path in sorted(folder.glob("ckpt_*.pt")):
        found.append((60 * where(load_checkpoint(path))["cpu_hours"], path))
    return found


def nearest(found: list[tuple[float, Path]], minutes: float) -> tuple[float, Path] | None:
    """The checkpoint nearest ``minutes`` of training, if one lies within 10% of it."""
    if not found:
        return None
    best = min(found, key=lambda item: abs(item[0] - minutes))
    return best if abs(best[0] - minutes) <= 0.1 * minutes else None


def agreement_rows(
    runs: Path,
    side: int,
    seeds: list[int],
    simulations: int,
    variant: str = "today",
    record: list[dict] | None = None,
    mean: int = 1,
    track: tuple[str, ...] = (),
) -> list[dict]:
    """The seeds' agreement at each point of the cap that a seed has reached (rho and opposite
    decisions None and empty while only one has: an ablation row's first seed), and each
    seed's v of the cells named in ``track`` (``track``: {cell: {seed: v}}; a disputed
    opening's value followed along the cap).

    With ``mean`` > 1 each seed's net at a point is the mean of its ``mean`` checkpoints up to
    that point (`mean_net`: what a long run ships and maps) instead of the checkpoint alone.

    With ``record`` (the maps of `read_record`), a seed whose run folder is not here brings its
    map from it, and each map measured here is written into it (`record_map`): runs of one side
    trained in different sittings, on machines that kept no run folder, are compared all the
    same. ``drift``: each seed's rho between its map here and at the share before (how far one
    run's opinion moves: the noise in any one checkpoint's map).
    """
    cap = cap_minutes(side)
    found = {seed: checkpoints(runs, side, seed, variant) for seed in seeds}
    board, rows, before = Board(side), [], {}
    tracked = {name: board.parse_action(name) for name in track}  # an unknown cell: one error
    if any(cell >= board.num_cells for cell in tracked.values()):
        raise ValueError(f"--track takes cells of the side-{side} board, got {' '.join(track)}")
    search = SearchSettings(num_simulations=simulations)
    for fraction in FRACTIONS:
        maps, minutes, recorded = {}, {}, []
        for seed in seeds:
            if (point := nearest(found[seed], fraction * cap)) is not None:
                minutes[seed], net = point
                if mean > 1:
                    net = mean_net(found[seed], net, mean, runs)
                maps[seed] = maps_by_search([net], side=side, search=search)[0]
                if record is not None:
                    record_map(record, side, variant, seed, fraction, minutes[seed],
                               simulations, net, maps[seed])  # fmt: skip
            elif entry := recorded_map(record, side, variant, seed, fraction, simulations):
                minutes[seed], maps[seed] = entry["minutes"], np.asarray(entry["v"])
                recorded.append(seed)
        drift = {
            seed: round(seed_agreement(np.stack([before[seed], m]), board).min_pair, 3)
            for seed, m in maps.items()
            if seed in before
        }
        before.update(maps)
        if not maps:
            continue
        # One seed alone (an ablation row's first) has no agreement yet, only its drift.
        v = np.stack(list(maps.values()))
        result = seed_agreement(v, board) if len(maps) > 1 else None
        rows.append({
            "variant": variant,
            "side": side,
            "cells": board.num_cells,
            "fraction": fraction,
            "minutes": {s: round(m, 1) for s, m in minutes.items()},
            "recorded": recorded,
            "min_rho": round(result.min_pair, 3) if result else None,
            "mean_rho": round(result.mean_pair, 3) if result else None,
            "opposite": list(result.opposite) if result else [],
            "swap_share": [round(float((m > 0.5).mean()), 3) for m in v],
            "exact": _exact_decisions(v, board),
            "drift": drift,
            **({"track": {
                name: {s: round(float(m[cell]), 3) for s, m in maps.items()}
                for name, cell in tracked.items()
            }} if tracked else {}),
        })  # fmt: skip
    return rows


# ---------------------------------------------------------------------- the record
def read_record(path: Path) -> dict[str, list[dict]]:
    """The sweep's record in ``path``: ``maps`` (`record_map`) and ``agreement`` (the rows
    of `agreement_rows`, the newest of each side, recipe and share); empty where there is no
    file yet."""
    record = json.loads(path.read_text()) if path.is_file() else {}
    return {"maps": record.get("maps", []), "agreement": record.get("agreement", [])}


def write_record(path: Path, record: dict[str, list[dict]]) -> None:
    """Write ``record`` to ``path``, an entry a line, sorted by side, recipe, seed and share."""
    record["maps"].sort(key=lambda e: (e["side"], e["variant"], e["seed"], e["fraction"]))
    record["agreement"].sort(key=lambda r: (r["side"], r["variant"], r["fraction"]))
    parts = [
        f'"{name}": [' + "".join(f"\n{json.dumps(e)}," for e in entries).rstrip(",") + "\n]"
        for name, entries in record.items()
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + ",\n".join(parts) + "\n}\n")


def record_rows(record: dict[str, list[dict]], rows: list[dict]) -> None:
    """Put the agreement ``rows`` measured here into ``record``, in place of older ones."""
    new = {(r["side"], r["variant"], r["fraction"]) for r in rows}
    kept = [r for r in record["agreement"] if (r["side"], r["variant"], r["fraction"]) not in new]
    record["agreement"] = kept + rows


def mean_net(found: list[tuple[float, Path]], net: Path, count: int, runs: Path) -> Path:
    """The mean of the ``count`` checkpoints of ``found`` up to ``net`` (`average_networks`),
    written once to ``RUNS/means/RUN-CHECKPOINT-meanCOUNT.pt``."""
    paths = [path for _, path in found]
    last = paths.index(net)
    target = runs / "means" / f"{net.parent.parent.name}-{net.stem}-mean{count}.pt"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        average_networks(paths[max(0, last - count + 1) : last + 1], target)
    return target


def _key(entry: dict) -> tuple:
    return tuple(entry[k] for k in ("side", "variant", "seed", "fraction", "simulations"))


def recorded_map(
    record: list[dict] | None, side: int, variant: str, seed: int, fraction: float,
    simulations: int,
) -> dict | None:  # fmt: skip
    """The record's map of that run at that share of its cap, if it holds one."""
    key = (side, variant, seed, fraction, simulations)
    return next((entry for entry in record or () if _key(entry) == key), None)


def record_map(
    record: list[dict], side: int, variant: str, seed: int, fraction: float, minutes: float,
    simulations: int, net: Path, v: np.ndarray,
) -> None:  # fmt: skip
    """Put a map measured here into ``record``, in place of the one it held for that point:
    its run, share of the cap, CPU-minutes, simulations, the net's SHA-256 (first 16 hex
    digits: which net it was) and v of every cell [K] in full (a rank correlation's ties
    turn on the last digits)."""
    entry = {
        "side": side, "variant": variant, "seed": seed, "fraction": fraction,
        "minutes": round(minutes, 1), "simulations": simulations,
        "net": file_sha256(net)[:16], "v": [float(x) for x in v],
    }  # fmt: skip
    record[:] = [e for e in record if _key(e) != _key(entry)] + [entry]


def _exact_decisions(v: np.ndarray, board: Board) -> list[str] | None:
    """Each map's swap decisions against v*, as "right/solved", on a solved side."""
    try:
        v_star = exact_values(load_openings(board.side))
    except ValueError:  # not solved
        return None
    scored = (exact_swap_agreement(opening_table(m, board), v_star, board) for m in v)
    return [f"{s['agree']}/{s['solved']}" for s in scored]


def truth_rows(runs: Path, side: int, seeds: list[int], variant: str = "today") -> list[dict]:
    """Each seed's newest net against the exact values: policy alone and 200-simulation search."""
    board, rows = Board(side), []
    for seed in seeds:
        found = checkpoints(runs, side, seed, variant)
        if not found:
            continue
        minutes, path = found[-1]
        for spec in (f"net:{path}", f"mcts:{path}:200"):
            score = score_agent(parse_agent(spec, board=board, seed=seed), side)
            rows.append({
                "variant": variant,
                "side": side,
                "seed": seed,
                "minutes": round(minutes, 1),
                "agent": spec.split(":")[0] + ("" if spec.startswith("net") else ":200"),
                "won_kept": str(score.won_kept),
                "value_sign": str(score.value_sign),
                "swaps": str(score.swaps),
                "wrong_swaps": " ".join(score.wrong_swaps),
            })  # fmt: skip
    return rows


def duel_rows(
    runs: Path, side: int, variants: list[str], seeds: list[int], games: int, against: str = "today"
) -> list[dict]:
    """Each row's newest nets against the row ``against``'s (today's recipe's, or an adopted
    row's): ``games`` games a pair of seeds at `DUEL_SIMULATIONS` simulations, from the side's
    start positions, colours exchanged."""
    board, rows = Board(side), []
    bases = {s: found[-1] for s in seeds if (found := checkpoints(runs, side, s, against))}
    starts = load_starts(board)
    for variant in variants:
        if variant == against:
            continue
        nets = {s: found[-1] for s in seeds if (found := checkpoints(runs, side, s, variant))}
        wins = played = 0
        for i, (seed, (_, net)) in enumerate(nets.items()):
            for j, (other, (_, base)) in enumerate(bases.items()):
                spec_a, spec_b = (f"mcts:{p}:{DUEL_SIMULATIONS}" for p in (net, base))
                agent_a = parse_agent(spec_a, board=board, seed=seed)
                agent_b = parse_agent(spec_b, board=board, seed=other)
                match = play_match(agent_a, agent_b, num_games=games, board=board,
                                   seed=i * len(bases) + j, starts=starts)  # fmt: skip
                wins, played = wins + match.wins, played + match.games
        if played:
            low, high = wilson_interval(wins, played)
            rows.append({
                "variant": variant,
                "side": side,
                "nets": len(nets),
                "games": played,
                "wins": wins,
                "share": [round(wins / played, 3), round(low, 3), round(high, 3)],
                "elo": [round(elo_difference(x)) for x in (wins / played, low, high)],
            })  # fmt: skip
    return rows


def arbiter_rows(runs: Path, agreement: list[dict], seeds: list[int], games: int) -> list[dict]:
    """Who is right where seeds decide oppositely: at each row's last share of the cap, its
    seeds' nets there (those whose run folder is here) play out every opposite cell against
    each other (`arbitrate`: each ordered pair ``games`` games a cell, `DUEL_SIMULATIONS`
    simulations), the owner's share beside each seed's map; a mirror pair is one row."""
    last = {}
    for row in agreement:  # the rows come by share of the cap, so the last one stays
        if row["min_rho"] is not None:
            last[(row["side"], row["variant"])] = row
    rows = []
    for (side, variant), row in last.items():
        board, cap = Board(side), cap_minutes(side)
        nets = {
            seed: point[1]
            for seed in seeds
            if (point := nearest(checkpoints(runs, side, seed, variant), row["fraction"] * cap))
        }
        cells = sorted({board.parse_action(name) for name in row["opposite"]})
        cells = [c for c in cells if c <= board.mirror_cells[c]]  # one of each mirror pair
        if len(nets) < 2 or not cells:
            continue
        specs = [f"mcts:{net}:{DUEL_SIMULATIONS}" for net in nets.values()]
        wins, played = arbitrate(specs, board, cells, games=games)
        search = SearchSettings(num_simulations=MAP_SIMULATIONS)
        maps = dict(zip(nets, maps_by_search(list(nets.values()), side=side, search=search)))
        for c in cells:
            share = wins[c] / played[c]
            low, high = wilson_interval(int(wins[c]), int(played[c]))
            sure = low > 0.5 or high < 0.5
            mirror = board.cell_name(int(board.mirror_cells[c]))
            name = board.cell_name(c) + ("" if mirror == board.cell_name(c) else f"/{mirror}")
            rows.append({
                "variant": variant, "side": side, "fraction": row["fraction"], "cell": name,
                "games": int(played[c]), "owner_wins": int(wins[c]),
                "played": [round(share, 3), round(low, 3), round(high, 3)],
                "maps": {s: round(float(m[c]), 3) for s, m in maps.items()},
                "wrong": [s for s, m in maps.items() if sure and (m[c] > 0.5) != (share > 0.5)],
            })  # fmt: skip
    return rows


def elo_rows(runs: Path, side: int, seeds: list[int], games: int) -> list[dict]:
    """Elo against CPU-minutes: each seed's checkpoints nearest the shares of the cap, every pair
    ``games`` games at `DUEL_SIMULATIONS` simulations from the side's start positions, colours
    exchanged, in one round robin (cached in ``RUNS/elo_matches.jsonl``); seed 0's earliest
    rated net is 0."""
    cap, points = cap_minutes(side), []
    for seed in seeds:
        found = checkpoints(runs, side, seed)
        for fraction in FRACTIONS:
            if (point := nearest(found, fraction * cap)) is not None:
                points.append((seed, fraction, *point))
    if len(points) < 2:
        return []
    specs = [f"mcts:{path}:{DUEL_SIMULATIONS}" for *_, path in points]
    board = Board(side)
    result = play_tournament(
        specs, board=board, num_games=games, starts=load_starts(board),
        cache_path=runs / "elo_matches.jsonl", anchor=specs[0], progress=True,
    )  # fmt: skip
    ratings = {row["name"]: row for row in result.ratings.rows()}
    return [
        {
            "side": side,
            "seed": seed,
            "fraction": fraction,
            "minutes": round(minutes, 1),
            "elo": [ratings[spec][key] for key in ("elo", "lower", "upper")],
            "games": ratings[spec]["games"],
        }
        for (seed, fraction, minutes, _), spec in zip(points, specs, strict=True)
    ]


def elo_difference(share: float) -> float:
    """The Elo difference that expects ``share`` of the points (clipped to +-800)."""
    share = min(max(share, 0.01), 0.99)
    return 400 * math.log10(share / (1 - share))


def report(
    runs: Path,
    sides: list[int],
    seeds: list[int],
    simulations: int,
    plot: Path | None,
    variants: list[str] = ("today",),
    duel: int = 0,
    elo: int = 0,
    record: Path | None = None,
    mean: int = 1,
    arbiter_games: int = 0,
    against: str = "today",
    track: tuple[str, ...] = (),
):
    if mean > 1 and record is not None:
        raise ValueError("--mean maps are a side study and are not recorded: leave out --record")
    kept = read_record(record) if record is not None else None
    agreement = [
        row
        for side in sides
        for variant in variants
        for row in agreement_rows(
            runs, side, seeds, simulations, variant, kept["maps"] if kept else None, mean, track
        )
    ]
    if kept is not None:  # agreement rows of two seeds or more (one seed's maps are kept)
        record_rows(kept, [row for row in agreement if row["min_rho"] is not None])
        write_record(record, kept)
    truth = [
        row
        for side in sides
        if side in truth_sides()
        for variant in variants
        for row in truth_rows(runs, side, seeds, variant)
    ]
    duels = (
        [row for side in sides for row in duel_rows(runs, side, variants, seeds, duel, against)]
        if duel
        else []
    )
    strength = [row for side in sides for row in elo_rows(runs, side, seeds, elo)] if elo else []
    arbiter = arbiter_rows(runs, agreement, seeds, arbiter_games) if arbiter_games else []
    nets = f"; each net the mean of a seed's last {mean} checkpoints" if mean > 1 else ""
    print(
        f"Seeds' maps by search ({simulations} simulations an opening{nets}), by side and share"
        " of cap:"
    )
    print("| recipe | side (cells) | cap share | CPU-minutes by seed | lowest rho | mean rho | "
          "opposite decisions | share swapped by seed | maps against v* | "
          "rho with the share before, by seed |")  # fmt: skip
    print("| --- | --- | ---: | --- | ---: | ---: | --- | --- | --- | --- |")
    for row in agreement:
        minutes = ", ".join(
            f"s{s} {m}" + (" (recorded)" if s in row["recorded"] else "")
            for s, m in row["minutes"].items()
        )
        print(
            f"| {row['variant']} | {row['side']} ({row['cells']}) | {row['fraction']:.2f} | "
            f"{minutes} | {_rho(row['min_rho'])} | {_rho(row['mean_rho'])} | "
            f"{', '.join(row['opposite']) or ('none' if row['min_rho'] is not None else '-')}"
            f" | {', '.join(f'{x:.2f}' for x in row['swap_share'])} |"
            f" {', '.join(row['exact']) if row['exact'] else '-'} |"
            f" {', '.join(f's{s} {r:.3f}' for s, r in row.get('drift', {}).items()) or '-'} |"
        )
    if track:
        _table(
            "The tracked cells' values by seed (maps by search, the stone's owner's share):",
            "| recipe | side | cap share | cell | v by seed |",
            "| --- | --- | ---: | --- | --- |",
            (
                f"| {r['variant']} | {r['side']} | {r['fraction']:.2f} | {cell} | "
                + ", ".join(f"s{s} {v:.2f}" for s, v in by_seed.items())
                + " |"
                for r in agreement
                for cell, by_seed in r.get("track", {}).items()
            ),
        )
    if truth:
        _table(
            "Against the exact values (newest net of each seed):",
            "| recipe | side | seed | CPU-minutes | agent | won kept | value sign | swap decisions "
            "| wrong |",
            "| --- | --- | ---: | ---: | --- | --- | --- | --- | --- |",
            (
                f"| {r['variant']} | {r['side']} | {r['seed']} | {r['minutes']} | {r['agent']} | "
                f"{r['won_kept']} | {r['value_sign']} | {r['swaps']} | {r['wrong_swaps'] or '-'} |"
                for r in truth
            ),
        )
    if duels:
        _table(
            f"Against {against}'s recipe (newest nets, "
            f"{DUEL_SIMULATIONS} simulations, {duel} "
            "games a pair of seeds from the start positions, colours exchanged):",
            "| recipe | side | nets | games | win share (95%) | Elo (95%) |",
            "| --- | --- | ---: | ---: | --- | --- |",
            (
                f"| {r['variant']} | {r['side']} | {r['nets']} | {r['games']} | "
                f"{p:.3f} ({lo:.3f}-{hi:.3f}) | {e:+d} ({elo_lo:+d} to {elo_hi:+d}) |"
                for r in duels
                for (p, lo, hi), (e, elo_lo, elo_hi) in [(r["share"], r["elo"])]
            ),
        )
    if strength:
        _table(
            f"Elo against CPU-minutes (one round robin a side, {elo} games a pair, "
            f"{DUEL_SIMULATIONS} simulations, start positions; seed 0's first net 0):",
            "| side | seed | cap share | CPU-minutes | Elo (95%) |",
            "| --- | ---: | ---: | ---: | --- |",
            (
                f"| {r['side']} | {r['seed']} | {r['fraction']:.2f} | {r['minutes']} | "
                f"{e:+.0f} ({low:+.0f} to {high:+.0f}) |"
                for r in strength
                for e, low, high in [r["elo"]]
            ),
        )
    if arbiter:
        _table(
            "Who is right where seeds decide oppositely (the seeds' nets against each other "
            f"from the cell's swapped opening, {DUEL_SIMULATIONS} simulations, each on each side;"
            " the owner's share):",
            "| recipe | side | cap share | cell | games | owner's share (95%) | maps by seed | "
            "wrong side |",
            "| --- | --- | ---: | --- | ---: | --- | --- | --- |",
            (
                f"| {r['variant']} | {r['side']} | {r['fraction']:.2f} | {r['cell']} | "
                f"{r['games']} | {share:.3f} ({low:.3f}-{high:.3f}) | "
                f"{', '.join(f's{s} {v:.2f}' for s, v in r['maps'].items())} | "
                f"{', '.join(f's{s}' for s in r['wrong']) or '-'} |"
                for r in arbiter
                for share, low, high in [r["played"]]
            ),
        )
    out = runs / "report.json"
    everything = {"agreement": agreement, "truth": truth, "duels": duels, "elo": strength,
                  "arbiter": arbiter}  # fmt: skip
    out.write_text(json.dumps(everything, indent=1) + "\n")
    print(f"\n{out}")
    if plot is not None:  # every side the record holds, or this report's
        drawn = kept["agreement"] if kept is not None else agreement
        print(draw(drawn, plot, strength))  # the rows of the ablation along the cap too


def agreement_curves(agreement: list[dict]) -> tuple[dict[str, list], dict[str, list]]:
    """The agreement picture's curves, (x, y, low, high) a point: today's recipe's lowest and
    mean rho at the cap against the board's cells, and each side's (and each ablation row's)
    mean rho, down to its lowest, against the share of its cap; rows of one seed are left out."""
    agreement = [row for row in agreement if row["min_rho"] is not None]  # two seeds or more
    at_cap = [row for row in agreement if row["fraction"] == 1.0 and row["variant"] == "today"]
    by_size = {
        "lowest rho of a pair of seeds": [(r["cells"], r["min_rho"], r["min_rho"], r["min_rho"])
                                          for r in at_cap],
        "mean rho over the pairs": [(r["cells"], r["mean_rho"], r["mean_rho"], r["mean_rho"])
                                    for r in at_cap],
    }  # fmt: skip
    by_share: dict[str, list] = {}
    for r in agreement:
        label = f"side {r['side']}" + ("" if r["variant"] == "today" else f", {r['variant']}")
        by_share.setdefault(label, []).append(
            (r["fraction"], r["mean_rho"], r["min_rho"], r["mean_rho"])
        )
    return by_size, by_share


def draw(agreement: list[dict], path: Path, strength: list[dict] = ()) -> Path:
    """Two panels: today's recipe's lowest and mean rho at the cap against the board's cells;
    each side's (and each ablation row's) mean rho against the share of its cap. With
    ``strength``, a second picture beside ``path`` (``-elo`` added to its name): each side's
    seeds' Elo against CPU-minutes."""
    if strength:
        panels: dict[str, dict[str, list]] = {}
        for r in strength:
            curve = panels.setdefault(f"side {r['side']}", {}).setdefault(f"seed {r['seed']}", [])
            curve.append((r["minutes"], *r["elo"]))
        elo_path = path.with_name(f"{path.stem}-elo{path.suffix}")
        print(plot_curve_panels(
            panels, elo_path, title="Elo against CPU-minutes: today's recipe, seed by seed",
            x_label="CPU-minutes of training", y_label="Elo (seed 0's first rated net: 0)",
        ))  # fmt: skip
    by_size, by_share = agreement_curves(agreement)
    return plot_curve_panels(
        {"at the cap, against the board": by_size, "along the way (bars down to the lowest)":
         by_share},
        path,
        title="Do seeds agree? Opening maps by search, two or three seeds a side and a row",
        x_label="cells of the board (left); share of the CPU cap (right)",
        y_label="Spearman's rho between seeds' maps",
    )  # fmt: skip


def _table(title: str, header: str, rule: str, lines: Iterable[str]) -> None:
    """Print a Markdown table of the report: a blank line, its title, header, rule and lines."""
    print(f"\n{title}")
    print(header)
    print(rule)
    for line in lines:
        print(line)


def _rho(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _part(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"--part must be I/N with 1 <= I <= N, got {text!r}")
    return int(index), int(count)


def _row(text: str) -> str:
    try:
        row_overrides(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["train", "report"])
    parser.add_argument("--runs", type=Path, default=ROOT / "outputs" / "size_sweep")
    parser.add_argument("--sides", type=int, nargs="+", default=list(SIDES))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--part", type=_part, default=(1, 1), help="train: I/N, every Nth run")
    parser.add_argument(
        "--beyond", type=float, default=1.0,
        help="train: to this many caps; report: the runs of CLOCK_ROWS trained so",
    )  # fmt: skip
    parser.add_argument("--simulations", type=int, default=MAP_SIMULATIONS)
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument(
        "--variants", nargs="+", type=_row, default=["today"],
        help=f"the ablation's rows: {', '.join(VARIANTS)}, or several joined by {JOIN!r} "
        "(default: today's recipe alone)",
    )  # fmt: skip
    parser.add_argument(
        "--duel", type=int, default=0, help="report: games a pair of seeds against --against's"
    )
    parser.add_argument(
        "--against", type=_row, default="today",
        help="report: the row whose nets --duel plays (default: today's recipe)",
    )  # fmt: skip
    parser.add_argument(
        "--elo", type=int, default=0, help="report: games a pair in each side's round robin"
    )
    parser.add_argument(
        "--record", type=Path, default=None,
        help="report: a JSON file of the maps measured; runs not here are compared from it",
    )  # fmt: skip
    parser.add_argument(
        "--mean", type=int, default=1,
        help="report: map the mean of each seed's last N checkpoints up to each point",
    )  # fmt: skip
    parser.add_argument(
        "--track", nargs="+", default=[], metavar="CELL",
        help="report: each seed's value of these first moves at each share of the cap",
    )  # fmt: skip
    parser.add_argument(
        "--arbiter", type=int, default=0,
        help="report: games a cell and ordered pair of seeds where seeds decide oppositely",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with reported("size_sweep"):
        if args.action == "train":
            return train(args.runs, args.sides, args.seeds, args.part, args.beyond, args.variants)
        report(
            args.runs.resolve(), args.sides, args.seeds, args.simulations, args.plot,
            [row_name(v, args.beyond) for v in args.variants], args.duel, args.elo,
            args.record, args.mean, args.arbiter, args.against, tuple(args.track),
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
