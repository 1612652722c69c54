"""The worker side of the worker/learner boundary: who plays the self-play games.

A backend takes weights in and hands positions and game records out:

    backend.play(num_moves, seed=...) -> SelfPlayResult   # samples, records, rates
    backend.weights_changed()                             # the learner updated the net
    backend.state_dict() / load_state_dict(state)         # the games in progress
    backend.close()

`LocalSelfPlay` plays in the training process with the learner's own net (``num_workers=0``).
`ProcessSelfPlay` splits the games among ``num_workers`` worker processes (spawned, one torch
thread each), sends them the weights when they changed and gathers their results; the learner
waits while they play, so a run is as reproducible as with one process (its games differ from
the in-process run's: each worker draws from its own seeds). `trapy_rl.train.ray_selfplay`
plays on Ray actors, on this machine or a cluster (``selfplay.num_actors``).
"""

from __future__ import annotations

import dataclasses
import signal
import time
import traceback
from typing import Protocol

import torch
import torch.multiprocessing as mp
from torch import nn

from trapy_rl.game.board import Board
from trapy_rl.mcts.search import Evaluator
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.evaluator import NetEvaluator
from trapy_rl.nn.network import NetConfig, PolicyValueNet
from trapy_rl.train.selfplay import SelfPlay, SelfPlayResult, merge_results
from trapy_rl.train.settings import SelfPlaySettings, TrainConfig

__all__ = ["LocalSelfPlay", "ProcessSelfPlay", "SelfPlayBackend", "make_selfplay_backend"]


class SelfPlayBackend(Protocol):
    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult: ...
    def weights_changed(self) -> None: ...
    def set_resign_threshold(self, threshold: float) -> None: ...
    def state_dict(self) -> dict: ...
    def load_state_dict(self, state: dict) -> None: ...
    def close(self) -> None: ...


class LocalSelfPlay:
    """Self-play in this process; the evaluator holds the learner's net, so it is always
    current and `weights_changed` has nothing to do."""

    def __init__(self, selfplay: SelfPlay):
        self.selfplay = selfplay

    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult:
        return self.selfplay.play(num_moves, seed=seed)

    def weights_changed(self) -> None:
        pass

    def set_resign_threshold(self, threshold: float) -> None:
        self.selfplay.set_resign_threshold(threshold)

    def state_dict(self) -> dict:
        return self.selfplay.state_dict()

    def load_state_dict(self, state: dict) -> None:
        for key, what in (("workers", "worker processes"), ("actors", "Ray actors")):
            if key in state:
                raise ValueError(
                    f"the saved self-play state is of {len(state[key])} {what}; this run "
                    f"plays in-process (resume with the same selfplay.num_{key})"
                )
        self.selfplay.load_state_dict(state)

    def close(self) -> None:
        pass


def _worker_main(
    connection,
    model: NetConfig,
    side: int,
    search: SearchSettings,
    settings: SelfPlaySettings,
    seed: list[int],
    threads: int,
    net_options: dict[str, bool] | None = None,
) -> None:
    """A worker process: builds its net and games, then serves play/state/load requests."""
    # Ctrl-C and SIGTERM reach the whole process group: they are the learner's to handle,
    # which finishes the iteration (needing the workers) and then closes them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    torch.set_num_threads(max(1, threads))
    net = PolicyValueNet(model)
    evaluator = NetEvaluator(net, device="cpu", **(net_options or {}))
    selfplay = SelfPlay(evaluator, Board(side), search=search, settings=settings, seed=seed)
    while True:
        try:
            command, *args = connection.recv()
        except (EOFError, OSError):  # the learner is gone: nothing left to serve
            return
        try:
            if command == "play":
                weights, num_moves, seed, threshold = args
                if weights is not None:
                    net.load_state_dict(weights)
                if threshold is not None:
                    selfplay.set_resign_threshold(threshold)
                reply = selfplay.play(num_moves, seed=seed)
            elif command == "state":
                reply = selfplay.state_dict()
            elif command == "load":
                selfplay.load_state_dict(args[0])
                reply = None
            else:  # "close"
                connection.send(("ok", None))
                return
        except Exception:  # hand the error to the learner, which raises it
            connection.send(("error", traceback.format_exc()))
            continue
        connection.send(("ok", reply))


