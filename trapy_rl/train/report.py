"""What a training run reports as it goes: TensorBoard scalars, a progress bar or log lines.

Tags are namespaced: ``selfplay/...`` (the games), ``loss/...`` and ``optim/...`` (the
learner), ``replay/...``, ``perf/...`` (seconds) and ``eval/...`` (matches).

**Every point once.** A process that stops without a checkpoint (SIGKILL, a crash, a power
cut) leaves points in the event files that the next start logs again: a run that resumes
from the checkpoint of iteration i repeats every step after i, one that starts afresh in the
folder repeats them all. TensorBoard's ``purge_step`` only writes a marker that some readers
honour (TensorBoard's own ``EventAccumulator``); the points stay in the files, and a reader of
the files (a script, another viewer) sees each once per start. So a start removes them from
the files first (`prune_events`): every event of a step after the iteration it starts from
goes, and a start afresh begins from an empty log. The closing matches are logged at the last
iteration's step, after its checkpoint; a run resumed there plays them again, and their
points are written only where the kept log lacks them (`Reporter.scalar`).
"""

from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from trapy_rl.train.selfplay import SelfPlayStats
from trapy_rl.train.settings import TrainConfig

__all__ = ["Reporter", "logged_points", "prune_events"]

log = logging.getLogger(__name__)


