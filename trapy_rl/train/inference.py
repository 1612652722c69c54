"""One inference server for many self-play processes: their searches' leaves in one net call.

Shapes: n positions of one request, N of one net call (the requests it gathered), C planes,
H x W grid, A actions.

A self-play process's search calls its evaluator once per step with the leaves of all its
games. With an `InferenceServer` the processes hold no net: each calls the server through a
`ServerEvaluator`, and the server waits until ``num_clients`` requests have arrived, or
``max_wait_s`` after the first of them, then evaluates all of them in one call of its net and
answers each with its own rows. On a GPU that is one large batch instead of many small ones,
and the self-play processes' CPUs are left to the search; the learner can share the GPU.

- **Answers** equal each process's own call of the same net, up to the rounding of a larger
  batch (a test holds them within 1e-5 on the CPU, and one process's games identical).
- **Weights** come from the learner, as an object-store reference inside a list
  (`load_weights`, once a version, as `trapy_rl.train.ray_selfplay` publishes them).
- **Counters** (`stats`): requests, net calls and positions, so the mean batch is known.

The server is a Ray actor (``asyncio``: one event loop gathers the requests; the net call
itself holds the loop, and requests that arrive meanwhile wait for the next call). This module
imports no Ray: `RaySelfPlay` makes the actor, and the client fetches its answers with the
``get`` it is given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.planes import encode_planes
from trapy_rl.nn.evaluator import NetEvaluator
from trapy_rl.nn.network import NetConfig, PolicyValueNet

__all__ = ["InferenceServer", "ServerEvaluator"]


class InferenceServer:
    """A net that answers the evaluations of ``num_clients`` processes in gathered batches
    (made a Ray actor by `RaySelfPlay`; see the module docstring).

    Args:
        model: the net's configuration; its weights come with `load_weights`.
        device: where the net runs (``auto``, ``cpu``, ``cuda[:i]``).
        num_clients: the requests a net call waits for (the self-play processes).
        max_wait_s: the longest the first request of a call waits for the others.
        net_options: `NetEvaluator`'s options (``compile``, ``bf16``, ...).
    """

    def __init__(
        self,
        model: NetConfig,
        *,
        device: str = "auto",
        num_clients: int = 1,
        max_wait_s: float = 0.002,
        net_options: dict[str, Any] | None = None,
    ) -> None:
        if num_clients < 1 or max_wait_s < 0:
            raise ValueError(f"num_clients >= 1, max_wait_s >= 0; got {num_clients}, {max_wait_s}")
        torch.set_num_threads(1)  # the server holds one CPU; on a GPU the device does the work
        self.evaluator = NetEvaluator(PolicyValueNet(model), device=device, **(net_options or {}))
        self.num_clients, self.max_wait_s = num_clients, max_wait_s
        self.version = -1
        # Requests waiting for the next net call: (planes [n, C, H, W], legal [n, A], answer).
        self._waiting: list[tuple[np.ndarray, np.ndarray, asyncio.Future]] = []
        self._calls = 0  # net calls made; a timer fires only for the call it was set for
        self._requests = self._positions = 0

    async def load_weights(self, weights: list, version: int) -> int:
        """Take the weights of ``version`` (``weights[0]``, a reference to a state dict);
        returns the version held."""
        if version != self.version:
            state = weights[0]
            if not isinstance(state, dict):  # an object-store reference: fetch it
                state = await state
            self.evaluator.net.load_state_dict(state)
            self.version = version
        return self.version

    async def evaluate(
        self, planes: np.ndarray, legal_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate planes [n, C, H, W] float32 with legal_mask [n, A] bool, in one net call
        with other requests; returns (logits [n, A] float32, illegal -inf; values [n]
        float32)."""
        answer = asyncio.get_running_loop().create_future()
        self._waiting.append((planes, legal_mask, answer))
        if len(self._waiting) >= self.num_clients:
            self._run()
        elif len(self._waiting) == 1:
            asyncio.get_running_loop().call_later(self.max_wait_s, self._run_late, self._calls)
        return await answer

    def _run_late(self, call: int) -> None:
        if call == self._calls and self._waiting:  # that call has not run yet
            self._run()

    def _run(self) -> None:
        """One net call on every waiting request; each gets its own rows."""
        waiting, self._waiting = self._waiting, []
        self._calls += 1
        sizes = [len(planes) for planes, _, _ in waiting]
        try:
            logits, values = self.evaluator.evaluate_planes(
                np.concatenate([planes for planes, _, _ in waiting]),
                np.concatenate([legal for _, legal, _ in waiting]),
            )
        except Exception as error:  # every waiting client gets the error, not a hang
            for _, _, answer in waiting:
                answer.set_exception(error)
            return
        self._requests += len(waiting)
        self._positions += sum(sizes)
        bounds = np.cumsum([0, *sizes])
        for (_, _, answer), start, stop in zip(waiting, bounds[:-1], bounds[1:]):
            answer.set_result((logits[start:stop], values[start:stop]))

    async def stats(self) -> dict[str, int]:
        """Requests answered, net calls made and positions evaluated since the start."""
        return {"requests": self._requests, "calls": self._calls, "positions": self._positions}


class ServerEvaluator:
    """An evaluator (``(batch, games) -> (logits, values)``, see `trapy_rl.nn.evaluator`)
    that asks an `InferenceServer` actor.

    Args:
        server: the server's Ray actor handle.
        get: Ray's ``ray.get`` (the caller's Ray: this module imports none).
    """

    def __init__(self, server: Any, get: Callable[[Any], Any]) -> None:
        self.server, self._get = server, get

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``games`` [n] int of ``batch``: logits [n, A] float32 (illegal -inf),
        values [n] float32."""
        games = np.asarray(games, dtype=np.intp)
        planes, legal = encode_planes(batch, games), batch.legal_mask()[games]
        return self._get(self.server.evaluate.remote(planes, legal))
