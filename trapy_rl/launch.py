"""Where every command starts: Ctrl-C is one line and exit 130 from the first moment on.

The console scripts of ``pyproject.toml`` point here (``trapy-train = "trapy_rl.launch:train"``,
...). A command's module imports torch, Hydra and the rest, seconds in which Python would answer
Ctrl-C with a traceback of the import in progress; the launcher catches SIGINT before it imports
the command, so that an interrupt during start-up, while the command runs or while the
interpreter shuts down prints ``<prog>: interrupted`` and exits with 130, nothing else.

While the command runs, Ctrl-C is Python's usual KeyboardInterrupt (the training loop turns
it into a checkpoint at the end of the iteration, `trapy_rl.train.interrupt`); one that
reaches the launcher is reported by `trapy_rl.errors.reported`. Only the package's own import,
before this module runs (about a quarter of a second), is outside its reach.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from trapy_rl.errors import EXIT_INTERRUPTED, reported

__all__ = ["COMMANDS", "launch"]

COMMANDS = {
    "trapy-train": "trapy_rl.train.cli",
    "trapy-eval": "trapy_rl.eval.cli",
    "trapy-gtp": "trapy_rl.gtp",
    "trapy-play": "trapy_rl.play",
    "trapy-openings": "trapy_rl.analysis.cli",
    "trapy-export": "trapy_rl.nn.onnx",
    "trapy-web": "trapy_rl.web.server",
    "trapy-solve": "trapy_rl.solve.cli",
}
"""Each command's name -> the module whose ``main()`` it runs."""


def _leave(prog: str, signum: int, frame: FrameType | None) -> None:
    """SIGINT outside the command's own handling: say so and exit at once (nothing is half
    done: the command has not started, or has finished)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):  # closed, or a write interrupted mid-way
            pass
    os.write(2, f"{prog}: interrupted\n".encode())
    os._exit(EXIT_INTERRUPTED)


def launch(prog: str) -> int | None:
    """Run the command ``prog`` (a key of `COMMANDS`) with Ctrl-C handled from start-up on.

    Returns what the command's ``main()`` returns: its exit code, or None.
    """
    quiet_exit = functools.partial(_leave, prog)
    # A process started with SIGINT ignored (a background job of a script) keeps it so.
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN

    def on_sigint(handler: Callable[[int, FrameType | None], Any]) -> None:
        if not ignored:
            signal.signal(signal.SIGINT, handler)

    on_sigint(quiet_exit)
    main = importlib.import_module(COMMANDS[prog]).main
    on_sigint(signal.default_int_handler)
    try:
        with reported(prog):
            return main()
    finally:
        on_sigint(quiet_exit)  # shutdown: atexit handlers, threads


def train() -> int | None:
    return launch("trapy-train")


def evaluate() -> int | None:
    return launch("trapy-eval")


def gtp() -> int | None:
    return launch("trapy-gtp")


def play() -> int | None:
    return launch("trapy-play")


def openings() -> int | None:
    return launch("trapy-openings")


def export() -> int | None:
    return launch("trapy-export")


def web() -> int | None:
    return launch("trapy-web")


def solve() -> int | None:
    return launch("trapy-solve")