class Reporter:
    """The run's TensorBoard writer (``logger.name``) and progress display (``logger.progress``).

    Args:
        run_dir: the run folder; event files go into its ``tensorboard/``.
        cfg: the run's configuration.
        first_iteration: the iteration this process starts at (after a resume), for the ETA.
        first_seconds: the training clock (``cfg.clock``) it starts at; with a budget of
            ``minutes`` the progress bar counts that clock's minutes, else iterations.
    """

    def __init__(
        self, run_dir: Path, cfg: TrainConfig, *, first_iteration: int, first_seconds: float = 0.0
    ) -> None:
        self.total = cfg.iterations
        self.budget = 60.0 * cfg.minutes  # seconds, 0 for none
        self.writer = None
        checkpoints = run_dir / "checkpoints"
        print(f"run folder: {run_dir}\n  checkpoints: {checkpoints}", flush=True)
        self._first_step = first_iteration
        self._kept_at_start: set[str] = set()  # tags the kept log holds at first_iteration
        if cfg.logger.name == "tensorboard":
            from torch.utils.tensorboard import SummaryWriter  # a second to import: when used

            # Points a stopped process logged after its last checkpoint (or, starting afresh,
            # an earlier attempt's) are removed from the files (see the module docstring);
            # purge_step marks the restart for TensorBoard too.
            log_dir = run_dir / "tensorboard"
            self._kept_at_start = prune_events(log_dir, first_iteration)
            _wait_to_sort_last(log_dir)
            self.writer = SummaryWriter(log_dir=str(log_dir), purge_step=first_iteration + 1)
            print(f"  tensorboard: tensorboard --logdir {run_dir / 'tensorboard'}", flush=True)
        self.bar = None
        if cfg.logger.progress and first_iteration < cfg.iterations:
            if self.budget > 0:  # the clock ends the run: count its minutes
                unit = "CPU min" if cfg.clock == "cpu" else "min"
                self.bar = tqdm(
                    total=cfg.minutes, initial=min(first_seconds / 60, cfg.minutes),
                    desc="training", bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                    "{n:.1f}/{total:.1f} " + unit + " [{elapsed}<{remaining}{postfix}]",
                )  # fmt: skip
            else:
                self.bar = tqdm(
                    total=cfg.iterations, initial=first_iteration, unit="it", desc="training"
                )
        self._started, self._first = time.perf_counter(), first_iteration
        self._first_clock = first_seconds
        self._warned: dict[str, int] = {}  # warning kind -> the iteration last shown

    @staticmethod
    def iteration_metrics(
        stats: SelfPlayStats, reports: list[dict[str, float]], steps: int, replay_size: int
    ) -> dict[str, float]:
        """The scalars of one iteration: its self-play statistics and learner reports."""
        metrics = {
            "selfplay/games_per_s": stats.games_per_s,
            "selfplay/moves_per_s": stats.moves_per_s,
            "selfplay/simulations_per_s": stats.simulations_per_s,
            "selfplay/game_length": stats.mean_game_length,
            "selfplay/blue_win_rate": stats.blue_win_rate,
            "selfplay/swap_rate": stats.swap_rate,
            "selfplay/resign_rate": stats.resign_rate,
            "selfplay/false_resign_rate": stats.false_resign_rate,
            "replay/size": float(replay_size),
        }
        if reports:
            for key in ("policy", "value", "ownership", "total", "entropy"):
                if key in reports[0]:
                    metrics[f"loss/{key}"] = float(np.mean([r[key] for r in reports]))
            metrics["optim/lr"] = reports[-1]["lr"]
            metrics["optim/steps"] = float(steps)
        return metrics

    def log(self, metrics: dict[str, float], counters: dict[str, Any], seconds: float) -> None:
        """Write ``metrics`` at step ``counters["iteration"]`` and advance the progress;
        ``seconds`` is the training clock; the ETA (wall-clock) counts down a budget too, at
        the rate the clock has run in this process (CPU time runs slower on a loaded machine)."""
        step = counters["iteration"]
        if self.writer is not None:
            for tag, value in metrics.items():
                if value is not None and not (isinstance(value, float) and math.isnan(value)):
                    self.writer.add_scalar(tag, value, step)
            self.writer.flush()
        elapsed = time.perf_counter() - self._started
        eta = elapsed / max(1, step - self._first) * (self.total - step)
        if self.budget > 0:
            wall_per_clock = elapsed / max(seconds - self._first_clock, 1e-9)
            eta = min(eta, max(0.0, self.budget - seconds) * wall_per_clock)
        line = _summary_line(counters, metrics, self.total, eta)
        if self.bar is not None:
            self.bar.set_postfix_str(line, refresh=False)
            if self.budget > 0:
                self.bar.update(min(seconds / 60, self.bar.total) - self.bar.n)
            else:
                self.bar.update(1)
        else:
            print(line, flush=True)

    def scalar(self, tag: str, value: float, step: int) -> None:
        """Log one point, unless the log kept from before this start holds ``tag`` at
        ``step`` already (the closing matches of a run resumed at its last iteration)."""
        if self.writer is None or (step == self._first_step and tag in self._kept_at_start):
            return
        self.writer.add_scalar(tag, value, step)

    def warn(self, warnings: dict[str, str], iteration: int, *, every: int = 20) -> None:
        """Print each warning (to the log and above the progress bar), each kind at most once
        every ``every`` iterations so that a collapsed run does not drown its own log."""
        for kind, text in warnings.items():
            if iteration - self._warned.get(kind, -every) < every:
                continue
            self._warned[kind] = iteration
            log.warning("iteration %d: %s", iteration, text)
            line = f"warning (iteration {iteration}): {text}"
            if self.bar is not None:
                self.bar.write(line)
            else:
                print(line, flush=True)

    def close_progress(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def close(self) -> None:
        self.close_progress()
        if self.writer is not None:
            self.writer.close()
            print(f"logs: tensorboard --logdir {self.writer.log_dir}", flush=True)
            self.writer = None


def _wait_to_sort_last(log_dir: Path) -> None:
    """Wait out the second of the newest event file in ``log_dir``, if it is this one.

    TensorBoard reads a folder's event files in name order, and a name begins with the second
    it was made (``events.out.tfevents.SECOND.HOST.PID.COUNTER``). A run resumed within that
    second would tie, broken by the pid and a counter, where 10 sorts before 9: its points
    would be read first and the earlier file's would then discard them as out of order."""
    seconds = [int(p.name.split(".")[3]) for p in _event_files(log_dir) if p.name.count(".") >= 3
               and p.name.split(".")[3].isdigit()]  # fmt: skip
    if seconds:
        time.sleep(max(0.0, max(seconds) + 1 - time.time()))


def _event_files(log_dir: Path) -> list[Path]:
    return sorted(path for path in log_dir.glob("*tfevents*") if path.is_file())


def _events(path: Path):
    """(raw record, parsed event) of each complete record of an event file, in order."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2

    for record in RawEventFileLoader(str(path)).Load():
        yield record, event_pb2.Event.FromString(record)


def prune_events(log_dir: Path, last_step: int) -> set[str]:
    """Remove from the event files in ``log_dir`` every event of a step after ``last_step``;
    a file left with no point is deleted. Returns the tags of the points kept at
    ``last_step``.

    Each file is rewritten whole beside itself and renamed over it, so a stop in the middle
    leaves it as it was or pruned.
    """
    from tensorboard.summary.writer.record_writer import RecordWriter

    at_last: set[str] = set()
    for path in _event_files(log_dir) if log_dir.is_dir() else []:
        kept, dropped, points = [], 0, 0
        for record, event in _events(path):
            if event.step > last_step:
                dropped += 1
                continue
            kept.append(record)
            points += event.HasField("summary")
            if event.step == last_step:
                at_last.update(value.tag for value in event.summary.value)
        if not dropped:
            continue
        if not points:
            path.unlink()
            continue
        temporary = path.with_name(f".{path.name}.tmp")
        with temporary.open("wb") as file:
            writer = RecordWriter(file)
            for record in kept:
                writer.write(record)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    return at_last


def logged_points(log_dir: Path) -> list[tuple[str, int]]:
    """(tag, step) of every point in the event files of ``log_dir``, as often as written."""
    points = []
    for path in _event_files(log_dir) if log_dir.is_dir() else []:
        for _, event in _events(path):
            points.extend((value.tag, event.step) for value in event.summary.value)
    return points


def _summary_line(counters: dict, metrics: dict[str, float], total: int, eta: float) -> str:
    parts = [
        f"it {counters['iteration']}/{total}",
        f"eta {int(eta) // 60}:{int(eta) % 60:02d}",
        f"games {counters['games']}",
        f"{metrics['selfplay/moves_per_s']:.0f} moves/s",
    ]
    if "loss/total" in metrics:
        parts.append(
            f"loss {metrics['loss/total']:.3f} (p {metrics['loss/policy']:.3f} "
            f"v {metrics['loss/value']:.3f})"
        )
    for key, value in metrics.items():
        if key.startswith("eval/win_rate_vs_"):
            parts.append(f"vs {key.removeprefix('eval/win_rate_vs_')} {value:.0%}")
    if "eval/pool_elo" in metrics:
        low, high = metrics["eval/pool_elo_low"], metrics["eval/pool_elo_high"]
        parts.append(f"pool Elo {metrics['eval/pool_elo']:.0f} [{low:.0f}, {high:.0f}]")
    return ", ".join(parts)
