"""``trapy-eval``: rate agents, Elo with intervals (``configs/eval.yaml``).

    trapy-eval agents=[random,uct:200,mcts:outputs/RUN/checkpoints/latest.pt:100] games=40
    trapy-eval agents="['mcts:RUN:100,c_puct=2',random]"   # quote specs holding ',' or '='
    trapy-eval run=outputs/2026-01-01/12-00-00              # every checkpoint of a run
    trapy-eval run=outputs/RUN mode=gauntlet                # the newest checkpoint vs the rest
    trapy-eval run=outputs/RUN mode=baselines "baselines=[random,uct:1000]" checkpoints=[30,60]
                                      # chosen checkpoints vs random and uct:1000 only
    trapy-eval run=outputs/RUN mode=benchmark checkpoints=[60,120]
                                      # rated on the side's fixed pool: one Elo scale, each
                                      # step against the member nearest the estimate
    trapy-eval agents=[mcts:A:200] mode=benchmark adaptive.target=50   # a narrower interval
    trapy-eval agents=[mcts:A:200] mode=benchmark adaptive.start=4500  # begin near Elo 4500
    trapy-eval agents=[mcts:A:200,mcts:B:200] mode=benchmark head_to_head=true
                                      # and against each other: cycles, pool vs head-to-head
    trapy-eval run=outputs/RUN mode=truth num_simulations=200  # on side 4 or 5: each checkpoint
                                      # against the exact values (no games between agents)
    trapy-eval agents=[mcts:A:200] side=5 mode=truth test_set=FILE  # on other solved positions

Modes: ``round_robin`` (every pair; the cycles of clear wins are reported), ``gauntlet``,
``baselines`` (each checkpoint against each baseline) and ``benchmark`` (each agent against
members of the rating pool, `trapy_rl.eval.pool`, with their ratings held: Elo on one fixed
scale, random at 0, comparable across runs and days), and ``truth``, on a solved side (4, 5):
each agent scored against the exact values (`trapy_rl.eval.truth`: won positions of the
shipped test set kept, value signs, its own swap decisions), written to ``truth.csv``. A
benchmark plays, step by step, the
member nearest the agent's estimate until its interval is within ``adaptive.target``
(`rate_adaptively`); ``every_member=true`` plays each member ``games`` games instead.

The table is printed, and ``ratings.txt``, ``ratings.csv``, ``ratings.json`` (with every match)
and, for a run, ``elo_curve.png`` (plus, where checkpoints played the baselines or the pool,
their win rates: ``winrates.txt``, ``winrates.csv``, ``winrate_curve.png``) are written into
the Hydra output folder (``outputs/eval/<date>/<time>/``, or ``out=...``); ``summary.txt`` holds
the settings, the games and distinct games played, and the cycles. Match results are cached
(by default in ``<run>/eval_cache.jsonl`` for a run, else in the output folder), so rating a
run again after more checkpoints plays only the new matches. Every key is checked against
`EvalCommandConfig`, registered here as the schema of ``configs/eval.yaml``, when the
configuration is composed: a typo fails naming the key. ``trapy-eval --cfg job`` prints the
composed configuration.
"""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import hydra
from omegaconf import DictConfig

from trapy_rl.agents import parse_agent
from trapy_rl.agents.network import checkpoint_spec
from trapy_rl.config import CONFIG_DIR, check_command_line, register_schema, settings_of
from trapy_rl.errors import reported
from trapy_rl.eval.cycles import find_cycles, head_to_head_spread
from trapy_rl.eval.pool import (
    AdaptiveRating,
    AdaptiveSettings,
    load_pool,
    rate_against_pool,
    rate_each_adaptively,
)
from trapy_rl.eval.report import write_tournament
from trapy_rl.eval.starts import load_starts
from trapy_rl.eval.tournament import (
    MODES,
    TournamentResult,
    pairings,
    play_tournament,
    run_checkpoints,
)
from trapy_rl.eval.truth import TruthScore, score_agent, truth_sides
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.nn.device import check_device
from trapy_rl.solve.positions import read_test_set

__all__ = ["COMMAND_MODES", "EvalCommandConfig", "check_agents", "evaluate", "main"]

DEFAULT_SIDE = 10
COMMAND_MODES = (*MODES, "benchmark", "truth")
MAX_MATCH_GAMES = 10_000  # games of a match, played at once (each with its search tree)
MAX_SIMULATIONS = 1_000_000  # the run's checkpoints' search a move


