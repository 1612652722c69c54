"""Self-play on a Ray cluster of several nodes on this machine: actors placed by a node
resource, a node removed mid-run (its actors replaced on the nodes left, nothing learned lost)
and a node added back. Every node binds to the loopback address only."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest
import torch

ray = pytest.importorskip("ray", reason="the Ray backend needs the 'ray' extra")

from ray._private import ray_constants  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from tiny import TINY_NET  # noqa: E402

from trapy_rl.game.board import Board  # noqa: E402
from trapy_rl.mcts.settings import SearchSettings  # noqa: E402
from trapy_rl.nn import PolicyValueNet  # noqa: E402
from trapy_rl.nn.checkpoint import load_checkpoint  # noqa: E402
from trapy_rl.train import train  # noqa: E402
from trapy_rl.train.ray_selfplay import RaySelfPlay  # noqa: E402
from trapy_rl.train.settings import RaySettings, SelfPlaySettings, TrainConfig  # noqa: E402

LOOPBACK = "127.0.0.1"
RESOURCE = "selfplay"  # the self-play nodes' type; the head offers CPUs but none of it
# A lost node is noticed within about 2 s (Ray's default is about 30 s).
HEALTH_CHECKS = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 4,
}


def add_selfplay_node(cluster: Cluster, actors: int):
    """A node of the self-play type: room for ``actors`` actors (a CPU and a unit each)."""
    return cluster.add_node(num_cpus=actors, resources={RESOURCE: actors}, node_ip_address=LOOPBACK)


@pytest.fixture
def cluster(monkeypatch):
    """A head node (the learner's: two CPUs, no self-play resource) with the driver joined;
    every Ray process of the cluster ended at teardown."""
    # Ray sends a driver that joins 127.0.0.1 to the machine's network address instead
    # (resolve_ip_for_localhost), where no node of this cluster listens: as for a Ray started
    # on this machine alone, the driver's own address is the loopback one.
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
    monkeypatch.setenv("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 2,
            "node_ip_address": LOOPBACK,
            "include_dashboard": False,
            "_system_config": HEALTH_CHECKS,
        },
    )
    try:
        # The driver joins before any other node: it then uses the head's raylet (all the
        # nodes share one address), and a node the test removes is never the driver's.
        ray.init(
            address=cluster.address,
            _node_ip_address=LOOPBACK,
            configure_logging=False,
            log_to_driver=False,
        )
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        ours = psutil.Process().children(recursive=True)
        names = ("raylet", "gcs_server")
        leftover = [p for p in ours if p.is_running() and p.name() in names]
        _, alive = psutil.wait_procs(leftover, timeout=30)
        assert not alive, [p.name() for p in alive]


def connect(cluster: Cluster) -> None:
    """Wait until the nodes added have joined."""
    cluster.wait_for_nodes()


def actor_nodes(remote: RaySelfPlay) -> list[str]:
    """The node id of each actor (waits for actors not yet placed)."""
    return ray.get(
        [actor.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id())
         for actor in remote.actors]
    )  # fmt: skip


def play_until(remote: RaySelfPlay, done, *, limit_s: float = 120) -> int:
    """Play iterations until ``done(positions played)``; returns the positions played."""
    positions, started, call = 0, time.monotonic(), 0
    while not done(positions):
        assert time.monotonic() - started < limit_s, "the run did not recover in time"
        positions += len(remote.play(6, seed=[call]).samples)
        call += 1
    return positions


def test_actors_go_only_to_a_node_that_offers_their_resource(cluster) -> None:
    """The fast version (make test): the head's free CPUs are passed over."""
    node = add_selfplay_node(cluster, 1)
    connect(cluster)
    remote = RaySelfPlay(
        PolicyValueNet(TINY_NET),
        Board(3),
        search=SearchSettings(num_simulations=2),
        settings=SelfPlaySettings(num_games=2, num_actors=1, temperature_moves=4),
        ray_settings=RaySettings(actor_resource=RESOURCE),
        seed=[0],
    )
    try:
        assert actor_nodes(remote) == [node.node_id]
        assert play_until(remote, lambda positions: positions > 0) > 0
    finally:
        remote.close()


@pytest.mark.slow
def test_actors_follow_the_resource_a_lost_node_is_replaced_and_one_added_back(cluster) -> None:
    first = add_selfplay_node(cluster, 3)
    second = add_selfplay_node(cluster, 2)
    connect(cluster)
    torch.manual_seed(0)
    net = PolicyValueNet(TINY_NET)
    remote = RaySelfPlay(
        net,
        Board(4),
        search=SearchSettings(num_simulations=4),
        settings=SelfPlaySettings(num_games=4, num_actors=4, temperature_moves=4),
        ray_settings=RaySettings(actor_resource=RESOURCE),
        seed=[0],
    )
    try:
        nodes = actor_nodes(remote)
        # Spread over the self-play nodes, none on the head's free CPUs.
        assert sorted(nodes.count(n.node_id) for n in (first, second)) == [2, 2]
        play_until(remote, lambda positions: positions > 0)

        cluster.remove_node(second)  # its two actors die with it
        # One replacement fits on the first node's third unit; the other waits for a node,
        # and the run goes on without it.
        play_until(remote, lambda _: remote.replaced == 2)
        play_until(remote, lambda positions: positions > 0)

        third = add_selfplay_node(cluster, 2)  # a node joins: the waiting actor goes there
        nodes = actor_nodes(remote)
        assert second.node_id not in nodes
        assert sorted(nodes.count(n.node_id) for n in (first, third)) == [1, 3]
        play_until(remote, lambda positions: positions > 0)
    finally:
        remote.close()


@pytest.mark.slow
def test_training_loses_a_node_mid_run_and_learns_on(cluster, make_config, tmp_path) -> None:
    """The loop on a cluster: a node removed after the second checkpoint and another added two
    iterations later; the learner's steps and replay window keep growing, every iteration is
    run, and the last checkpoint loads."""
    add_selfplay_node(cluster, 3)
    second = add_selfplay_node(cluster, 2)
    connect(cluster)
    cfg = make_config(
        tmp_path,
        iterations=12,
        minutes=0.0,
        clock="wall",
        logger={"name": "none", "progress": False},
        **{
            "selfplay.num_actors": 4,
            "selfplay.num_games": 4,
            "selfplay.moves_per_iteration": 6,
            "replay.capacity": 100_000,
            "ray.actor_resource": RESOURCE,
        },
    )
    checkpoints = Path(cfg.run_dir) / "checkpoints"
    outcome: dict = {}

    def run() -> None:  # the learner trains in a thread: Ray adds nodes from the main one
        try:
            outcome["result"] = train(cfg)
        except BaseException as error:  # raised again below, in the test's thread
            outcome["error"] = error

    trainer = threading.Thread(target=run, daemon=True)
    trainer.start()

    def wait_for(iteration: int) -> None:
        while not (checkpoints / f"ckpt_{iteration:06d}.pt").exists():
            assert trainer.is_alive(), outcome
            time.sleep(0.1)

    wait_for(2)
    cluster.remove_node(second)
    wait_for(4)
    add_selfplay_node(cluster, 2)
    trainer.join(timeout=300)
    if "error" in outcome:
        raise outcome["error"]
    result = outcome["result"]
    assert result.iterations == cfg.iterations
    sizes = [h["replay/size"] for h in result.history]
    steps = [h.get("optim/steps", 0.0) for h in result.history]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[2]
    assert steps == sorted(steps) and steps[-1] > steps[2] > 0
    payload = load_checkpoint(result.checkpoint)
    assert payload["counters"]["iteration"] == cfg.iterations
    assert len(payload["selfplay"]["actors"]) == 4
    net = PolicyValueNet(cfg.model)
    net.load_state_dict(payload["model"]["state"])


def test_a_bad_actor_resource_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^ray\.actor_resource must be a custom resource"):
        TrainConfig().replace({"selfplay.num_actors": 2, "ray.actor_resource": "CPU"})
    with pytest.raises(ValueError, match=r"^ray\.actor_resource and ray\.inference_device need"):
        TrainConfig().replace({"ray.actor_resource": RESOURCE})
