"""Self-play on Ray actors: the games of many cores, or many machines, feeding one learner.

`RaySelfPlay` is the self-play backend (see `trapy_rl.train.workers`) of
``selfplay.num_actors`` > 0 (``selfplay=ray``, extra ``[ray]``). Each `SelfPlayActor` is a Ray
actor with one CPU and one torch thread that holds its own net and its own ``num_games`` games
(a `SelfPlay`, as in-process), and answers ``play`` requests: play ``moves_per_iteration``
moves in every game, and return the finished games' positions as one compact chunk
(`Samples.packed`: bit-packed planes, float16 policies) with their records.

- **Weights** go into the object store once per version (``ray.put``). A request carries the
  reference inside a list, which Ray leaves unresolved, so an actor fetches the weights
  (``ray.get``) only when the version differs from the one it holds.
- **Back-pressure.** An actor has at most ``ray.max_in_flight`` requests queued, and a new one
  is sent only when an answer has been taken: at most num_actors * max_in_flight chunks exist
  at any time, however far the actors run ahead of the learner. With two or more in flight
  the actors play the next chunks while the learner learns from these (one weight version
  behind); the learner's ``replay.train_ratio`` caps how often a sample is reused, as with
  every backend.
- `play` returns as soon as ``num_actors`` answers have arrived, from any actors (``ray.wait``),
  so a slow actor or machine does not hold the learner up.
- **Faults.** An actor that dies (its process or its machine lost) is replaced by a new one
  with new games; what is lost is its games in progress and its unanswered requests.
- **Checkpoints.** `state_dict` takes in the answers in flight (the next `play` returns them)
  and asks every actor for its games in progress; `load_state_dict` hands them back (the same
  ``num_actors``). A resumed run lacks the chunks that were in flight at the checkpoint. An
  actor not yet running (a replacement waiting for a node with room) has no games to save: it
  is saved as None, starts new games on resume, and never holds a checkpoint up.
- **Placement.** An actor takes one CPU, and with ``ray.actor_resource`` one unit of that
  custom resource: actors go only to the nodes that offer it, as many as its units there
  (docs/cluster.md), spread over as many nodes as have room. A lost node's actors are
  replaced wherever the resources are free, or as soon as a node that offers them joins.
- **An inference server** (``ray.inference_device``): the actors hold no net and send their
  searches' leaves to one `InferenceServer` actor on that device (one CPU, and one GPU for
  ``cuda``), which evaluates the leaves of all actors in one net call; each new version of the
  weights is loaded into it before the requests that follow. A lost server ends the run (it
  resumes from its checkpoint).
- **Ray itself** is started on this machine (``ray.num_cpus``) unless ``ray.address`` names a
  cluster (``auto``, ``ray://host:port``), and shut down by `close` when this backend started it.

The order in which answers arrive depends on timing, so two runs with the same seed play the
same kind of games (their statistics agree; a test checks it), not the same games.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from typing import Any

import torch
from torch import nn

from trapy_rl.errors import MissingExtraError
from trapy_rl.game.board import Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.evaluator import NetEvaluator
from trapy_rl.nn.network import NetConfig, PolicyValueNet
from trapy_rl.train.inference import InferenceServer, ServerEvaluator
from trapy_rl.train.replay import Samples
from trapy_rl.train.selfplay import SelfPlay, SelfPlayResult, merge_results
from trapy_rl.train.settings import RaySettings, SelfPlaySettings

__all__ = ["RaySelfPlay", "SelfPlayActor", "import_ray"]

log = logging.getLogger(__name__)


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        MissingExtraError: when Ray is not installed (the ``[ray]`` extra).
    """
    try:
        import ray  # the ray extra: imported when self-play asks for actors
    except ImportError as error:
        raise MissingExtraError("ray", module="ray", needed_by="selfplay=ray") from error
    return ray