@dataclass(frozen=True)
class EvalCommandConfig:
    """The ``trapy-eval`` command (``configs/eval.yaml``): its settings and their defaults.

    Attributes:
        agents: agent specs (``random``, ``uct:1000``, ``net:PATH``, ``mcts:PATH:400``, ...);
            with ``run`` they join the run's checkpoints.
        games: games per match (colours alternate); not used by an adaptive benchmark, whose
            steps are ``adaptive.games_per_step`` games each.
        starts: each pair of games (colours exchanged) starts from a position of the side's
            start set (`trapy_rl.eval.starts`): two nets that search without noise otherwise
            replay the same two games.
        openings: random stones that start each pair of games instead (needs starts=false).
        side: the board side; null takes the run's side, or 10 without a run.
        seed: the tournament seed.
        run: a training run folder (or its checkpoints folder): rate every ``ckpt_*.pt``.
        checkpoints: with ``run``, the iterations of the checkpoints to rate (-1: the newest,
            -2 the one before, ...); empty: all.
        mode: round_robin (every pair), gauntlet (``focus`` against each other agent),
            baselines (with ``run``: each checkpoint against each baseline, nothing else),
            benchmark (each agent and checkpoint against the rating pool) or truth (each
            agent and checkpoint against the exact values of a solved side).
        focus: the gauntlet's agent; null: the newest checkpoint of the run, else the first.
        num_simulations: search per move of the run's checkpoints (``mcts:PATH:N``); 0 plays
            their policy alone (``net:PATH``).
        device: where the run's nets play (auto, cpu, cuda).
        baselines: fixed opponents (agent specs); with ``run`` they are drawn as lines in the
            Elo plot and, in mode baselines, are each checkpoint's opponents. ``random`` is
            the Elo anchor. Not used by mode benchmark, whose opponents are the pool's.
        pool: mode benchmark: ``default`` (the pool that ships for the side) or a pool file.
        pool_members: mode benchmark: the members to play (empty: all), a cheaper subset.
        adaptive: mode benchmark: each agent plays, a step at a time, the member nearest its
            estimate until its 95% interval is within ``adaptive.target`` Elo or
            ``adaptive.max_games`` are spent (`trapy_rl.eval.pool.AdaptiveSettings`).
        every_member: mode benchmark: play every member (of ``pool_members``) ``games``
            games instead of the adaptive steps.
        head_to_head: mode benchmark: also play the rated agents against each other, and
            report the cycles and each agent's head-to-head rating beside its pool rating.
        prior_games: virtual games per pair in the Elo fit (keeps perfect scores finite).
        test_set: mode truth: a solved-positions file (``python -m trapy_rl.solve.positions
            --side 5 --empty 22 --seed 1 --out FILE``) whose won positions the agents must keep
            won, instead of the one that ships for the side: positions no choice was made on.
        cache: the JSON-lines match cache; null: ``<run>/eval_cache.jsonl`` for a run, else
            ``<out>/matches.jsonl``.
        out: the output folder; null: Hydra's run folder.
        progress: show a progress bar over all games.
        threads: torch CPU threads (1 is fastest for small nets); 0 leaves torch's default.
    """

    agents: tuple[str, ...] = ()
    games: int = 40
    starts: bool = True
    openings: int = 0
    side: int | None = None
    seed: int = 0
    run: str | None = None
    checkpoints: tuple[int, ...] = ()
    mode: str = "round_robin"
    focus: str | None = None
    num_simulations: int = 100
    device: str = "auto"
    baselines: tuple[str, ...] = ("random", "uct:200")
    pool: str = "default"
    pool_members: tuple[str, ...] = ()
    adaptive: AdaptiveSettings = field(default_factory=AdaptiveSettings)
    every_member: bool = False
    head_to_head: bool = False
    prior_games: float = 1.0
    test_set: str | None = None
    cache: str | None = None
    out: str | None = None
    progress: bool = True
    threads: int = 1

    def __post_init__(self) -> None:
        """Each key checked, and the pairs that only work together, when the settings are
        built (on the command line before Hydra's output folder is made)."""
        p = []
        if self.mode not in COMMAND_MODES:
            p.append(f"mode must be one of {', '.join(COMMAND_MODES)}, got {self.mode!r}")
        if not 1 <= self.games <= MAX_MATCH_GAMES:  # a match's games are played all at once
            p.append(f"games must be between 1 and {MAX_MATCH_GAMES:,}, got {self.games}")
        if self.side is not None and not 2 <= self.side <= MAX_SIDE:
            p.append(f"side must be between 2 and {MAX_SIDE} or null, got {self.side}")
        if not 0 <= self.openings <= MAX_SIDE * MAX_SIDE:
            p.append(f"openings must be between 0 and {MAX_SIDE * MAX_SIDE}, got {self.openings}")
        if not 0 <= self.num_simulations <= MAX_SIMULATIONS:
            p.append(
                f"num_simulations must be between 0 and {MAX_SIMULATIONS:,}, got "
                f"{self.num_simulations}"
            )
        if not 0 <= self.threads <= 1024:
            p.append(f"threads must be between 0 and 1024, got {self.threads}")
        if not (self.prior_games >= 0 and math.isfinite(self.prior_games)):
            p.append(f"prior_games must be finite and >= 0, got {self.prior_games}")
        try:
            check_device(self.device)
        except ValueError as error:
            p.append(str(error))
        if self.checkpoints and not self.run:
            p.append("checkpoints=[...] picks checkpoints of a run: give run=RUN_FOLDER too")
        if self.starts and self.openings:
            p.append("openings=N plays random stones instead of the start set: add starts=false")
        if self.test_set is not None and self.mode != "truth":
            p.append(f"test_set is for mode=truth (the exact values), not mode={self.mode}")
        if self.focus is not None and self.mode != "gauntlet":
            p.append(f"focus is the gauntlet's agent: it needs mode=gauntlet, not {self.mode}")
        benchmark_only = {
            "head_to_head": self.head_to_head,
            "pool_members": self.pool_members,
            "pool": self.pool != "default",
            "adaptive": self.adaptive != AdaptiveSettings(),
            "every_member": self.every_member,
        }
        for key, given in benchmark_only.items():
            if given and self.mode != "benchmark":
                p.append(f"{key} is for mode=benchmark (the rating pool), not mode={self.mode}")
        if p:
            raise ValueError("; ".join(p))


