"""The AlphaZero training loop: self-play -> replay -> learner, with checkpoints and logs.

`train(cfg)` takes a `trapy_rl.train.settings.TrainConfig` (the command line builds one from
the composed Hydra config) and never imports Hydra. One iteration:

The run stops after ``iterations``, or once its training clock reaches ``minutes`` (the way to
compare training settings at equal time). The clock is ``clock``: by default this process's CPU
time, which other jobs on the machine do not shorten, so a budget and the curriculum's stages
give the same run on a loaded machine as on an idle one; or wall-clock.

1. self-play: ``selfplay.moves_per_iteration`` searched moves in each of ``selfplay.num_games``
   games; finished games' positions go into the replay window;
2. learn: once the window holds ``replay.min_size`` positions, ``replay.train_ratio`` training
   samples per generated position, in batches of ``optim.batch_size``;
3. log to TensorBoard; every ``eval.every`` iterations play matches and draw the opening values;
4. every ``checkpoint.every`` iterations, and at the end, save a checkpoint.

Ctrl-C (SIGINT) or SIGTERM stops the run at the end of the iteration in progress, with a
checkpoint (`trapy_rl.train.interrupt`); a second Ctrl-C stops at once, without one.

Random numbers: every iteration draws from generators seeded by (seed, iteration), so a run
resumed from a checkpoint continues exactly as if it had not stopped.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trapy_rl.agents import NetworkMCTSAgent
from trapy_rl.eval.pool import Pool, load_pool, pool_rating
from trapy_rl.eval.starts import load_starts
from trapy_rl.game.board import Board
from trapy_rl.nn import NetEvaluator, PolicyValueNet, resolve_device
from trapy_rl.train.checkpoint import (
    CHECKPOINT_DIR,
    CheckpointError,
    check_compatible,
    get_rng_state,
    load_newest_valid,
    remove_temporary_files,
    set_rng_state,
    write_run_checkpoint,
)
from trapy_rl.train.evaluation import (
    check_opponents,
    evaluate,
    opening_values_figure,
    truth_metrics,
)
from trapy_rl.train.interrupt import StopRequest
from trapy_rl.train.learner import Learner
from trapy_rl.train.replay import ReplayBuffer
from trapy_rl.train.report import Reporter
from trapy_rl.train.resign import ResignCalibrator, collapse_warnings, games_settle_iterations
from trapy_rl.train.settings import TrainConfig
from trapy_rl.train.workers import SelfPlayBackend, make_selfplay_backend

__all__ = ["TrainResult", "train"]

log = logging.getLogger(__name__)

# Streams of random numbers drawn per iteration: seeded by (seed, iteration, stream).
_SELFPLAY_STREAM, _REPLAY_STREAM, _EVAL_STREAM = 1, 2, 3


@dataclass
class TrainResult:
    """What a finished run leaves behind.

    Attributes:
        run_dir: the run's folder (config, checkpoints, TensorBoard events).
        checkpoint: the last checkpoint written.
        iterations: iterations completed in total (resumed ones included).
        final_matches: the closing matches, ``{opponent spec: MatchResult}``.
        history: per-iteration metrics of this process, in order.
        stopped_by: the signal that stopped the run early (``"SIGINT"``, ``"SIGTERM"``).
        exit_code: what a command line should exit with: 0, or 128 + the signal's number.
    """

    run_dir: Path
    checkpoint: Path | None
    iterations: int
    final_matches: dict[str, Any] = dataclasses.field(default_factory=dict)
    history: list[dict[str, float]] = dataclasses.field(default_factory=list)
    stopped_by: str | None = None
    exit_code: int = 0

    @property
    def final_match(self) -> Any:
        """The first closing match (against random play by default), or None."""
        return next(iter(self.final_matches.values()), None)


@dataclass
class _Run:
    """The pieces of a run and its counters (what a checkpoint saves)."""

    cfg: TrainConfig
    run_dir: Path
    board: Board
    net: PolicyValueNet
    evaluator: NetEvaluator
    learner: Learner
    replay: ReplayBuffer
    selfplay: SelfPlayBackend
    counters: dict[str, Any]
    # What the periodic matches start from and rate against (none without evaluations).
    starts: tuple[tuple[int, ...], ...] = ()
    pool: Pool | None = None
    resign: ResignCalibrator | None = None  # with selfplay.resign_false_rate > 0
    # Training wall-clock summed over the iterations, resumed runs included. Kept apart from
    # the counters, which a resumed run reproduces exactly.
    seconds: float = 0.0
    # The same iterations' CPU time of this process (all its threads): the CPU-hours a
    # strength curve is drawn against, true even when other jobs share the cores.
    cpu_seconds: float = 0.0
    # The iteration the current self-play games began (0, or a curriculum's change of side).
    games_began: int = 0

    @property
    def clock(self) -> float:
        """Seconds on the clock that ``minutes`` and the curriculum count (``cfg.clock``)."""
        return self.cpu_seconds if self.cfg.clock == "cpu" else self.seconds

    def save(self, reason: str) -> Path:
        cfg, counters = self.cfg, self.counters
        payload = {
            "side": self.board.side,
            "model": {"config": cfg.model.to_dict(), "state": self.net.state_dict()},
            "learner": self.learner.state_dict(),
            "counters": dict(counters),
            "rng": get_rng_state(),
            "replay": self.replay.state_dict() if cfg.checkpoint.replay else None,
            "selfplay": self.selfplay.state_dict(),
            "config": cfg.to_dict(),
            "clock": {"seconds": self.seconds, "cpu_seconds": self.cpu_seconds},
            "resign": None if self.resign is None else self.resign.state_dict(),
        }
        folder = self.run_dir / CHECKPOINT_DIR
        keep = cfg.checkpoint.keep
        path = write_run_checkpoint(folder, counters["iteration"], payload, keep=keep)
        log.info("checkpoint (%s): %s", reason, path)
        return path


def train(cfg: TrainConfig) -> TrainResult:
    """Run (or resume) a training run; see the module docstring. Returns where it all went."""
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"train takes a TrainConfig, got {type(cfg).__name__}")
    check_opponents(cfg)  # a bad spec is refused before the run folder is touched
    with StopRequest() as stop:  # a signal stops at once until the loop starts, then at a boundary
        run = _build(cfg)
        try:
            if cfg.resume:
                _resume(run, cfg.resume)
                _check_work_left(run)
            (run.run_dir / "config.yaml").write_text(_to_yaml(cfg.to_dict()))
            reporter = Reporter(
                run.run_dir, cfg, first_iteration=run.counters["iteration"], first_seconds=run.clock
            )
        except BaseException:
            run.selfplay.close()
            raise
        result = TrainResult(run_dir=run.run_dir, checkpoint=None, iterations=0)
        saved_at = run.counters["iteration"] if cfg.resume else -1
        stop.defer()
        try:
            while (
                run.counters["iteration"] < cfg.iterations
                and not _out_of_time(run)
                and stop.signal is None
            ):
                metrics = _iterate(run, reporter)
                result.history.append({"iteration": run.counters["iteration"], **metrics})
                if cfg.checkpoint.every and run.counters["iteration"] % cfg.checkpoint.every == 0:
                    result.checkpoint = run.save("periodic")
                    saved_at = run.counters["iteration"]
        except KeyboardInterrupt:  # a second Ctrl-C, mid-iteration: nothing consistent to save
            reporter.close_progress()
            last = f"the checkpoint of iteration {saved_at}" if saved_at >= 0 else "the start"
            print(
                f"\nstopped at once: the run resumes from {last} (resume={run.run_dir})",
                file=sys.stderr,
                flush=True,
            )
            reporter.close()
            run.selfplay.close()
            raise
        result.stopped_by, result.exit_code = stop.signal, stop.exit_code
    reporter.close_progress()
    if stop.signal is None and run.board.side != cfg.side:
        # Out of time or iterations before the curriculum reached the run's own side: the
        # net (fully convolutional) moves there, so that the last checkpoint and the closing
        # matches are on the board the run is for.
        print(
            f"curriculum: the run ended on side {run.board.side}, before its side-{cfg.side} stage",
            flush=True,
        )
        _set_side(run, cfg.side)
        saved_at = -1
    if saved_at != run.counters["iteration"]:
        result.checkpoint = run.save(result.stopped_by or "final")
    result.checkpoint = result.checkpoint or run.run_dir / CHECKPOINT_DIR / "latest.pt"
    result.iterations = run.counters["iteration"]
    run.selfplay.close()
    if result.stopped_by:
        print(
            f"stopped by {result.stopped_by} after iteration {result.iterations}: saved "
            f"{result.checkpoint}; resume with resume={run.run_dir}",
            flush=True,
        )
    elif cfg.eval.final_games > 0:
        result.final_matches = _closing_matches(run, reporter)
    reporter.close()
    print(f"checkpoint: {result.checkpoint}", flush=True)
    return result


def _check_work_left(run: _Run) -> None:
    """A resumed run with no iteration left to play (``iterations`` reached or the
    ``minutes`` spent) and no closing matches to play again has nothing to do: refused,
    saying so, before anything is written; with closing matches, say that they are all."""
    cfg, iteration = run.cfg, run.counters["iteration"]
    if iteration >= cfg.iterations:
        where = f"it is at iteration {iteration} and iterations={cfg.iterations}"
        more = f"give iterations= above {iteration}"
    elif cfg.minutes > 0 and run.clock >= 60.0 * cfg.minutes:
        where = f"its training clock is at {run.clock / 60:.1f} of minutes={cfg.minutes:g}"
        more = f"give minutes= above {run.clock / 60:.1f}"
    else:
        return
    if cfg.eval.final_games <= 0:
        raise ValueError(f"resume={cfg.resume}: nothing to do: {where}; {more} to train on")
    print(f"no iteration left to play ({where}): the closing matches only", flush=True)


def _out_of_time(run: _Run) -> bool:
    """The run's budget (``minutes`` on the training clock, ``clock``) is spent."""
    if run.cfg.minutes > 0 and run.clock >= 60.0 * run.cfg.minutes:
        kind = "CPU" if run.cfg.clock == "cpu" else "wall-clock"
        print(f"stopping: {run.clock / 60:.1f} training {kind} minutes reached", flush=True)
        return True
    return False


