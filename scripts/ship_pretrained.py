"""Ship a trained net with the package: a net-only copy in ``trapy_rl/pretrained/`` and its
entry in ``manifest.json`` (file, SHA-256, side, how it was trained, how strong it measured).

    python scripts/ship_pretrained.py outputs/long-run --name pretrained \\
        --command "make long-run" --machine "AMD EPYC, 2 cores" \\
        --ratings outputs/long-run/final/ratings.json \\
        --ratings outputs/long-run/vs_reference/ratings.json

A net of a long run (`scripts/long_runs.py`) ships with its legs, each leg's command, commit,
machine and where it began and ended, so anyone can replay the chain:

    python scripts/ship_pretrained.py benchmarks/long_runs/side10-small-s0/net_it002000.pt \\
        --command "python scripts/long_runs.py start side10-small-s0 -- ..." \\
        --machine "AMD EPYC, 2 cores" --legs benchmarks/long_runs/side10-small-s0/legs.json \\
        --long-run-panel

``--long-run-panel`` adds its matches against the long runs' panel and the Elo they give
(`scripts/strength_curve.py`); a net averaged from several (``long_runs.py average``) says so.

A net of a solved side (4, 5) ships with its scores against the exact values too: ``--truth``
reads the ``truth.csv`` that ``trapy-eval mode=truth`` wrote, each row naming the net:

    python scripts/ship_pretrained.py RUN --name pretrained_side5 --command "..." \\
        --machine "AMD EPYC, 2 cores" --ratings EVAL/ratings.json --truth TRUTH/truth.csv

Run it again with ``--keep-file`` and more ``--ratings`` to update the record only. The strength
is copied from ``trapy-eval``'s ``ratings.json`` files: every match the net
played (opponent, games, wins, the settings of the match) and its Elo on the pool's scale where
the file is a pool rating.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import hashlib
import json
from pathlib import Path

from strength_curve import CACHE, PANEL, ROOT, SIDE, panel_pool  # this folder's: the long runs' Elo

from trapy_rl.eval.cache import ResultCache
from trapy_rl.eval.pool import rating_from_cache
from trapy_rl.nn.checkpoint import find_checkpoint, load_checkpoint
from trapy_rl.pretrained import FOLDER, MANIFEST
from trapy_rl.train.checkpoint import export_network


def _record(net: str, opponent: str, wins: int, match: dict, source: str) -> dict:
    """One match of the net as the manifest keeps it; ``wins`` counted from the net's side."""
    keep = ("games", "openings", "starts")
    return {"net": net, "opponent": opponent, "wins": wins, **{k: match[k] for k in keep},
            "source": source}  # fmt: skip


def _net_keys(net_files: list[Path]) -> list[str]:
    """How specs name the net's files: each by its run folder, folder and name."""
    return [f"{file.parent.parent.name}/{file.parent.name}/{file.name}" for file in net_files]


def strength(
    net_files: list[Path], ratings_files: list[Path], aliases: dict[str, str] | None = None
) -> dict:
    """The net's matches and ratings in ``ratings_files``: those of specs naming one of
    ``net_files`` (a checkpoint and its run's ``latest.pt``, known by folder and name).
    ``aliases`` renames opponents whose spec no longer means what it meant when the match was
    played (``mcts:pretrained:200`` once the shipped net is replaced)."""
    aliases = aliases or {}
    keys = _net_keys(net_files)

    def ours_(spec: str) -> bool:
        return any(key in spec for key in keys)

    matches, ratings = [], []
    for path in ratings_files:
        data = json.loads(path.read_text())
        ours = [r for r in data["ratings"] if ours_(r["name"])]
        for match in data["matches"]:
            mine = ours_(match["agent_a"])
            if not mine and not ours_(match["agent_b"]):
                continue
            wins = match["wins"] if mine else match["games"] - match["wins"]
            opponent = match["agent_b"] if mine else match["agent_a"]
            net = match["agent_a"] if mine else match["agent_b"]
            matches.append(_record(net, aliases.get(opponent, opponent), wins, match, str(path)))
        if "fixed" in data and data["fixed"] and ours:
            ratings.append(
                {
                    "elo": ours[0]["elo"],
                    "interval": [ours[0]["lower"], ours[0]["upper"]],
                    "scale": f"the side-{data['side']} pool (random 0)",
                    "source": str(path),
                }
            )
    return {"matches": matches, "pool_elo": ratings}


def truth_scores(net_files: list[Path], truth_files: list[Path]) -> list[dict]:
    """The net's rows of ``trapy-eval mode=truth``'s ``truth.csv`` files: its agent spec, and
    for each score (won positions kept, value signs, swap decisions) the rate and how many it
    was measured on, the wrong swap decisions, the test set and the file."""
    keys = _net_keys(net_files)
    found = []
    for path in truth_files:
        with open(path, newline="", encoding="utf-8") as file:
            for row in csv.DictReader(file):
                if not any(key in row["agent"] for key in keys):
                    continue
                scores = {
                    name: {"rate": float(row[name]), "of": int(row[f"{name}_of"])}
                    for name in ("won_kept", "value_sign", "swaps")
                    if row[name]
                }
                wrong = row["wrong_swaps"].split()
                # The positions won_kept and value_sign were measured on (files before the
                # column: not said).
                test_set = {"test_set": row["test_set"]} if row.get("test_set") else {}
                found.append({"agent": row["agent"], **scores, "wrong_swaps": wrong, **test_set,
                              "source": str(path)})  # fmt: skip
    return found