register_schema("eval", EvalCommandConfig)


def evaluate(cfg: DictConfig | EvalCommandConfig) -> TournamentResult | list[TruthScore]:
    """Run the tournament ``cfg`` describes (or, with mode truth, the scores against the exact
    values), print the table and write the files.

    Raises:
        ValueError: naming the problem, for bad settings, specs or files.
    """
    if not isinstance(cfg, EvalCommandConfig):
        cfg = settings_of(cfg, EvalCommandConfig)
    if cfg.threads:
        import torch

        torch.set_num_threads(int(cfg.threads))
    check_agents(cfg)  # every agent before the plan is printed or a game played
    side, curve, x_label = _run_agents(cfg)
    board = Board(side)
    out = Path(cfg.out) if cfg.out else Path(_hydra_output_dir())
    cache = cfg.cache or (
        str(Path(cfg.run) / "eval_cache.jsonl") if cfg.run else str(out / "matches.jsonl")
    )
    rated = list(dict.fromkeys([*(str(spec) for spec in cfg.agents), *(s for s, _ in curve)]))
    if cfg.mode == "truth":
        return _truth(cfg, board, rated, dict(curve), x_label, out)
    starts = load_starts(board) if cfg.starts else ()
    notes = [
        f"side {side}, mode {cfg.mode}, {cfg.games} games a match, seed {cfg.seed}, "
        + (f"{len(starts)} start positions" if starts else f"{cfg.openings} random stones"),
    ]
    if cfg.mode == "benchmark":
        pool = load_pool(cfg.pool, side=side).select(list(cfg.pool_members))
        baselines = list(pool.ratings)
        notes.append(f"pool: {', '.join(f'{m.spec} ({m.elo:.0f})' for m in pool.members)}")
        print(f"{len(rated)} agents against a pool of {len(baselines)}, side {side}", flush=True)
        if cfg.every_member:
            result = rate_against_pool(
                rated,
                pool,
                board=board,
                num_games=int(cfg.games),
                seed=int(cfg.seed),
                cache_path=cache,
                progress=bool(cfg.progress),
            )
        else:
            result, adaptive = rate_each_adaptively(
                rated,
                pool,
                board=board,
                settings=cfg.adaptive,
                seed=int(cfg.seed),
                cache_path=cache,
                progress=bool(cfg.progress),
            )
            notes += [_steps_line(rating) for rating in adaptive]
        if cfg.head_to_head and len(rated) > 1:
            notes += _head_to_head(cfg, rated, result, board, starts, cache)
    else:
        baselines = list(dict.fromkeys(str(b) for b in cfg.baselines))
        specs = [*baselines, *(s for s in rated if s not in baselines)]
        focus = cfg.focus or (curve[-1][0] if cfg.mode == "gauntlet" and curve else None)
        opponents = baselines if cfg.mode == "baselines" else []  # other modes play all pairs
        matches = pairings(specs, mode=cfg.mode, focus=focus, baselines=opponents)
        print(
            f"{len(specs)} agents, {cfg.mode}, {len(matches)} matches of {cfg.games} games "
            f"on side {side}",
            flush=True,
        )
        result = play_tournament(
            specs,
            board=board,
            num_games=int(cfg.games),
            seed=int(cfg.seed),
            mode=cfg.mode,
            focus=focus,
            baselines=opponents,
            openings=int(cfg.openings),
            starts=starts,
            cache_path=cache,
            prior_games=float(cfg.prior_games),
            progress=bool(cfg.progress),
        )
        if cfg.mode == "round_robin":
            notes.append(_cycles_line(result))
    notes.append(_games_line(result))
    paths = write_tournament(result, out, curve=curve, baselines=baselines, x_label=x_label)
    paths["summary"] = out / "summary.txt"
    paths["summary"].write_text("\n".join(notes) + "\n", encoding="utf-8")
    print(result.ratings.table())
    print("\n".join(notes[1:]))
    print(f"matches played {result.played}, read from the cache {result.cached} ({cache})")
    for kind, path in paths.items():
        print(f"{kind}: {path}")
    return result


