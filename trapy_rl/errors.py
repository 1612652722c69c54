"""How the command lines report a user's mistake: one line, never a traceback.

The toolkit raises ``ValueError`` (and its subclasses: `CheckpointError`, `IllegalMoveError`,
the settings' checks, agent specs, the configuration's composition errors as
`trapy_rl.config.check_command_line` words them) for bad input, with a message that names the
key, file or cell, and the file system raises ``OSError`` (a missing folder, a full disk). A
command line runs its work inside `reported`: those become the one line ``<prog>: error:
<message>`` on stderr and a non-zero exit; any other exception is a bug in the toolkit and keeps
its traceback. ``HYDRA_FULL_ERROR=1`` or ``TRAPY_DEBUG=1`` shows the traceback of any error.
Ctrl-C exits with `EXIT_INTERRUPTED` and the line ``<prog>: interrupted``, SIGTERM with
`EXIT_TERMINATED` and ``<prog>: terminated``, at any moment from start-up on
(`trapy_rl.launch` runs every command, and turns SIGTERM into `Terminated`).

An optional interface used without its package raises `MissingExtraError`, a
``ModuleNotFoundError`` that is also a ``ValueError``, so that it too is one line naming the
extra to install.

    $ trapy-train seed=-1
    trapy-train: error: seed must be >= 0, got -1
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_OS_ERROR",
    "EXIT_TERMINATED",
    "EXIT_USER_ERROR",
    "ArgumentParser",
    "MissingExtraError",
    "Terminated",
    "one_line",
    "reported",
]

EXIT_USER_ERROR, EXIT_OS_ERROR, EXIT_INTERRUPTED, EXIT_TERMINATED = 2, 1, 130, 143
_DEBUG_VARIABLES = ("HYDRA_FULL_ERROR", "TRAPY_DEBUG")


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler, ``docker stop``, ``kill``): a KeyboardInterrupt, so that whatever
    stops cleanly on Ctrl-C stops so on it too, that exits with `EXIT_TERMINATED`."""


class MissingExtraError(ModuleNotFoundError, ValueError):
    """An optional dependency is not installed: the message names the extra that installs it.

    Args:
        extra: the project's extra, such as ``"openspiel"`` (``pip install 'trapy-rl[openspiel]'``).
        module: the module that failed to import, such as ``"pyspiel"``.
        needed_by: what needs it, for the message.
    """

    def __init__(self, extra: str, *, module: str, needed_by: str) -> None:
        super().__init__(
            f"{needed_by} needs the {extra!r} extra: pip install 'trapy-rl[{extra}]'",
            name=module,
        )


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser for the commands that take options (``trapy-gtp``, ``trapy-play``,
    ``trapy-export``, ``trapy-web``): a mistake on the command line is one line with where to
    find the usage, not the usage and then the message."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_USER_ERROR, f"{self.prog}: error: {message} ({self.prog} --help shows the usage)\n"
        )


def _debugging() -> bool:
    return any(os.environ.get(name) == "1" for name in _DEBUG_VARIABLES)


def one_line(error: BaseException) -> str:
    """The error's message on one line (its type's name when it has none)."""
    text = " ".join(str(error).split())  # messages quoting user input may hold newlines
    return text or type(error).__name__


@contextmanager
def reported(prog: str) -> Iterator[None]:
    """Turn a user error raised in the block into one line on stderr and ``SystemExit``.

    ``ValueError`` exits with `EXIT_USER_ERROR`, ``OSError`` and ``MemoryError`` (the
    machine's limit, met below the toolkit's own caps) with `EXIT_OS_ERROR`, Ctrl-C
    (KeyboardInterrupt) with `EXIT_INTERRUPTED`, SIGTERM (`Terminated`) with
    `EXIT_TERMINATED`. With ``HYDRA_FULL_ERROR=1`` or
    ``TRAPY_DEBUG=1`` in the environment the exception propagates with its traceback.
    """
    try:
        yield
    except KeyboardInterrupt as stop:
        if _debugging():
            raise
        terminated = isinstance(stop, Terminated)
        print(
            f"{prog}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr, flush=True
        )
        raise SystemExit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED) from None
    except (ValueError, OSError, MemoryError) as error:
        if _debugging():
            raise
        message = one_line(error)
        if isinstance(error, MemoryError):
            message = f"out of memory{': ' + message if str(error) else ''}"
        print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
        code = EXIT_USER_ERROR if isinstance(error, ValueError) else EXIT_OS_ERROR
        raise SystemExit(code) from None
