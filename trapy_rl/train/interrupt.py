"""Stopping a run cleanly: SIGINT (Ctrl-C) and SIGTERM end it at the next iteration boundary.

A signal in the middle of an iteration would leave the games advanced and the replay window
filled under the previous iteration's counters, so a checkpoint written then could not resume
exactly. `StopRequest` turns the first SIGINT or SIGTERM into a flag that the loop reads
between iterations: the iteration finishes, a checkpoint is saved at the boundary, and the
resumed run equals an uninterrupted one. A second Ctrl-C stops at once (KeyboardInterrupt),
saving nothing beyond the last checkpoint. Before the first iteration (the run being built,
a checkpoint being read) there is nothing a checkpoint would add: a signal stops at once there
too, KeyboardInterrupt for SIGINT and `trapy_rl.errors.Terminated` for SIGTERM, which the
command line reports in one line (exit 130 or 143). Schedulers and ``docker stop`` send SIGTERM
and then, after a grace period, SIGKILL; an iteration takes seconds, well inside the usual grace
period.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, TracebackType

from trapy_rl.errors import Terminated

__all__ = ["StopRequest"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """A context in which SIGINT and SIGTERM stop the run: at once until `defer` is called
    (KeyboardInterrupt, `Terminated`), then at the next iteration boundary.

    Attributes:
        signal: the name of the first signal received after `defer` (``"SIGINT"``,
            ``"SIGTERM"``), or None.

    The handlers are installed only in the main thread (Python delivers signals there); in
    another thread the context does nothing. The previous handlers come back on exit.
    """

    def __init__(self) -> None:
        self.signal: str | None = None
        self._deferring = False
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

    def defer(self) -> None:
        """From now on a signal only asks for a stop at the next boundary (the loop starts)."""
        self._deferring = True

    @property
    def exit_code(self) -> int:
        """The shell's code for a process ended by the signal received (128 + its number)."""
        return 128 + int(signal.Signals[self.signal]) if self.signal else 0

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if not self._deferring:  # nothing done yet that a checkpoint would keep
            raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt
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