def check_agents(cfg: EvalCommandConfig) -> None:
    """Build, once, every agent the tournament will play: ``agents``, the run's chosen
    checkpoints, and the baselines (the pool's members in mode benchmark), so that a bad spec
    or checkpoint is refused in one line before any plan, folder or bar (the nets read here
    are kept for the games, `trapy_rl.agents.network.load_evaluator`).

    Raises:
        ValueError: naming the problem (the spec, the file and the field).
    """
    if not cfg.agents and not cfg.run:
        raise ValueError("no agents: give agents=[...] and/or run=RUN_FOLDER")
    side, curve, _ = _run_agents(cfg, quiet=True)
    board = Board(side)
    specs = [*(str(spec) for spec in cfg.agents), *(spec for spec, _ in curve)]
    if cfg.mode == "benchmark":
        load_pool(cfg.pool, side=side).select(list(cfg.pool_members))
    else:
        specs += [str(spec) for spec in cfg.baselines]
    for spec in dict.fromkeys(specs):
        parse_agent(spec, board=board, seed=int(cfg.seed))


def _run_agents(cfg, *, quiet: bool = False) -> tuple[int, list[tuple[str, float]], str]:
    """The board side, and the run's chosen checkpoints as (spec, x) with the x axis's label
    (training minutes where every checkpoint records them, else gradient steps); ``quiet``:
    without the line on checkpoints left out."""
    side = cfg.side
    if not cfg.run:
        return (DEFAULT_SIDE if side is None else int(side)), [], "training step (gradient steps)"
    checkpoints = run_checkpoints(cfg.run)
    if cfg.checkpoints:
        # A negative number counts from the newest: -1 is the last checkpoint.
        wanted = {
            checkpoints[int(i)].iteration if int(i) < 0 and -int(i) <= len(checkpoints) else int(i)
            for i in cfg.checkpoints
        }
        missing = sorted(wanted - {c.iteration for c in checkpoints})
        if missing:
            found = [c.iteration for c in checkpoints]
            raise ValueError(f"{cfg.run}: no checkpoints of iterations {missing}; it has {found}")
        checkpoints = [c for c in checkpoints if c.iteration in wanted]
    # A curriculum's checkpoints on smaller boards are not rated on the run's own side (the
    # newest checkpoint's): unchosen ones are left out, chosen ones are an error.
    own = checkpoints[-1].side if side is None else int(side)
    others = [c for c in checkpoints if c.side != own]
    other_sides = sorted({c.side for c in others})
    if len(others) == len(checkpoints):
        raise ValueError(
            f"side={side}, but the run {cfg.run} trains on side {other_sides[-1]} "
            "(leave side unset)"
        )
    if others and cfg.checkpoints:
        raise ValueError(
            f"{cfg.run}: checkpoints {[c.iteration for c in others]} are of side "
            f"{other_sides}, not {own} (a curriculum's smaller boards)"
        )
    if others:
        if not quiet:
            print(
                f"rating the {len(checkpoints) - len(others)} checkpoints of side {own}; left out "
                f"{len(others)} of sides {other_sides} (a curriculum's boards)",
                flush=True,
            )
        checkpoints = [c for c in checkpoints if c.side == own]
    timed = all(c.minutes is not None for c in checkpoints)
    curve = [
        (
            checkpoint_spec(c.path, num_simulations=cfg.num_simulations, device=cfg.device),
            c.minutes if timed else c.step,
        )
        for c in checkpoints
    ]
    return own, curve, "training minutes" if timed else "training step (gradient steps)"