class SelfPlayActor:
    """One actor's net and games (made a Ray actor by `RaySelfPlay`).

    Args:
        model: the net's configuration; its weights come with the first request.
        side, search, settings, seed: as for `SelfPlay`.
        net_options: `NetEvaluator`'s options (``compile``, ``onnxruntime``).
        server: an `InferenceServer` actor that evaluates for this actor, which then holds no
            net of its own; None: the actor's own net on its CPU.
    """

    def __init__(
        self,
        model: NetConfig,
        side: int,
        search: SearchSettings,
        settings: SelfPlaySettings,
        seed: list[int],
        net_options: dict[str, bool] | None = None,
        server: Any = None,
    ) -> None:
        torch.set_num_threads(1)
        evaluator: NetEvaluator | ServerEvaluator
        if server is None:
            self.net: PolicyValueNet | None = PolicyValueNet(model)
            evaluator = NetEvaluator(self.net, device="cpu", **(net_options or {}))
        else:
            import ray  # the ray extra, in the actor's process

            self.net, evaluator = None, ServerEvaluator(server, ray.get)
        self.selfplay = SelfPlay(
            evaluator, Board(side), search=search, settings=settings, seed=seed
        )
        self.version = -1

    def play(
        self, weights: list, version: int, num_moves: int, seed: list[int], threshold: float
    ) -> tuple[dict, SelfPlayResult]:
        """Play ``num_moves`` moves in every game with the weights of ``version``
        (``weights[0]``, fetched only when the version is new); the finished games' packed
        samples, and the result without them (records and rates)."""
        if version != self.version and self.net is not None:
            import ray  # the ray extra, in the actor's process

            self.net.load_state_dict(ray.get(weights[0]))
            self.version = version
        self.selfplay.set_resign_threshold(threshold)
        result = self.selfplay.play(num_moves, seed=seed)
        return result.samples.packed(), dataclasses.replace(result, samples=None)

    def state_dict(self) -> dict:
        return self.selfplay.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.selfplay.load_state_dict(state)

    def pid(self) -> int:
        return os.getpid()