def panel_strength(net: Path, simulations: int = 200) -> dict:
    """The matches of ``mcts:NET:SIMULATIONS`` against the long runs' panel in their match cache
    and its Elo on the pool refitted from them (`scripts/strength_curve.py`), as `strength`
    records them; empty when the cache holds none. ``net`` is named relative to the repository,
    as the cache names it."""
    spec = f"mcts:{net.as_posix()}:{simulations}"
    panel = panel_pool(list(PANEL))
    with contextlib.chdir(ROOT):  # the cache's specs name files relative to the repository
        played = [m for m in ResultCache(CACHE).matches_of(spec, side=SIDE) if m.agent_b in PANEL]
        fit = rating_from_cache(spec, panel, CACHE)
    matches = [
        _record(spec, m.agent_b, m.wins, dataclasses.asdict(m), CACHE.as_posix()) for m in played
    ]
    ratings = []
    if fit is not None:
        ratings.append(
            {
                "elo": round(float(fit.ratings[-1]), 1),
                "interval": [round(float(fit.lower[-1]), 1), round(float(fit.upper[-1]), 1)],
                "scale": f"the side-{SIDE} pool (random 0), on the long runs' panel: "
                + ", ".join(PANEL),
                "source": CACHE.as_posix(),
            }
        )
    return {"matches": matches, "pool_elo": ratings}


def legs_up_to(legs: list[dict], stands: dict) -> list[dict]:
    """The legs that trained a net standing at ``stands`` (its ``iteration`` and ``cpu_hours``):
    those begun before it, the last one ending at the net rather than where it went on to."""
    iteration = stands["iteration"]

    def begun(leg: dict) -> bool:
        return leg["from"] == "scratch" or leg["from"]["iteration"] < iteration

    kept = [dict(leg) for leg in legs if begun(leg)]
    if kept and (kept[-1].get("to") or {}).get("iteration") != iteration:
        kept[-1]["to"] = {**stands, "note": "the net; the leg trained on"}
        kept[-1].pop("ended", None)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a checkpoint file or run folder (its latest)")
    parser.add_argument("--name", default="pretrained")
    parser.add_argument("--recipe", default="experiment=trapy_cpu", help="its configuration")
    parser.add_argument("--command", required=True, help="the command that trained it")
    parser.add_argument("--machine", required=True)
    parser.add_argument("--ratings", type=Path, action="append", default=[])
    parser.add_argument(
        "--truth", type=Path, action="append", default=[],
        help="a truth.csv of trapy-eval mode=truth: the net's scores against the exact values",
    )  # fmt: skip
    parser.add_argument(
        "--legs", type=Path, help="a long run's legs.json: its legs go in the record"
    )
    parser.add_argument(
        "--long-run-panel", action="store_true",
        help="add its matches on the long runs' panel and the Elo they give (strength_curve.py)",
    )  # fmt: skip
    parser.add_argument(
        "--simulations", type=int, default=200, help="its search in the panel's matches"
    )
    parser.add_argument(
        "--opponent-alias", action="append", default=[], nargs=2, metavar=("SPEC", "NAME"),
        help="record opponent SPEC as NAME (a shipped net since replaced, by its run's path)",
    )  # fmt: skip
    parser.add_argument(
        "--keep-file", action="store_true",
        help="keep the shipped file (its SHA-256 stays); update its record only",
    )  # fmt: skip
    args = parser.parse_args(argv)

    aliases = dict(args.opponent_alias)
    source = find_checkpoint(args.checkpoint)
    payload = load_checkpoint(source)
    counters = payload.get("counters") or {}
    # The names the ratings may know it by: the file, and the numbered twin of latest.pt.
    names = [source, source.with_name(f"ckpt_{int(counters.get('iteration', 0)):06d}.pt")]
    config = payload.get("config") or {}
    clock = payload.get("clock") or {}
    side = int(payload["side"])
    panel = None
    if args.long_run_panel:
        if not source.resolve().is_relative_to(ROOT):
            raise SystemExit(f"ship_pretrained: {source} is outside the repository, whose long "
                             "runs' match cache names nets relative to it")  # fmt: skip
        panel = panel_strength(source.resolve().relative_to(ROOT), args.simulations)
    target = FOLDER / f"trap_y_side{side}_{args.name}.pt"
    if not (args.keep_file and target.is_file()):
        export_network(source, target, portable=True)  # no trainer's paths in the package
        target.chmod(0o644)  # package data, readable by every user of the installation
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    entry = {
        "file": target.name,
        "sha256": digest,
        "side": side,
        "net": payload["model"]["config"],
        "training": {
            "recipe": args.recipe,
            "command": args.command,
            "iterations": int(counters.get("iteration", 0)),
            "positions": int(counters.get("positions", 0)),
            "games": int(counters.get("games", 0)),
            "steps": int((payload.get("learner") or {}).get("step", 0)),
            "minutes": round(float(clock.get("seconds", 0.0)) / 60, 1),
            "cpu_hours": round(float(clock.get("cpu_seconds", 0.0)) / 3600, 3),
            "machine": args.machine,
            "seed": config.get("seed"),
        },
        "strength": strength(names, args.ratings, aliases),
    }
    if payload.get("source", "").startswith("mean of "):  # stochastic weight averaging
        entry["training"]["weights"] = payload["source"]
    if args.truth:
        entry["strength"]["truth"] = truth_scores(names, args.truth)
    if panel:
        for key in ("matches", "pool_elo"):
            entry["strength"][key] += panel[key]
    if args.legs is not None:
        stands = {
            "iteration": entry["training"]["iterations"],
            "cpu_hours": entry["training"]["cpu_hours"],
        }
        entry["training"]["legs"] = legs_up_to(json.loads(args.legs.read_text()), stands)
    print(f"{target} ({target.stat().st_size / 1e3:.0f} kB, sha256 {digest[:12]}...)")
    print(json.dumps(entry["strength"], indent=2))
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}
    manifest[args.name] = entry
    MANIFEST.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
