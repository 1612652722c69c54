"""``trapy-gtp``: a Go Text Protocol engine for Trap Y on stdin and stdout, playing with any
agent built from a spec string.

Run it as ``trapy-gtp AGENT_SPEC [--side N] [--seed S]`` or ``python -m trapy_rl.gtp ...``;
a controller (HexGui, a tournament script, a person at a terminal) talks to it over stdin and
stdout. The protocol, its commands and the choices made where Hex practice leaves room are
`trapy_rl.frontend.gtp_engine`'s (`GtpEngine`); this module reads the streams (`serve`):
memory stays bounded however long a line is, bytes that are not UTF-8 are refused as any
unknown word is, every response is flushed at once, and the engine ends at ``quit`` or at the
end of input.
"""

from __future__ import annotations

import io
import os
import re
import sys
from typing import BinaryIO, TextIO

from trapy_rl.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, ArgumentParser, Terminated
from trapy_rl.frontend.gtp_engine import MAX_LINE, GtpEngine, preprocess

__all__ = ["GtpEngine", "main", "serve"]

_SPACES = re.compile(" +")


def _read_command(reader: TextIO) -> str | None:
    """The next line of ``reader``, preprocessed with runs of spaces made one; None at the end.

    The line is read in pieces and at most ``MAX_LINE + 2`` characters of its words are kept,
    so memory stays bounded; `GtpEngine.handle` answers what is kept as it would the whole line
    (no words, the id, too long or not).
    """
    piece = reader.readline(MAX_LINE)
    if not piece:
        return None
    kept, comment = "", False
    while True:
        if not comment and len(kept) <= MAX_LINE + 1:
            kept = _SPACES.sub(" ", (kept + preprocess(piece)).lstrip(" "))[: MAX_LINE + 2]
            comment = "#" in piece
        if piece.endswith("\n"):
            return kept
        piece = reader.readline(MAX_LINE)
        if not piece:
            return kept


def serve(engine: GtpEngine, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer command lines from ``stdin`` on ``stdout`` until ``quit`` or end of input.

    Bytes that are not UTF-8 are replaced (and then refused as unknown words); every
    response is flushed at once, as a controller waits for it.
    """
    reader = io.TextIOWrapper(stdin, encoding="utf-8", errors="replace", newline="\n")
    try:
        while not engine.quit_requested:
            line = _read_command(reader)
            if line is None:
                break
            response = engine.handle(line)
            if response:
                stdout.write(response.encode("utf-8", errors="replace"))
                stdout.flush()
    finally:
        reader.detach()  # the caller's stream stays open


def main(argv: list[str] | None = None) -> int:
    """``trapy-gtp AGENT_SPEC [--side N] [--seed S]``: serve GTP on stdin and stdout."""
    parser = ArgumentParser(
        prog="trapy-gtp",
        description="A Go Text Protocol engine for Trap Y, playing with the given agent.",
        epilog="Agent specs: random, uct:SIMULATIONS, net:PATH, mcts:PATH:SIMULATIONS, ...",
    )
    parser.add_argument("agent", metavar="AGENT_SPEC", help="the agent, e.g. random or uct:200")
    parser.add_argument("--side", type=int, default=10, metavar="N", help="board side (default 10)")
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="seed for the agent")
    args = parser.parse_args(argv)
    try:
        engine = GtpEngine(args.agent, side=args.side, seed=args.seed)
    except ValueError as error:  # one line with a hint, not the usage: the arguments parsed
        parser.exit(2, f"{parser.prog}: error: {error} ({parser.prog} --help lists the specs)\n")
    try:
        serve(engine, sys.stdin.buffer, sys.stdout.buffer)
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (Terminated)
        return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    except BrokenPipeError:
        # The controller went away; point stdout at nothing so the exit flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
