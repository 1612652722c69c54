"""A run interrupted by signals at random moments finishes exactly as one that never stopped.

Each interruption starts ``trapy-train`` as its own process (resuming the run folder when it
holds a checkpoint), waits until it trains, sleeps a random time and sends a signal: SIGINT
and SIGTERM must end it at an iteration boundary with a checkpoint, exit 130/143 and print no
traceback; SIGKILL may strike anywhere, during checkpoint writes too. After the last signal
the run is taken to its end, and its final checkpoint must equal an uninterrupted run's bit for
bit (weights, optimiser, counters, replay window, games in progress), with every iteration's
TensorBoard point there once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from trapy_rl.train import load_checkpoint

ITERATIONS = 40
OVERRIDES = [
    "side=4", "model=tiny", "mcts.num_simulations=8", "selfplay.num_games=8",
    "selfplay.moves_per_iteration=10", "replay.min_size=16", "replay.train_ratio=1.0",
    "optim.batch_size=16", "eval.every=0", "eval.final_games=0", "checkpoint.every=3",
    "logger.progress=false", "threads=1", f"iterations={ITERATIONS}",
]  # fmt: skip


def start(run: Path) -> subprocess.Popen:
    resume = [f"resume={run}"] if list((run / "checkpoints").glob("*.pt")) else []
    command = [sys.executable, "-m", "trapy_rl.train.cli", *OVERRIDES, *resume]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [*command, f"hydra.run.dir={run}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def interrupt(run: Path, signum: int, delay: float) -> tuple[int, str]:
    """Start the run, wait until it trains (its run folder is announced), sleep ``delay``
    seconds and send ``signum``. Returns the exit code and everything it printed."""
    process = start(run)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("run folder:"):
            break
    time.sleep(delay)
    if process.poll() is None:
        process.send_signal(signum)
    lines.append(process.stdout.read())
    return process.wait(timeout=120), "".join(lines)


def finish(run: Path) -> str:
    process = start(run)
    output = process.communicate(timeout=300)[0]
    assert process.returncode == 0, output
    return output


def assert_same_state(a: dict, b: dict) -> None:
    assert a["counters"] == b["counters"]
    for key, tensor in a["model"]["state"].items():
        assert torch.equal(tensor, b["model"]["state"][key]), key
    assert a["learner"]["step"] == b["learner"]["step"]
    moments = a["learner"]["optimizer"]["state"], b["learner"]["optimizer"]["state"]
    for index, state in moments[0].items():
        for name, value in state.items():
            assert torch.equal(torch.as_tensor(value), torch.as_tensor(moments[1][index][name]))
    for key, value in a["replay"].items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(b["replay"][key]), key)
    np.testing.assert_array_equal(
        np.asarray(a["selfplay"]["history"]), np.asarray(b["selfplay"]["history"])
    )


def logged_steps(run: Path, tag: str = "loss/total") -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    return [event.step for event in events.Scalars(tag)]


def interrupted_run_matches_straight(tmp_path: Path, signals: list[int], seed: int) -> list[str]:
    straight = tmp_path / "straight"
    finish(straight)
    run = tmp_path / "interrupted"
    rng = np.random.default_rng(seed)
    outcomes = []
    for signum in signals:
        code, output = interrupt(run, signum, delay=float(rng.uniform(0.0, 1.5)))
        assert "Traceback" not in output, output
        if signum != signal.SIGKILL and code != 0:  # 0: it had finished before the signal
            assert code == 128 + signum, output
            # Before its first iteration the run stops at once, in one line, saving nothing.
            word = "interrupted" if signum == signal.SIGINT else "terminated"
            assert f"stopped by {signal.Signals(signum).name}" in output or output.endswith(
                f"trapy-train: {word}\n"
            ), output
        outcomes.append(f"{signal.Signals(signum).name}: exit {code}")
    finish(run)
    assert not list((run / "checkpoints").glob(".*.tmp"))
    a = load_checkpoint(straight / "checkpoints" / "latest.pt")
    b = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert a["counters"]["iteration"] == ITERATIONS
    assert_same_state(a, b)
    first_learning = logged_steps(straight)[0]
    assert logged_steps(run) == list(range(first_learning, ITERATIONS + 1))
    return outcomes


def test_sigint_sigterm_and_kill_then_resume_equal_an_uninterrupted_run(tmp_path):
    signals = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
    interrupted_run_matches_straight(tmp_path, signals, seed=0)


@pytest.mark.slow
def test_twenty_mixed_interrupts_leave_the_run_bit_identical(tmp_path):
    rng = np.random.default_rng(1)
    choices = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
    signals = [choices[i] for i in rng.integers(len(choices), size=20)]
    outcomes = interrupted_run_matches_straight(tmp_path, signals, seed=1)
    print("\n".join(outcomes))
