"""``trapy-eval``: rate agents against each other, Elo with intervals (``configs/eval.yaml``).

    trapy-eval agents=[random,uct:200,mcts:outputs/RUN/checkpoints/latest.pt:100] games=40
    trapy-eval agents="['mcts:RUN:100,c_puct=2',random]"   # quote specs holding ',' or '='
    trapy-eval run=outputs/2026-01-01/12-00-00              # every checkpoint of a run
    trapy-eval run=outputs/RUN mode=gauntlet                # the newest checkpoint vs the rest
    trapy-eval run=outputs/RUN mode=baselines "baselines=[random,uct:1000]" checkpoints=[30,60]
                                      # chosen checkpoints vs random and uct:1000 only

The table is printed, and ``ratings.txt``, ``ratings.csv``, ``ratings.json`` (with every match)
and, for a run, ``elo_curve.png`` (plus, where checkpoints played the baselines, their win
rates: ``winrates.txt``, ``winrates.csv``, ``winrate_curve.png``) are written into the Hydra
output folder
(``outputs/eval/<date>/<time>/``, or ``out=...``). Match results are cached (by default in
``<run>/eval_cache.jsonl`` for a run, else in the output folder), so rating a run again after
more checkpoints plays only the new matches. Every key is checked against `EvalCommandConfig`
when the configuration is composed: a typo fails naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import hydra
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig

from trapy_rl.agents.network import checkpoint_spec
from trapy_rl.config import CONFIG_DIR
from trapy_rl.eval.report import write_tournament
from trapy_rl.eval.tournament import (
    MODES,
    TournamentResult,
    pairings,
    play_tournament,
    run_checkpoints,
)

__all__ = ["EvalCommandConfig", "evaluate", "main"]

DEFAULT_SIDE = 10


@dataclass
class EvalCommandConfig:
    """The ``trapy-eval`` command (``configs/eval.yaml``).

    Attributes:
        agents: agent specs (``random``, ``uct:1000``, ``net:PATH``, ``mcts:PATH:400``, ...);
            with ``run`` they join the run's checkpoints.
        games: games per match (colours alternate).
        openings: random stones that start each pair of games (colours exchanged within a
            pair). Two nets that search without noise otherwise replay the same two games.
        side: the board side; null takes the run's side, or 10 without a run.
        seed: the tournament seed.
        run: a training run folder (or its checkpoints folder): rate every ``ckpt_*.pt``.
        checkpoints: with ``run``, the iterations of the checkpoints to rate; empty: all.
        mode: round_robin (every pair), gauntlet (``focus`` against each other agent) or
            baselines (with ``run``: each checkpoint against each baseline, nothing else).
        focus: the gauntlet's agent; null: the newest checkpoint of the run, else the first.
        num_simulations: search per move of the run's checkpoints (``mcts:PATH:N``); 0 plays
            their policy alone (``net:PATH``).
        device: where the run's nets play (auto, cpu, cuda).
        baselines: fixed opponents (agent specs); with ``run`` they are drawn as lines in the
            Elo plot and, in mode baselines, are each checkpoint's opponents. ``random`` is
            the Elo anchor.
        prior_games: virtual games per pair in the Elo fit (keeps perfect scores finite).
        cache: the JSON-lines match cache; null: ``<run>/eval_cache.jsonl`` for a run, else
            ``<out>/matches.jsonl``.
        out: the output folder; null: Hydra's run folder.
        progress: show a progress bar over all games.
        threads: torch CPU threads (1 is fastest for small nets); 0 leaves torch's default.
    """

    agents: list[str] = field(default_factory=list)
    games: int = 40
    openings: int = 1
    side: int | None = None
    seed: int = 0
    run: str | None = None
    checkpoints: list[int] = field(default_factory=list)
    mode: str = "round_robin"
    focus: str | None = None
    num_simulations: int = 100
    device: str = "auto"
    baselines: list[str] = field(default_factory=lambda: ["random", "uct:200"])
    prior_games: float = 1.0
    cache: str | None = None
    out: str | None = None
    progress: bool = True
    threads: int = 1


ConfigStore.instance().store(name="eval_schema", node=EvalCommandConfig)


def evaluate(cfg: DictConfig | EvalCommandConfig) -> TournamentResult:
    """Run the tournament ``cfg`` describes, print the table and write the files.

    Raises:
        ValueError: naming the problem, for bad settings, specs or files.
    """
    from trapy_rl.game.board import Board

    if cfg.mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {cfg.mode!r}")
    if cfg.threads < 0:
        raise ValueError(f"threads must be >= 0, got {cfg.threads}")
    if cfg.threads:
        import torch

        torch.set_num_threads(int(cfg.threads))
    specs = [str(spec) for spec in cfg.agents]
    side = cfg.side
    focus = cfg.focus
    curve: list[tuple[str, int]] = []
    cache = cfg.cache
    if not cfg.agents and not cfg.run:
        raise ValueError("no agents: give agents=[...] and/or run=RUN_FOLDER")
    if cfg.checkpoints and not cfg.run:
        raise ValueError("checkpoints=[...] picks checkpoints of a run: give run=RUN_FOLDER too")
    baselines = list(dict.fromkeys(str(b) for b in cfg.baselines))
    if cfg.run:
        checkpoints = run_checkpoints(cfg.run)
        if cfg.checkpoints:
            wanted = {int(iteration) for iteration in cfg.checkpoints}
            missing = sorted(wanted - {c.iteration for c in checkpoints})
            if missing:
                found = [c.iteration for c in checkpoints]
                raise ValueError(
                    f"{cfg.run}: no checkpoints of iterations {missing}; it has {found}"
                )
            checkpoints = [c for c in checkpoints if c.iteration in wanted]
        sides = sorted({checkpoint.side for checkpoint in checkpoints})
        if len(sides) > 1:
            raise ValueError(f"{cfg.run}: checkpoints of several board sides {sides}")
        if side is None:
            side = sides[0]
        elif side != sides[0]:
            raise ValueError(
                f"side={side}, but the run {cfg.run} trains on side {sides[0]} (leave side unset)"
            )
        curve = [
            (
                checkpoint_spec(c.path, num_simulations=cfg.num_simulations, device=cfg.device),
                c.step,
            )
            for c in checkpoints
        ]
        specs = [*baselines, *(s for s in specs if s not in baselines), *(s for s, _ in curve)]
        if cfg.mode == "gauntlet" and focus is None:
            focus = curve[-1][0]
        if cache is None:
            cache = str(Path(cfg.run) / "eval_cache.jsonl")
    else:
        specs = [*baselines, *(s for s in specs if s not in baselines)]
    if side is None:
        side = DEFAULT_SIDE

    out = Path(cfg.out) if cfg.out else Path(_hydra_output_dir())
    if cache is None:
        cache = str(out / "matches.jsonl")
    board = Board(int(side))
    opponents = baselines if cfg.mode == "baselines" else []  # other modes play every pair
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
        cache_path=cache,
        prior_games=float(cfg.prior_games),
        progress=bool(cfg.progress),
    )
    paths = write_tournament(result, out, curve=curve, baselines=baselines)
    print(result.ratings.table())
    print(f"matches played {result.played}, read from the cache {result.cached} ({cache})")
    for kind, path in paths.items():
        print(f"{kind}: {path}")
    return result


def _hydra_output_dir() -> str:
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        raise ValueError("out is not set and there is no Hydra run folder: give out=FOLDER")
    return HydraConfig.get().runtime.output_dir


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="eval")
def main(cfg: DictConfig) -> None:
    evaluate(cfg)


if __name__ == "__main__":
    main()