def _build(cfg: TrainConfig) -> _Run:
    """The run folder, the seeds, the net and the pieces around it (`train` writes the
    folder's config.yaml once a resume has been checked)."""
    device = resolve_device(cfg.device)  # first: a device this machine lacks is one line
    run_dir = Path(cfg.run_dir or ".").resolve()
    (run_dir / CHECKPOINT_DIR).mkdir(parents=True, exist_ok=True)
    for leftover in remove_temporary_files(run_dir / CHECKPOINT_DIR):
        print(f"removed {leftover.name}, left by an interrupted save", flush=True)
    if cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed % 2**32)  # noqa: NPY002 (for code that uses the global state)
    torch.manual_seed(cfg.seed)
    board = Board(cfg.curriculum.side_at(0, cfg.side))
    net = PolicyValueNet(cfg.model)
    evaluator = NetEvaluator(net, device=device, bf16=cfg.bf16, **cfg.net_options())
    positions = cfg.iterations * cfg.selfplay.num_games * cfg.selfplay.moves_per_iteration
    total_steps = math.ceil(positions * cfg.replay.train_ratio / cfg.optim.batch_size)
    learner = Learner(net, board, settings=cfg.optim, total_steps=total_steps, device=device)
    pool = None
    if cfg.eval.pool:  # checked before any game: the opponents must be pool members
        pool = load_pool(cfg.eval.pool, side=cfg.side).select(list(cfg.eval.opponents))
    return _Run(
        cfg=cfg,
        run_dir=run_dir,
        board=board,
        net=net,
        evaluator=evaluator,
        learner=learner,
        replay=_new_replay(board, cfg),
        selfplay=make_selfplay_backend(net, evaluator, board, cfg),
        counters={"iteration": 0, "positions": 0, "games": 0, "samples_owed": 0.0},
        starts=load_starts(board) if cfg.eval.every else (),
        pool=pool,
        resign=(
            ResignCalibrator(sp.resign_threshold, false_rate=sp.resign_false_rate)
            if (sp := cfg.selfplay).resign_false_rate > 0
            else None
        ),
    )


