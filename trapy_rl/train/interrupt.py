"""Stopping a run cleanly: SIGINT (Ctrl-C) and SIGTERM end it at the next iteration boundary.

A signal in the middle of an iteration would leave the games advanced and the replay window
filled under the previous iteration's counters, so a checkpoint written then could not resume
exactly. `StopRequest` turns the first SIGINT or SIGTERM into a flag that the loop reads
between iterations: the iteration finishes, a checkpoint is saved at the boundary, and the
resumed run equals an uninterrupted one. A second Ctrl-C stops at once (KeyboardInterrupt),
saving nothing beyond the last checkpoint. Schedulers and ``docker stop`` send SIGTERM and then,
after a grace period, SIGKILL; an iteration takes seconds, well inside the usual grace period.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, TracebackType

__all__ = ["StopRequest"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """A context in which SIGINT and SIGTERM ask the run to stop at the next boundary.

    Attributes:
        signal: the name of the first signal received (``"SIGINT"``, ``"SIGTERM"``), or None.

    The handlers are installed only in the main thread (Python delivers signals there); in
    another thread the context does nothing. The previous handlers come back on exit.
    """

    def __init__(self) -> None:
        self.signal: str | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    @property
    def exit_code(self) -> int:
        """The shell's code for a process ended by the signal received (128 + its number)."""
        return 128 + int(signal.Signals[self.signal]) if self.signal else 0

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is not None:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            return
        self.signal = signal.Signals(signum).name
        print(
            f"\n{self.signal}: finishing this iteration, then saving a checkpoint "
            "(Ctrl-C again stops at once, without saving)",
            file=sys.stderr,
            flush=True,
        )