class RaySelfPlay:
    """Self-play on ``settings.num_actors`` Ray actors, each playing ``settings.num_games``
    games (see the module docstring).

    Args:
        net: the learner's net; a new version of its weights is published at the `play`
            after `weights_changed`.
        board: the board.
        search, settings: as for `SelfPlay` (``num_games`` games per actor).
        ray_settings: where Ray runs, how many requests an actor may have queued, the custom
            resource that places the actors, and the inference server's device.
        seed: actor i of generation g is seeded with ``[*seed, i, g]``.
        net_options: `NetEvaluator`'s options for the actors' nets (``compile``,
            ``onnxruntime``).

    Raises:
        MissingExtraError: without Ray installed.
    """

    def __init__(
        self,
        net: nn.Module,
        board: Board,
        *,
        search: SearchSettings,
        settings: SelfPlaySettings,
        ray_settings: RaySettings,
        seed: list[int],
        net_options: dict[str, bool] | None = None,
    ) -> None:
        ray = self._ray = import_ray()
        if settings.num_actors < 1:
            raise ValueError(f"num_actors must be >= 1, got {settings.num_actors}")
        self.started_ray = not ray.is_initialized()
        if self.started_ray:
            # Ray's future default, and without its warning: a CPU run sets no GPU variables.
            os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
            local = ray_settings.address is None
            # A Ray of this machine listens on the loopback address only, never on the
            # machine's network interfaces; a cluster (address set) says its own addresses.
            loopback = {"_node_ip_address": "127.0.0.1"} if local else {}
            # This machine's one node offers the actors' resource, as many units as CPUs.
            offered = ray_settings.actor_resource if local else None
            resources = {offered: ray_settings.num_cpus or os.cpu_count()} if offered else None
            ray.init(
                # "local": a Ray of its own even where another runs on this machine (a `ray
                # start` cluster, another run's), which Ray's default would join instead.
                address="local" if local else ray_settings.address,
                num_cpus=ray_settings.num_cpus if local else None,
                resources=resources,
                **loopback,
                include_dashboard=False,
                configure_logging=False,
                log_to_driver=False,
            )
        self.net, self.board = net, board
        self.num_actors = settings.num_actors
        self.max_in_flight = ray_settings.max_in_flight
        resource = ray_settings.actor_resource
        if resource and resource not in ray.cluster_resources():
            log.warning(
                "no node of the Ray cluster offers the resource %r: the self-play actors wait "
                "for one to join (ray start --resources='{\"%s\": N}')", resource, resource
            )  # fmt: skip
        # SPREAD: the actors go to as many nodes as have room, so that one lost node takes few.
        self._make = ray.remote(
            num_cpus=1, resources={resource: 1} if resource else None, scheduling_strategy="SPREAD"
        )(SelfPlayActor)
        self._args = (net.config, board.side, search, settings)
        self._seed, self._net_options = list(seed), net_options
        self.server = None  # the inference server's actor, with ray.inference_device
        if ray_settings.inference_device:
            self.server = self._new_server(ray_settings.inference_device, net_options)
        self._generation = [0] * self.num_actors
        self._running: list[Any] = [None] * self.num_actors  # done once actor i runs
        self.actors = [self._new_actor(i) for i in range(self.num_actors)]
        self.replaced = 0  # actors replaced after a fault, over the run
        self._in_flight: dict[Any, int] = {}  # request -> actor index
        # Answers taken in by state_dict, returned by the next play: (packed samples, the rest).
        self._answers: list[tuple[dict, SelfPlayResult]] = []
        self._requests = 0
        self._version = -1
        self._weights: Any = None  # the reference of the current version
        self._stale = True
        self._threshold = float(settings.resign_threshold)
        self._returned = time.perf_counter()  # when `play` last returned

    # ------------------------------------------------------------------ actors
    def _new_server(self, device: str, net_options: dict[str, bool] | None) -> Any:
        """The inference server: one CPU, and for ``cuda[:i]`` the GPU that Ray assigns it
        (the only one it sees); the actors' net options (ONNX Runtime, compile) only on the
        CPU."""
        gpu = device.startswith("cuda")
        make = self._ray.remote(num_cpus=1, num_gpus=1 if gpu else 0)
        return make(InferenceServer).remote(
            self.net.config,
            device="cuda" if gpu else device,
            num_clients=self.num_actors,
            net_options=net_options if device == "cpu" else None,
        )

    def _new_actor(self, index: int) -> Any:
        seed = [*self._seed, index, self._generation[index]]
        actor = self._make.remote(*self._args, seed, self._net_options, self.server)
        self._running[index] = actor.__ray_ready__.remote()
        return actor

    def _running_actors(self) -> set[int]:
        """The actors placed on a node and built (a replacement may wait for a node)."""
        done, _ = self._ray.wait(self._running, num_returns=len(self._running), timeout=0)
        ready = set(done)
        return {i for i, ref in enumerate(self._running) if ref in ready}

    def _replace(self, index: int) -> None:
        """A new actor, with new games, in place of actor ``index``, which died."""
        self._ray.kill(self.actors[index], no_restart=True)
        for request in [r for r, i in self._in_flight.items() if i == index]:
            del self._in_flight[request]  # lost with their actor
        self._generation[index] += 1
        self.actors[index] = self._new_actor(index)
        self.replaced += 1

    def _publish(self) -> None:
        if self._stale:
            weights = {key: value.detach().cpu() for key, value in self.net.state_dict().items()}
            self._weights = self._ray.put(weights)
            self._version += 1
            self._stale = False
            if self.server is not None:  # loaded before any request of this version
                self._ray.get(self.server.load_weights.remote([self._weights], self._version))

    def _fill(self, num_moves: int, seed: list[int]) -> None:
        """Queue requests until every actor has ``max_in_flight``."""
        queued = [0] * self.num_actors
        for index in self._in_flight.values():
            queued[index] += 1
        for index, actor in enumerate(self.actors):
            for _ in range(self.max_in_flight - queued[index]):
                self._requests += 1
                request = actor.play.remote(
                    [self._weights], self._version, num_moves,
                    [*seed, index, self._requests], self._threshold,
                )  # fmt: skip
                self._in_flight[request] = index

    def _take(self, requests: list) -> list[tuple[dict, SelfPlayResult]]:
        """The answers of ``requests`` (done); a dead actor's request is dropped and the actor
        replaced."""
        answers = []
        for request in requests:
            index = self._in_flight.pop(request, None)
            if index is None:  # its actor was replaced meanwhile
                continue
            try:
                answers.append(self._ray.get(request))
            except self._ray.exceptions.RayActorError:  # its process or machine died
                self._replace(index)
        return answers

    # ------------------------------------------------------------------ the backend
    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult:
        """The first ``num_actors`` answers to arrive (see the module docstring). Its rates
        are over the time since the previous call returned: the actors play meanwhile."""
        seed = [int(s) for s in seed] if isinstance(seed, (list, tuple)) else [int(seed)]
        self._publish()
        answers, self._answers = self._answers, []
        faults = self.replaced
        while len(answers) < self.num_actors:
            self._fill(num_moves, seed)
            wanted = min(self.num_actors - len(answers), len(self._in_flight))
            done, _ = self._ray.wait(list(self._in_flight), num_returns=wanted)
            answers += self._take(done)
            if self.replaced - faults > 2 * self.num_actors:
                raise RuntimeError(
                    f"self-play actors keep dying: {self.replaced - faults} replaced in one "
                    "iteration (see the Ray logs, e.g. out of memory)"
                )
        self._fill(num_moves, seed)  # the actors play on while the learner learns
        now = time.perf_counter()
        seconds, self._returned = now - self._returned, now
        parts = [
            dataclasses.replace(rest, samples=Samples.unpacked(packed)) for packed, rest in answers
        ]
        return merge_results(parts, self.board, seconds=seconds)

    def weights_changed(self) -> None:
        self._stale = True

    def set_resign_threshold(self, threshold: float) -> None:
        self._threshold = float(threshold)

    def _drain(self) -> None:
        """Take in every answer in flight of the running actors (kept for the next `play`)."""
        while True:
            running = self._running_actors()
            waiting = [r for r, index in self._in_flight.items() if index in running]
            if not waiting:
                return
            done, _ = self._ray.wait(waiting, num_returns=len(waiting))
            self._answers += self._take(done)

    def state_dict(self) -> dict:
        """The games in progress of each actor; None for one not yet running, or lost now
        (it is replaced)."""
        self._drain()
        running = self._running_actors()
        asked = {i: self.actors[i].state_dict.remote() for i in running}
        states: list[dict | None] = [None] * self.num_actors
        for index, request in asked.items():
            try:
                states[index] = self._ray.get(request)
            except self._ray.exceptions.RayActorError:  # lost since: its games with it
                self._replace(index)
        return {"actors": states}

    def load_state_dict(self, state: dict) -> None:
        actors = state.get("actors")
        if actors is None or len(actors) != self.num_actors:
            found = "no Ray actors" if actors is None else f"{len(actors)} Ray actors"
            raise ValueError(
                f"the saved self-play state is of {found}; this run has {self.num_actors} "
                "(resume with the same selfplay.num_actors)"
            )
        self._drain()
        self._answers = []  # played from the games being replaced
        loads = [a.load_state_dict.remote(s) for a, s in zip(self.actors, actors) if s is not None]
        self._ray.get(loads)

    def close(self) -> None:
        for actor in [*self.actors, *([self.server] if self.server is not None else [])]:
            self._ray.kill(actor, no_restart=True)
        self.actors, self._in_flight, self.server = [], {}, None
        if self.started_ray and self._ray.is_initialized():
            self._ray.shutdown()
