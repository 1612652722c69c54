"""Self-play on Ray actors: the same games as in-process, bounded queues, faults, checkpoints,
and Ctrl-C leaving no Ray process behind."""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs the 'ray' extra")

from tiny import loopback_ray, seeded_tiny_net  # noqa: E402

from trapy_rl.game.board import Board  # noqa: E402
from trapy_rl.mcts.settings import SearchSettings  # noqa: E402
from trapy_rl.nn import NetEvaluator  # noqa: E402
from trapy_rl.train.ray_selfplay import RaySelfPlay  # noqa: E402
from trapy_rl.train.selfplay import SelfPlay  # noqa: E402
from trapy_rl.train.settings import RaySettings, SelfPlaySettings  # noqa: E402
from trapy_rl.train.workers import LocalSelfPlay  # noqa: E402

SIDE = 4
SEARCH = SearchSettings(num_simulations=8)
SETTINGS = SelfPlaySettings(
    num_games=16, num_actors=1, resign_min_moves=0, resign_false_rate=0.0, temperature_moves=4
)


@pytest.fixture(scope="module")
def local_ray():
    with loopback_ray(num_cpus=2):
        yield


def backend(net, **changes) -> RaySelfPlay:
    settings = dataclasses.replace(SETTINGS, **changes)
    return RaySelfPlay(
        net, Board(SIDE), search=SEARCH, settings=settings, ray_settings=RaySettings(), seed=[0]
    )


def records_until(play, games: int) -> list:
    records, calls = [], 0
    while len(records) < games:
        records += play(seed=[calls]).records
        calls += 1
    return records


def test_one_actor_plays_the_games_of_the_in_process_backend(local_ray) -> None:
    """Same net, same settings: game length, swap rate and blue's wins agree within noise."""
    net = seeded_tiny_net()
    local = SelfPlay(NetEvaluator(net), Board(SIDE), search=SEARCH, settings=SETTINGS, seed=[0])
    remote = backend(net)
    try:
        ours = records_until(lambda seed: local.play(12, seed=seed), 250)
        theirs = records_until(lambda seed: remote.play(12, seed=seed), 250)
    finally:
        remote.close()

    def compare(values_a: np.ndarray, values_b: np.ndarray) -> None:
        spread = math.sqrt(values_a.var() / len(values_a) + values_b.var() / len(values_b))
        assert abs(values_a.mean() - values_b.mean()) < 4 * spread + 1e-9

    for measure in (
        lambda r: len(r.moves),
        lambda r: float(Board(SIDE).swap_action in r.moves[1:2]),  # swapped
        lambda r: float(r.winner == 1),
    ):
        compare(np.array([measure(r) for r in ours]), np.array([measure(r) for r in theirs]))


def test_requests_are_bounded_weights_put_once_a_version_and_samples_arrive_whole(
    local_ray,
) -> None:
    remote = backend(seeded_tiny_net(), num_actors=2)
    try:
        for i in range(4):
            result = remote.play(10, seed=[i])
            assert len(remote._in_flight) <= remote.num_actors * remote.max_in_flight
            assert remote._version == 0  # weights unchanged: published once
            np.testing.assert_allclose(result.samples.policies.sum(axis=1), 1.0, atol=3e-3)
            assert set(np.unique(result.samples.planes)) <= {0.0, 1.0}
        remote.weights_changed()
        remote.play(10, seed=[9])
        assert remote._version == 1
    finally:
        remote.close()


@pytest.mark.slow  # ~30 s: an actor's restart by Ray
def test_a_killed_actor_is_replaced_and_the_run_goes_on(local_ray) -> None:
    remote = backend(seeded_tiny_net(), num_actors=2)
    try:
        remote.play(10, seed=[0])
        pid = ray.get(remote.actors[0].pid.remote())
        os.kill(pid, signal.SIGKILL)
        games = sum(len(remote.play(10, seed=[i]).records) for i in range(1, 6))
        assert remote.replaced == 1 and games > 0
        assert ray.get(remote.actors[0].pid.remote()) != pid
    finally:
        remote.close()


def test_games_in_progress_go_into_checkpoints_and_come_back(local_ray) -> None:
    remote = backend(seeded_tiny_net())
    try:
        remote.play(5, seed=[0])
        state = remote.state_dict()
        assert len(state["actors"]) == 1 and not remote._in_flight
        remote.load_state_dict(state)
        assert remote.play(5, seed=[1]).stats.moves > 0
        with pytest.raises(ValueError, match="2 Ray actors; this run has 1"):
            remote.load_state_dict({"actors": [state["actors"][0]] * 2})
    finally:
        remote.close()
    local = LocalSelfPlay(None)
    with pytest.raises(ValueError, match="of 1 Ray actors; this run plays in-process"):
        local.load_state_dict(state)


@pytest.mark.slow  # ~25 s of Ray starting and stopping; in-process: test_interrupts.py
def test_ctrl_c_saves_and_leaves_no_ray_process(tmp_path) -> None:
    run = tmp_path / "run"
    command = [
        sys.executable, "-m", "trapy_rl.train.cli", "debug=smoke", "side=4", "iterations=1000",
        "selfplay=ray", "ray.num_cpus=2", "logger=none", f"hydra.run.dir={run}",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not list((run / "checkpoints").glob("ckpt_*.pt")):
        assert time.monotonic() < deadline and process.poll() is None, "no iteration finished"
        time.sleep(0.5)
    # Ray's processes (its server, raylet and actors) descend from the training process.
    ray_processes = psutil.Process(process.pid).children(recursive=True)
    assert len(ray_processes) >= 3
    os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output
    assert "stopped by SIGINT" in output
    _, alive = psutil.wait_procs(ray_processes, timeout=30)
    assert not alive, [p.cmdline()[:2] for p in alive]
