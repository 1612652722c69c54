"""TensorBoard points are written once, whatever stopped the processes before this start."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tiny import TINY_NET

from trapy_rl.train.report import Reporter, logged_points
from trapy_rl.train.settings import TrainConfig

TAG = "loss/total"


def reporter(run: Path, first_iteration: int) -> Reporter:
    cfg = TrainConfig(side=4, iterations=10, model=TINY_NET, run_dir=str(run)).replace(
        {"logger.progress": False}
    )
    return Reporter(run, cfg, first_iteration=first_iteration)


def log(report: Reporter, steps: range, value: float) -> None:
    for step in steps:
        losses = {"loss/policy": 0.0, "loss/value": 0.0}
        metrics = {TAG: value + step, **losses, "selfplay/moves_per_s": 1.0}
        report.log(metrics, {"iteration": step, "games": 0}, seconds=float(step))


def killed(report: Reporter) -> None:
    """What SIGKILL leaves: the points flushed so far, no closing (the writer's thread is
    stopped here only so that the test leaves none behind)."""
    report.writer.close()


def accumulated(run: Path) -> dict[int, list[float]]:
    """step -> values of TAG as TensorBoard's EventAccumulator reads the folder."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"scalars": 0}).Reload()
    steps: dict[int, list[float]] = {}
    for event in events.Scalars(TAG):
        steps.setdefault(event.step, []).append(event.value)
    return steps


def assert_each_point_once(run: Path) -> None:
    written = Counter(logged_points(run / "tensorboard"))
    assert written and max(written.values()) == 1, sorted(p for p, n in written.items() if n > 1)


def test_a_start_afresh_after_a_kill_before_the_first_checkpoint_begins_a_clean_log(tmp_path):
    for attempt in range(3):  # killed at iteration 5, 4 and 3, no checkpoint yet
        first = reporter(tmp_path, first_iteration=0)
        log(first, range(1, 6 - attempt), value=100.0 * attempt)
        killed(first)
    last = reporter(tmp_path, first_iteration=0)
    log(last, range(1, 4), value=1000.0)
    last.close()
    assert_each_point_once(tmp_path)
    assert accumulated(tmp_path) == {step: [1000.0 + step] for step in (1, 2, 3)}


def test_a_resumed_run_keeps_the_points_up_to_its_checkpoint_and_writes_the_rest_once(tmp_path):
    first = reporter(tmp_path, first_iteration=0)
    log(first, range(1, 7), value=0.0)  # the checkpoint was at 4; killed at 6
    killed(first)
    resumed = reporter(tmp_path, first_iteration=4)
    log(resumed, range(5, 9), value=100.0)
    resumed.close()
    assert_each_point_once(tmp_path)
    assert accumulated(tmp_path) == {
        **{step: [float(step)] for step in range(1, 5)},
        **{step: [100.0 + step] for step in range(5, 9)},
    }


def test_closing_matches_played_again_at_the_last_step_are_logged_once(tmp_path):
    """A finished run resumed as it is plays its closing matches again at its last step."""
    tag = "eval/final_win_rate_vs_random"
    first = reporter(tmp_path, first_iteration=0)
    log(first, range(1, 4), value=0.0)
    first.scalar(tag, 0.5, 3)
    first.close()
    again = reporter(tmp_path, first_iteration=3)
    again.scalar(tag, 0.75, 3)
    again.close()
    assert_each_point_once(tmp_path)
    assert Counter(logged_points(tmp_path / "tensorboard"))[(tag, 3)] == 1


def test_a_resumed_runs_event_file_sorts_after_the_ones_it_continues(tmp_path):
    """TensorBoard reads event files in name order, the name beginning with its second: a
    file made in the same second as the last one could sort first (its counter 10 before
    9), and the earlier file's points would then discard the new ones as out of order."""
    first = reporter(tmp_path, first_iteration=0)
    log(first, range(1, 3), value=0.0)
    first.close()
    resumed = reporter(tmp_path, first_iteration=2)
    log(resumed, range(3, 5), value=100.0)
    resumed.close()
    names = sorted(p.name for p in (tmp_path / "tensorboard").glob("*tfevents*"))
    assert len(names) == 2 and int(names[0].split(".")[3]) < int(names[1].split(".")[3])
    assert accumulated(tmp_path) == {1: [1.0], 2: [2.0], 3: [103.0], 4: [104.0]}
