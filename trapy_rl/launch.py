"""Where every command starts: Ctrl-C and SIGTERM are one line and exit 130 or 143 from the
first moment on.

The console scripts of ``pyproject.toml`` point here (``trapy-train = "trapy_rl.launch:train"``,
...). A command's module imports torch, Hydra and the rest, seconds in which Python would answer
Ctrl-C with a traceback of the import in progress, and SIGTERM by dying without a word; the
launcher catches both before it imports the command, so that a signal during start-up, while
the command runs or while the interpreter shuts down prints ``<prog>: interrupted`` (SIGINT,
exit 130) or ``<prog>: terminated`` (SIGTERM, exit 143), nothing else.

While the command runs, Ctrl-C is Python's usual KeyboardInterrupt and SIGTERM raises
`trapy_rl.errors.Terminated`, a KeyboardInterrupt too (the training loop turns either into a
checkpoint at the end of the iteration, `trapy_rl.train.interrupt`); one that reaches the
launcher is reported by `trapy_rl.errors.reported`. Only the package's own import, before this
module runs (about a quarter of a second), is outside its reach.
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

from trapy_rl.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, reported

__all__ = ["COMMANDS", "launch", "raise_terminated"]

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
    """SIGINT or SIGTERM outside the command's own handling: say so and exit at once (nothing
    is half done: the command has not started, or has finished). ``os._exit``: no thread of
    a library half-way through its start is waited for or torn down under it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):  # closed, or a write interrupted mid-way
            pass
    word, code = _ENDINGS[signum]
    os.write(2, f"{prog}: {word}\n".encode())
    os._exit(code)


_ENDINGS = {
    signal.SIGINT: ("interrupted", EXIT_INTERRUPTED),
    signal.SIGTERM: ("terminated", EXIT_TERMINATED),
}


def raise_terminated(signum: int, frame: FrameType | None) -> None:
    """SIGTERM's handler while a command runs: `Terminated`, Ctrl-C's KeyboardInterrupt's kin."""
    raise Terminated


def launch(prog: str) -> int | None:
    """Run the command ``prog`` (a key of `COMMANDS`) with Ctrl-C and SIGTERM handled from
    start-up on.

    Returns what the command's ``main()`` returns: its exit code, or None.
    """
    quiet_exit = functools.partial(_leave, prog)
    # A process started with a signal ignored (SIGINT in a background job of a script) keeps it.
    ignored = {s for s in _ENDINGS if signal.getsignal(s) is signal.SIG_IGN}

    def on(signum: int, handler: Callable[[int, FrameType | None], Any]) -> None:
        if signum not in ignored:
            signal.signal(signum, handler)

    for signum in _ENDINGS:
        on(signum, quiet_exit)
    main = importlib.import_module(COMMANDS[prog]).main
    on(signal.SIGINT, signal.default_int_handler)
    on(signal.SIGTERM, raise_terminated)
    try:
        with reported(prog):
            return main()
    finally:
        for signum in _ENDINGS:  # shutdown: atexit handlers, threads
            on(signum, quiet_exit)


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
