"""Training throughput with 1, 2 and 4 Ray actors, and the learner's share of the time.

Each row is a real training run (`trapy_rl.train.train`) of the composed default configuration
on side 5 (its games end within two iterations, so their positions reach the replay window
within the run; a side-10 game takes longer than a short run) without the curriculum, its
self-play on ``n`` Ray actors of a Ray started on this
machine with ``n`` logical CPUs (more actors than cores oversubscribe them), for ``MINUTES`` of
training clock, no matches, no checkpoints but the last. From the second iteration on (the
first starts Ray and the actors):

- positions per second: the positions that entered the replay window over the iterations'
  wall-clock (the actors play while the learner learns; an iteration waits for ``n`` chunks);
- the learner's share: its training steps' seconds over the iterations' seconds. Near 1 the
  learner is the bottleneck: more actors add nothing, and the knobs that move it are
  ``replay.train_ratio`` (samples drawn per position: fewer steps per position) and
  ``optim.batch_size`` (fewer, larger steps for the same samples).

Run it: ``python scripts/bench.py ray_scaling`` (about 8 minutes; ``--quick``: side 4, two
short runs).
"""

from __future__ import annotations

import tempfile

from benchmarks.selfplay import default_config
from trapy_rl.train import train

SIDE, MINUTES = 5, 1.0

# name: (actors, other overrides): the scaling, then the learner's knobs at 4 actors.
RUNS = {
    "1 actor": (1, []),
    "2 actors": (2, []),
    "4 actors": (4, []),
    "4 actors, replay.train_ratio=1": (4, ["replay.train_ratio=1"]),
    "4 actors, optim.batch_size=512": (4, ["optim.batch_size=512", "replay.min_size=512"]),
}


def _measure(actors: int, overrides: list[str], *, quick: bool) -> tuple[float, float, int]:
    """(positions per second, the learner's share of the time, iterations measured)."""
    side, minutes = (4, 0.2) if quick else (SIDE, MINUTES)
    with tempfile.TemporaryDirectory() as run_dir:
        config = default_config(
            [
                f"side={side}", "curriculum=none", f"minutes={minutes}", "logger=none",
                "logger.progress=false", "eval.every=0", "eval.final_games=0",
                "checkpoint.every=0", "checkpoint.replay=false", "replay.capacity=200000",
                "memory_gb=8", "selfplay=ray", f"selfplay.num_actors={actors}",
                f"ray.num_cpus={actors}", f"run_dir={run_dir}", *overrides,
            ]
        )  # fmt: skip
        history = train(config).history
    measured = history[1:]
    positions = history[-1]["replay/size"] - history[0]["replay/size"]
    seconds = sum(h["perf/iteration_s"] for h in measured)
    learning = sum(h["perf/learn_s"] for h in measured)
    return positions / seconds, learning / seconds, len(measured)


def run(quick: bool) -> list[dict]:
    rows = []
    runs = dict(list(RUNS.items())[:2]) if quick else RUNS
    for name, (actors, overrides) in runs.items():
        rate, share, iterations = _measure(actors, overrides, quick=quick)
        note = f"learner {100 * share:.0f}% of the time, {iterations} iterations"
        rows.append({"name": f"training, {name}", "value": rate, "unit": "positions/s",
                     "note": note})  # fmt: skip
    return rows