def _new_replay(board: Board, cfg: TrainConfig) -> ReplayBuffer:
    """An empty replay window on ``board`` as ``cfg.replay`` says."""
    replay = cfg.replay
    return ReplayBuffer(
        board, replay.capacity, growth=replay.growth, max_capacity=replay.max_capacity
    )


def _resume(run: _Run, path: str) -> None:
    """Load a run's state from the checkpoint at ``path`` (a file, or a run folder's newest
    checkpoint that loads)."""
    payload = load_newest_valid(path)
    missing = [k for k in ("learner", "counters", "rng", "selfplay") if k not in payload]
    if missing:
        raise CheckpointError(
            f"{payload['path']}: not a checkpoint of a training run (lacks {', '.join(missing)})"
        )
    # The side of the last iteration played: the next one moves on if the curriculum does. A
    # run that ended before its curriculum's last stage saved its last checkpoint on its own
    # side (`train`); the next iteration goes back to the stage's side.
    curriculum, saved_side = run.cfg.curriculum, int(payload["side"])
    iteration = int(payload["counters"].get("iteration", 0))
    side = curriculum.side_at(max(iteration - 1, 0), run.cfg.side)
    if curriculum.until_minutes and saved_side in curriculum.stage_sides(run.cfg.side):
        # The clock at the last iteration's start is not saved, so its stage is the side
        # it was saved on (a side this curriculum plays; any other fails the check below).
        side = saved_side
    if saved_side == run.cfg.side:
        side = run.cfg.side
    check_compatible(payload, side=side, model=run.cfg.model)
    saved_optimizer = ((payload.get("config") or {}).get("optim") or {}).get("name")
    if saved_optimizer not in (None, run.cfg.optim.name):
        raise CheckpointError(
            f"{payload['path']}: written by a run with optim={saved_optimizer}, this one has "
            f"optim={run.cfg.optim.name} (resume with the run's own settings, see its "
            "config.yaml)"
        )
    run.counters.update(payload["counters"])
    _set_side(run, side)
    source = payload["path"]
    _load_part(source, "model.state", lambda: run.net.load_state_dict(payload["model"]["state"]))
    _load_part(source, "learner", lambda: run.learner.load_state_dict(payload["learner"]))
    if payload.get("replay") is not None:
        _load_part(source, "replay", lambda: run.replay.load_state_dict(payload["replay"]))
    _load_part(source, "selfplay", lambda: run.selfplay.load_state_dict(payload["selfplay"]))
    if run.resign is not None and payload.get("resign") is not None:
        _load_part(source, "resign", lambda: run.resign.load_state_dict(payload["resign"]))
    _load_part(source, "rng", lambda: set_rng_state(payload["rng"]))
    clock = payload.get("clock") or {}
    run.seconds = float(clock.get("seconds", 0.0))
    run.cpu_seconds = float(clock.get("cpu_seconds", run.seconds))  # older files: wall-clock
    print(f"resumed from {payload['path']} at iteration {run.counters['iteration']}", flush=True)


