"""The inference server on the CPU, no mocks: the answers of several self-play processes
gathered into one net call equal each process's own call of the net, one process's games are
the games of its own net, and training runs with its actors served by it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the inference server needs the 'ray' extra")

from tiny import TINY_NET, loopback_ray, seeded_tiny_net  # noqa: E402

from trapy_rl.game.board import Board  # noqa: E402
from trapy_rl.game.planes import encode_planes  # noqa: E402
from trapy_rl.mcts.settings import SearchSettings  # noqa: E402
from trapy_rl.nn import NetEvaluator, PolicyValueNet  # noqa: E402
from trapy_rl.train import train  # noqa: E402
from trapy_rl.train.inference import InferenceServer, ServerEvaluator  # noqa: E402
from trapy_rl.train.selfplay import SelfPlay  # noqa: E402
from trapy_rl.train.settings import SelfPlaySettings  # noqa: E402

SIDE = 4


@pytest.fixture(scope="module")
def local_ray():
    with loopback_ray(num_cpus=4):
        yield


def start_server(net: PolicyValueNet, num_clients: int, max_wait_s: float = 0.002):
    server = ray.remote(num_cpus=1)(InferenceServer).remote(
        TINY_NET, device="cpu", num_clients=num_clients, max_wait_s=max_wait_s
    )
    state = {key: value.detach().cpu() for key, value in net.state_dict().items()}
    assert ray.get(server.load_weights.remote([ray.put(state)], 0)) == 0
    return server


class Client:
    """A self-play process's side of the server: its own positions, its own requests."""

    def __init__(self, server) -> None:
        self.evaluator = ServerEvaluator(server, ray.get)

    def evaluate(self, batch, rounds: int) -> list:
        return [self.evaluator(batch, np.arange(batch.num_games)) for _ in range(rounds)]


# Ray's workers cannot import this test module: its classes travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def test_gathered_answers_equal_each_process_calling_the_net(local_ray, random_positions) -> None:
    net = seeded_tiny_net()
    own = NetEvaluator(net, device="cpu")
    server = start_server(net, num_clients=3, max_wait_s=0.5)
    try:
        clients = [ray.remote(num_cpus=1)(Client).remote(server) for _ in range(3)]
        ray.get([client.__ray_ready__.remote() for client in clients])  # all started
        sizes = [5, 1, 12]  # requests of different sizes in one call
        batches = [random_positions(Board(SIDE), n, seed)[0] for seed, n in enumerate(sizes)]
        answers = ray.get([c.evaluate.remote(b, 4) for c, b in zip(clients, batches)])
        for batch, rounds in zip(batches, answers):
            games = np.arange(batch.num_games)
            logits, values = own.evaluate_planes(
                encode_planes(batch, games), batch.legal_mask()[games]
            )
            for got_logits, got_values in rounds:
                assert got_logits.shape == logits.shape and got_values.shape == values.shape
                np.testing.assert_allclose(got_logits, logits, atol=1e-5)
                np.testing.assert_allclose(got_values, values, atol=1e-5)
        stats = ray.get(server.stats.remote())
        assert stats["requests"] == 12 and stats["positions"] == 4 * sum(sizes)
        assert stats["calls"] < stats["requests"]  # requests shared net calls
    finally:
        ray.kill(server)


@pytest.mark.slow  # ~20 s of Ray workers; the answers' equality above runs in make test
def test_one_process_plays_the_games_of_its_own_net(local_ray) -> None:
    """The same seeds, the same net: the games through the server are the games in-process."""
    net = seeded_tiny_net()
    server = start_server(net, num_clients=1)
    settings = SelfPlaySettings(num_games=6, temperature_moves=4, resign_min_moves=0)
    search = SearchSettings(num_simulations=6)
    try:
        plays = [
            SelfPlay(evaluator, Board(SIDE), search=search, settings=settings, seed=[0])
            for evaluator in (NetEvaluator(net, device="cpu"), ServerEvaluator(server, ray.get))
        ]
        records = [[], []]
        for call in range(3):
            for i, play in enumerate(plays):
                records[i] += play.play(6, seed=[call]).records
        assert records[0] and [r.moves for r in records[0]] == [r.moves for r in records[1]]
    finally:
        ray.kill(server)


@pytest.mark.slow
def test_training_with_actors_served_by_one_server(local_ray, make_config, tmp_path) -> None:
    cfg = make_config(
        tmp_path,
        iterations=3,
        clock="wall",
        logger={"name": "none", "progress": False},
        **{
            "selfplay.num_actors": 2,
            "selfplay.num_games": 4,
            "ray.inference_device": "cpu",
        },
    )
    result = train(cfg)
    assert result.iterations == 3
    assert sum(h["replay/size"] > 0 for h in result.history) >= 1


@pytest.mark.gpu
@pytest.mark.slow
def test_a_gpu_learner_and_server_fed_by_cpu_actors(local_ray, make_config, tmp_path) -> None:
    """Where CUDA is: the learner and the inference server on the GPU, the actors on CPUs."""
    cfg = make_config(
        tmp_path,
        iterations=3,
        device="cuda",
        clock="wall",
        logger={"name": "none", "progress": False},
        **{
            "selfplay.num_actors": 2,
            "selfplay.num_games": 4,
            "ray.inference_device": "cuda",
        },
    )
    assert train(cfg).iterations == 3