class ProcessSelfPlay:
    """Self-play in ``settings.num_workers`` spawned processes, each playing its share of the
    games.

    Args:
        net: the learner's net; its weights are sent to the workers before a `play` that
            follows `weights_changed`.
        board: the board.
        search, settings, seed: as for `SelfPlay`; ``settings.num_games`` is the total, split
            evenly, and worker i's seed is ``[*seed, i]``.
        threads: torch threads per worker.
        net_options: `NetEvaluator`'s options for the workers' nets (``compile``,
            ``onnxruntime``).
    """

    def __init__(
        self,
        net: nn.Module,
        board: Board,
        *,
        search: SearchSettings,
        settings: SelfPlaySettings,
        seed: list[int],
        threads: int = 1,
        net_options: dict[str, bool] | None = None,
    ):
        num_games, num_workers = settings.num_games, settings.num_workers
        if not 1 <= num_workers <= num_games:
            raise ValueError(
                f"num_workers must be between 1 and num_games={num_games}, got {num_workers}"
            )
        self.net = net
        self.board = board
        self.num_workers = num_workers
        shares = [
            num_games // num_workers + (i < num_games % num_workers) for i in range(num_workers)
        ]
        context = mp.get_context("spawn")
        self._connections = []
        self._processes = []
        for i, share in enumerate(shares):
            ours, theirs = context.Pipe()
            share_settings = dataclasses.replace(settings, num_games=share, num_workers=0)
            process = context.Process(
                target=_worker_main,
                args=(theirs, net.config, board.side, search, share_settings, [*seed, i]),
                kwargs={"threads": threads, "net_options": net_options},
                daemon=True,
                name=f"selfplay-{i}",
            )
            process.start()
            self._connections.append(ours)
            self._processes.append(process)
        self._weights_sent = False
        self._threshold: float | None = None  # sent with the next play
        self._unanswered = [0] * num_workers  # requests whose replies were not read

    def _receive(self, i: int):
        try:
            status, reply = self._connections[i].recv()
        except (EOFError, OSError) as error:
            raise RuntimeError(f"self-play worker {i} died ({error!r})") from error
        self._unanswered[i] -= 1
        return status, reply

    def _ask(self, messages: list[tuple]) -> list:
        # Replies left over from an interrupted request (Ctrl-C) are read and dropped first.
        for i in range(self.num_workers):
            while self._unanswered[i] > 0:
                self._receive(i)
        for i, (connection, message) in enumerate(zip(self._connections, messages)):
            connection.send(message)
            self._unanswered[i] += 1
        replies = []
        for i in range(self.num_workers):
            status, reply = self._receive(i)
            if status == "error":
                raise RuntimeError(f"self-play worker {i} failed:\n{reply}")
            replies.append(reply)
        return replies

    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult:
        start = time.perf_counter()
        weights = None
        if not self._weights_sent:
            weights = {key: value.detach().cpu() for key, value in self.net.state_dict().items()}
            self._weights_sent = True
        seeds = [[*_as_list(seed), i] for i in range(self.num_workers)]
        threshold, self._threshold = self._threshold, None
        results = self._ask([("play", weights, num_moves, s, threshold) for s in seeds])
        return merge_results(results, self.board, seconds=time.perf_counter() - start)

    def weights_changed(self) -> None:
        self._weights_sent = False

    def set_resign_threshold(self, threshold: float) -> None:
        self._threshold = float(threshold)

    def state_dict(self) -> dict:
        return {"workers": self._ask([("state",)] * self.num_workers)}

    def load_state_dict(self, state: dict) -> None:
        workers = state.get("workers")
        if workers is None or len(workers) != self.num_workers:
            found = (
                f"{len(workers)} workers"
                if workers is not None
                else f"{len(state['actors'])} Ray actors"
                if "actors" in state
                else "in-process self-play"
            )
            raise ValueError(
                f"the saved self-play state is of {found}; this run has "
                f"{self.num_workers} workers (resume with the same selfplay.num_workers)"
            )
        self._ask([("load", worker) for worker in workers])

    def close(self) -> None:
        for connection in self._connections:
            try:
                connection.send(("close",))
                connection.recv()
            except (OSError, EOFError):
                pass
        for process in self._processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
        self._connections, self._processes = [], []


def _as_list(seed: int | list[int]) -> list[int]:
    return [int(s) for s in seed] if isinstance(seed, (list, tuple)) else [int(seed)]


def make_selfplay_backend(
    net: nn.Module, evaluator: Evaluator, board: Board, config: TrainConfig
) -> SelfPlayBackend:
    """The backend the config asks for: ``selfplay.num_actors`` Ray actors
    (`trapy_rl.train.ray_selfplay`), ``selfplay.num_workers`` processes, else this process."""
    seed = [config.seed, 0]
    if config.selfplay.num_actors > 0:
        from trapy_rl.train.ray_selfplay import RaySelfPlay  # the ray extra: only when asked

        return RaySelfPlay(
            net,
            board,
            search=config.mcts,
            settings=config.selfplay,
            ray_settings=config.ray,
            seed=seed,
            net_options=config.net_options(),
        )
    if config.selfplay.num_workers > 0:
        return ProcessSelfPlay(
            net,
            board,
            search=config.mcts,
            settings=config.selfplay,
            seed=seed,
            threads=max(1, config.threads),
            net_options=config.net_options(),
        )
    return LocalSelfPlay(
        SelfPlay(evaluator, board, search=config.mcts, settings=config.selfplay, seed=seed)
    )