def _load_part(source: str, field: str, load: Callable[[], object]) -> None:
    """Run ``load``; a malformed part of the checkpoint becomes a CheckpointError naming the
    file and the field."""
    try:
        load()
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise CheckpointError(f"{source}: field {field}: {message}") from error


def _set_side(run: _Run, side: int) -> None:
    """Move the run to the side-``side`` board (a curriculum stage): new games, an empty
    replay window; the net, the optimiser and the counters carry over."""
    if side == run.board.side:
        return
    cfg = run.cfg
    run.selfplay.close()
    run.board = run.learner.board = Board(side)
    run.replay = _new_replay(run.board, cfg)
    run.selfplay = make_selfplay_backend(run.net, run.evaluator, run.board, cfg)
    run.starts = load_starts(run.board) if cfg.eval.every else ()
    run.games_began = run.counters["iteration"]
    print(f"curriculum: side {side} from iteration {run.counters['iteration']}", flush=True)


def _iterate(run: _Run, reporter: Reporter) -> dict[str, float]:
    """One iteration: self-play, learning, evaluation when due, and its report."""
    cfg, counters = run.cfg, run.counters
    iteration = counters["iteration"]
    side = cfg.curriculum.side_at(iteration, cfg.side, minutes=run.clock / 60)
    if side != run.board.side:
        _set_side(run, side)
        if run.resign is not None:  # the new board's games start at the configured threshold
            run.selfplay.set_resign_threshold(run.resign.restart())
    replay = run.replay
    started, cpu_started = time.perf_counter(), time.process_time()

    # 1. self-play
    played = run.selfplay.play(
        cfg.selfplay.moves_per_iteration, seed=[cfg.seed, iteration, _SELFPLAY_STREAM]
    )
    replay.add(played.samples)
    counters["positions"] += len(played.samples)
    counters["games"] += len(played.records)
    if run.resign is not None:  # the threshold of the next iteration's games
        run.selfplay.set_resign_threshold(run.resign.update(played.records))

    # 2. learn
    if cfg.minutes > 0:  # the schedule spans the run: its iterations or its clock, the nearer end
        run.learner.progress = max(iteration / cfg.iterations, run.clock / (60.0 * cfg.minutes))
    rng = np.random.default_rng([cfg.seed, iteration, _REPLAY_STREAM])
    batch_size, reports = cfg.optim.batch_size, []
    learn_started = time.perf_counter()
    if len(replay) >= cfg.replay.min_size:
        counters["samples_owed"] += cfg.replay.train_ratio * len(played.samples)
        while counters["samples_owed"] >= batch_size:
            batch = replay.sample(batch_size, rng, mirror=cfg.replay.mirror)
            reports.append(run.learner.train_step(batch))
            counters["samples_owed"] -= batch_size
    learn_seconds = time.perf_counter() - learn_started
    run.selfplay.weights_changed()
    counters["iteration"] = iteration + 1

    # 3. report
    metrics = reporter.iteration_metrics(played.stats, reports, run.learner.step, len(replay))
    metrics["perf/learn_s"] = learn_seconds
    metrics["replay/window"] = float(replay.window)  # the positions drawn from
    if run.resign is not None:
        metrics["selfplay/resign_threshold"] = run.resign.threshold
    if cfg.eval.every and counters["iteration"] % cfg.eval.every == 0:
        metrics.update(_evaluate(run, reporter))
    metrics["perf/iteration_s"] = time.perf_counter() - started
    run.seconds += metrics["perf/iteration_s"]
    run.cpu_seconds += time.process_time() - cpu_started
    metrics["perf/cpu_hours"] = run.cpu_seconds / 3600
    reporter.log(metrics, counters, run.clock)
    since = counters["iteration"] - run.games_began
    if since > games_settle_iterations(run.board, cfg.selfplay.moves_per_iteration):
        reporter.warn(collapse_warnings(metrics, run.board), counters["iteration"])
    return metrics