def _truth(cfg, board: Board, rated: list[str], x: dict, x_label: str, out: Path):
    """Every agent scored against the truth of ``board``'s side, printed and in ``truth.csv``."""
    if board.side not in truth_sides():
        raise ValueError(f"mode=truth: side {board.side} is not solved (solved: {truth_sides()})")
    test_set = None
    if cfg.test_set is not None:
        test_set = read_test_set(cfg.test_set)
        if test_set.side != board.side:
            raise ValueError(f"test_set {cfg.test_set} holds side-{test_set.side} positions, "
                             f"the agents play side {board.side}")  # fmt: skip
    agents = [parse_agent(spec, board=board, seed=int(cfg.seed)) for spec in rated]
    on = f" ({len(test_set.positions)} positions of {cfg.test_set})" if test_set else ""
    print(f"{len(agents)} agents against the exact values of side {board.side}{on}", flush=True)
    scores, rows = [], []
    for spec, agent in zip(rated, agents, strict=True):
        score = score_agent(agent, board.side, test_set=test_set)
        print(score, flush=True)
        scores.append(score)
        shares = {"won_kept": score.won_kept, "value_sign": score.value_sign, "swaps": score.swaps}
        row = {"agent": spec, x_label: x.get(spec, "")}
        for name, share in shares.items():
            row[name] = "" if share is None else f"{share.rate:.4f}"
            row[f"{name}_of"] = "" if share is None else share.total
        row["wrong_swaps"] = " ".join(score.wrong_swaps)
        # Which positions won_kept and value_sign were measured on, so a reader of the file
        # (and ship_pretrained.py --truth) can tell a second draw from the shipped set.
        row["test_set"] = score.test_set
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "truth.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"truth: {out / 'truth.csv'}")
    return scores


def _head_to_head(cfg, rated, pooled: TournamentResult, board, starts, cache) -> list[str]:
    """The rated agents' round robin: its cycles, and head-to-head beside pool ratings."""
    result = play_tournament(
        rated,
        board=board,
        num_games=int(cfg.games),
        seed=int(cfg.seed),
        starts=starts,
        cache_path=cache,
        prior_games=float(cfg.prior_games),
        progress=bool(cfg.progress),
    )
    lines = [
        _cycles_line(result),
        "head-to-head vs pool rating (head-to-head shifted to the pool's mean):",
    ]
    for spec, (pool_elo, h2h_elo) in head_to_head_spread(pooled.ratings, result.ratings).items():
        lines.append(
            f"  {spec}: pool {pool_elo:.0f}, head-to-head {h2h_elo:.0f}, "
            f"difference {h2h_elo - pool_elo:+.0f}"
        )
    return lines


def _steps_line(rating: AdaptiveRating) -> str:
    """One agent's adaptive steps: the members in the order played, and where it stopped."""
    steps = ", ".join(f"{member} ({games})" for member, games in rating.steps)
    end = "reached the target" if rating.converged else "game budget spent before the target"
    return (
        f"{rating.spec}: {rating.elo:.0f} +-{rating.half_width:.0f} Elo after {rating.games} "
        f"games, {end}; steps: {steps}"
    )


def _cycles_line(result: TournamentResult) -> str:
    cycles = find_cycles(result.ratings.names, result.ratings.wins)
    shown = "; ".join(" > ".join([*cycle, cycle[0]]) for cycle in cycles)
    return f"cycles of clear wins (95% intervals): {shown or 'none'}"


def _games_line(result: TournamentResult) -> str:
    games = sum(m.games for m in result.matches)
    counted = [m.distinct_games for m in result.matches if m.distinct_games is not None]
    distinct = (
        f"{sum(counted)} distinct"
        if len(counted) == len(result.matches)
        else "distinct games not recorded in older cache entries"
    )
    return f"games: {games} in {len(result.matches)} matches ({distinct})"


def _hydra_output_dir() -> str:
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        raise ValueError("out is not set and there is no Hydra run folder: give out=FOLDER")
    return HydraConfig.get().runtime.output_dir


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="eval")
def _hydra_main(cfg: DictConfig) -> None:
    with reported("trapy-eval"):
        evaluate(cfg)


def main() -> None:
    """``trapy-eval [OVERRIDES]``: the command line and every agent checked (one line for a
    mistake), then Hydra's main: the output folder, then `evaluate`."""
    with reported("trapy-eval"):
        config = check_command_line("eval", EvalCommandConfig, sys.argv[1:])
        if config is not None:  # before Hydra makes the output folder
            check_agents(config)
    _hydra_main()


if __name__ == "__main__":
    main()
