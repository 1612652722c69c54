"""Whether the web board's server is ready: the nets of its first opponent and evaluator
prepared (read, exported to ONNX Runtime, run once) in a background thread, with progress.

The server answers from its first moment (the page, the games, ``GET /api/ready``); a request
that needs a net waits (`Readiness.wait`) until the preparation has ended instead of finding a
net half made. A spec that fails to prepare is no reason to stay unready: the game that uses
it reports its error, in one line, as it would without the preparation.

>>> readiness = Readiness([], side=3)
>>> readiness.start(); readiness.payload()["ready"]
True
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from trapy_rl.web.opponents import prepare

__all__ = ["Readiness"]

_POLL_S = 0.05  # between two looks of a waiting request


class Readiness:
    """The preparation of ``specs`` on ``side``, one after the other, in a thread.

    Args:
        specs: agent specs (empty ones are skipped).
        side: the board side they are prepared for.
        prepare_one: ``(spec, side) -> None`` (default `trapy_rl.web.opponents.prepare`).
    """

    def __init__(
        self,
        specs: list[str],
        side: int,
        *,
        prepare_one: Callable[[str, int], None] = prepare,
    ) -> None:
        self.specs = list(dict.fromkeys(spec for spec in specs if spec))
        self.side = side
        self._prepare = prepare_one
        self._done = 0
        self._step: str | None = None
        self._started = time.monotonic()
        self._ended: float | None = None
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Begin the preparation (once); with nothing to prepare, ready at once."""
        with self._lock:
            if self._thread is not None or self._finished.is_set():
                return
            if not self.specs:
                self._finished.set()
                return
            self._started = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="trapy-web-prepare", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        for spec in self.specs:
            with self._lock:
                self._step = spec
            try:
                self._prepare(spec, self.side)
            except Exception:  # reported by the game that uses the spec, in one line
                pass
            with self._lock:
                self._done += 1
        with self._lock:
            self._step = None
            self._ended = time.monotonic()
        self._finished.set()

    @property
    def ready(self) -> bool:
        return self._finished.is_set()

    def payload(self) -> dict[str, Any]:
        """``ready``, ``done`` and ``total`` (specs prepared, of all), ``step`` (the spec being
        prepared, or null) and ``seconds`` (the preparation's, so far or in all)."""
        with self._lock:
            end = self._ended if self._ended is not None else time.monotonic()
            return {
                "ready": self._finished.is_set(),
                "done": len(self.specs) if self._finished.is_set() else self._done,
                "total": len(self.specs),
                "step": self._step,
                "seconds": round(end - self._started, 1),
            }

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """Wait in this thread until ready; whether it is."""
        return self._finished.wait(timeout)

    async def wait(self) -> None:
        """Wait without holding a thread until ready (the request that needs a net); starts
        the preparation if nothing has."""
        self.start()
        while not self._finished.is_set():
            await asyncio.sleep(_POLL_S)