def _match_agent(run: _Run, *, seed: int, label: str):
    """The agent a run is measured with: its net guiding the run's search, without noise and
    with ``eval.num_simulations`` a move."""
    settings = run.cfg.mcts.replace(num_simulations=run.cfg.eval.num_simulations)
    name = f"{label}+mcts:{settings.num_simulations}"
    return NetworkMCTSAgent(run.evaluator, settings=settings, seed=seed, name=name)


def _evaluate(run: _Run, reporter: Reporter) -> dict[str, float]:
    """Matches against ``eval.opponents`` (with a pool: the Elo on its scale), the
    opening-values picture, and on a solved side the scores against the truth."""
    cfg, iteration = run.cfg, run.counters["iteration"]
    seed = int(np.random.default_rng([cfg.seed, iteration, _EVAL_STREAM]).integers(2**31))
    agent = _match_agent(run, seed=seed, label="net")
    matches = evaluate(
        agent,
        run.board,
        opponents=cfg.eval.opponents,
        num_games=cfg.eval.num_games,
        seed=seed,
        starts=run.starts,
    )
    if reporter.writer is not None:
        figure = opening_values_figure(run.evaluator, run.board, title=f"iteration {iteration}")
        reporter.writer.add_figure("eval/opening_values", figure, iteration)
    metrics = {f"eval/win_rate_vs_{tag_name(spec)}": m.win_rate for spec, m in matches.items()}
    if run.pool is not None and run.board.side == run.pool.side:  # not on a curriculum's boards
        ratings = pool_rating(matches, run.pool)
        metrics["eval/pool_elo"] = float(ratings.ratings[-1])
        metrics["eval/pool_elo_low"] = float(ratings.lower[-1])
        metrics["eval/pool_elo_high"] = float(ratings.upper[-1])
    if cfg.eval.truth:
        metrics.update(truth_metrics(agent, run.evaluator, run.board))
    return metrics


def tag_name(spec: str) -> str:
    """An agent spec as a TensorBoard tag word: ``uct:32`` -> ``uct_32``."""
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in spec)


def _closing_matches(run: _Run, reporter: Reporter) -> dict[str, Any]:
    """``eval.final_games`` games against each of ``eval.final_opponents``, colours
    alternated, swap allowed; from the start set (as ratings are) unless the only opponent is
    random play. Returns ``{spec: MatchResult}``."""
    cfg, board = run.cfg, run.board
    opponents = cfg.eval.final_opponents
    starts = () if set(opponents) == {"random"} else (run.starts or load_starts(board))
    agent = _match_agent(run, seed=cfg.seed, label="trained")
    matches = evaluate(
        agent, board, opponents=opponents, num_games=cfg.eval.final_games, seed=cfg.seed,
        starts=starts, progress=True,
    )  # fmt: skip
    for spec, match in matches.items():
        tag = f"eval/final_win_rate_vs_{tag_name(spec)}"  # once, even when played again
        reporter.scalar(tag, match.win_rate, run.counters["iteration"])
        low, high = match.interval
        print(
            f"final match vs {spec}, {match.games} games (both colours, swap allowed"
            f"{', from the start set' if starts else ''}): won {match.wins} = "
            f"{match.win_rate:.1%} (95% interval {low:.1%}..{high:.1%})",
            flush=True,
        )
        print(match, flush=True)
    return matches


def _to_yaml(config: dict) -> str:
    from omegaconf import OmegaConf  # comes with Hydra; only the YAML writer is used

    return OmegaConf.to_yaml(OmegaConf.create(config))
