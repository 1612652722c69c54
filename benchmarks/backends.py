"""Self-play backends on side 10: moves per second in-process, in worker processes and on Ray
actors, and what a chunk costs to send through Ray.

Each backend is built from the composed default configuration (its net, freshly initialised,
its search and ``num_games``) as the training loop builds it (`make_selfplay_backend`), and
asked for ``moves_per_iteration`` moves at a time, the weights marked changed after each call
as the learner would (without the learning: these are self-play's own rates). The rate is the
moves delivered over the wall-clock of the calls after a warm-up one; the median of repeats.
Workers split ``num_games`` among themselves; each Ray actor plays ``num_games`` games of its
own. The Ray rows need the ``[ray]`` extra.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
import torch

from benchmarks.selfplay import default_config
from trapy_rl.game.board import Board
from trapy_rl.nn import NetEvaluator, PolicyValueNet
from trapy_rl.train.settings import TrainConfig
from trapy_rl.train.workers import make_selfplay_backend

BACKENDS = {
    "in-process": {},
    "1 worker": {"selfplay.num_workers": 1},
    "2 workers": {"selfplay.num_workers": 2},
    "1 Ray actor": {"selfplay.num_actors": 1},
    "2 Ray actors": {"selfplay.num_actors": 2},
}


def _rate(config: TrainConfig, calls: int, repeats: int) -> float:
    torch.manual_seed(0)
    net = PolicyValueNet(config.model)
    board = Board(config.side)
    backend = make_selfplay_backend(net, NetEvaluator(net), board, config)
    try:
        backend.play(config.selfplay.moves_per_iteration, seed=[0])  # start-up, warm-up
        rates = []
        for repeat in range(repeats):
            start, moves = time.perf_counter(), 0
            for call in range(calls):
                result = backend.play(config.selfplay.moves_per_iteration, seed=[repeat, call])
                moves += result.stats.moves
                backend.weights_changed()
            rates.append(moves / (time.perf_counter() - start))
        return statistics.median(rates)
    finally:
        backend.close()


def _ray_chunk_cost(config: TrainConfig, repeats: int) -> tuple[float, int]:
    """Median seconds of one actor call that returns a side-10 chunk of one iteration (a
    request and its answer through the object store, no play), and the chunk's bytes."""
    import ray

    from trapy_rl.train.replay import Samples

    board = Board(config.side)
    n = config.selfplay.num_games * config.selfplay.moves_per_iteration
    height, width = board.grid_shape
    rng = np.random.default_rng(0)
    from trapy_rl.game.planes import NUM_PLANES

    planes = (rng.random((n, NUM_PLANES, height, width)) < 0.3).astype(np.float32)
    policies = rng.dirichlet(np.ones(board.num_actions), size=n).astype(np.float32)
    chunk = Samples(planes, policies, np.ones(n, np.float32)).packed()
    size = sum(v.nbytes for v in chunk.values() if isinstance(v, np.ndarray))

    @ray.remote(num_cpus=1)
    class Echo:
        def chunk(self, payload):
            return payload

    started = not ray.is_initialized()
    if started:
        os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
        ray.init(
            num_cpus=1,
            include_dashboard=False,
            configure_logging=False,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",  # the loopback address only
        )
    try:
        echo = Echo.remote()
        reference = ray.put(chunk)
        ray.get(echo.chunk.remote(reference))  # start-up
        seconds = []
        for _ in range(repeats):
            start = time.perf_counter()
            ray.get(echo.chunk.remote(reference))
            seconds.append(time.perf_counter() - start)
        return statistics.median(seconds), size
    finally:
        if started:
            ray.shutdown()


def run(quick: bool) -> list[dict]:
    base = default_config()
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, base.threads))  # the training process's threads
    try:
        return _rows(base, quick)
    finally:
        torch.set_num_threads(threads)


def _rows(base: TrainConfig, quick: bool) -> list[dict]:
    calls, repeats = (2, 1) if quick else (6, 3)
    try:
        import ray  # noqa: F401

        has_ray = True
    except ImportError:
        has_ray = False
    rows = []
    for name, changes in BACKENDS.items():
        if "Ray" in name and not has_ray:
            continue
        config = base.replace(changes)
        rate = _rate(config, calls, repeats)
        note = (
            f"side {config.side}, {config.selfplay.num_games} games"
            f"{' per actor' if 'Ray' in name else ''}, {config.mcts.num_simulations} simulations"
        )
        rows.append({"name": f"self-play {name}", "value": rate, "unit": "moves/s", "note": note})
    if has_ray:
        seconds, size = _ray_chunk_cost(base, 5 if quick else 50)
        rows.append(
            {
                "name": "Ray round trip of one chunk",
                "value": 1000 * seconds,
                "unit": "ms",
                "note": f"{size / 1e3:.0f} kB packed (one actor's iteration, side {base.side})",
            }
        )
    return rows
