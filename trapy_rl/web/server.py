"""``trapy-web``: the web board's server (Starlette on uvicorn), on 127.0.0.1 unless asked.

    trapy-web [--host 127.0.0.1] [--port 8000] [--side 10] [--agent SPEC] [--evaluator SPEC]
              [--db FILE | --db :memory:] [--read-only] [--threads 1]
    trapy-web --db FILE --restore       # put the games file's rolling copy back, and stop

It listens, then prints the address to open (a busy port is one line, before anything
else starts). The page (``static/``) and the API (`trapy_rl.web.api`) are
one app; the files it reads are the page's own, those an agent spec names and its database of
games (`trapy_rl.web.storage`, by default in the user's data folder), which it writes after
every change, once it has checked it (`trapy_rl.web.storage`: a damaged, empty or read-only
file is refused in one line that says what to do; ``--read-only`` serves it as it is, the page
saying so and playing no move). ``--host`` other than a loopback address serves the whole
network: only when asked. Searches run with ``--threads`` torch threads (default 1: on a
shared machine more threads slow a search down instead of speeding it up). `BoardServer` stops
the searches first when it shuts down (Ctrl-C, SIGTERM), so that the pages' event streams end
instead of holding it open; a signal before it serves ends the start in one line (exit 130 or
143).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import torch

from trapy_rl.errors import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    ArgumentParser,
    MissingExtraError,
    Terminated,
    one_line,
    reported,
)

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
except ModuleNotFoundError as error:  # pragma: no cover - the extra is missing
    raise MissingExtraError(
        "web", module=error.name or "starlette", needed_by="trapy-web"
    ) from None

from trapy_rl.game.board import Board
from trapy_rl.web.api import api_routes, error_handlers
from trapy_rl.web.opponents import check_specs, default_specs
from trapy_rl.web.readiness import Readiness
from trapy_rl.web.sessions import SessionStore
from trapy_rl.web.storage import MEMORY, GameDatabase, default_database_path, restore

__all__ = ["STATIC", "BoardServer", "create_app", "listen", "main"]

STATIC = Path(__file__).parent / "static"
"""The page's files: index.html, board.js, app.js, style.css."""
LOOPBACK = ("127.0.0.1", "localhost", "::1")
T = TypeVar("T")


def create_app(
    *,
    side: int = 10,
    agent: str = "random",
    evaluator: str = "uct:400,num_rollouts=4",
    allowed_hosts: list[str] | None = None,
    store: SessionStore | None = None,
    db: str | Path = MEMORY,
    prepare: list[str] | Readiness | None = None,
    read_only: bool = False,
) -> Starlette:
    """The web board's ASGI app.

    Args:
        side: the board side the page starts with.
        agent: the opponent the page offers first (any agent spec; empty: none).
        evaluator: the analysis evaluator the page offers first (a spec with an evaluator).
        allowed_hosts: the Host headers answered (default: the loopback names), so that a
            page of another site cannot reach this server through its own domain name.
        store: the games (default: a new `SessionStore` on ``db``).
        db: the games' database file, or ``:memory:`` (default).
        prepare: the specs whose nets are prepared when the server starts (or their
            `Readiness`): until then the requests that need a net wait, and ``GET /api/ready``
            says how far it is (default: none, ready at once).
        read_only: serve ``db`` read-only (the page says so and plays no move).

    Raises:
        GamesFileError: (an OSError) for a games file that cannot be used, saying what to do.
    """
    Board(side)  # a bad side fails now, not in the page
    if store is None:
        store = SessionStore(GameDatabase(db, read_only=read_only))
    readiness = prepare if isinstance(prepare, Readiness) else Readiness(prepare or [], side)
    defaults = json.dumps(
        {"side": side, "agent": agent, "evaluator": evaluator, "read_only": store.read_only}
    )
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    page = page.replace("{{DEFAULTS}}", defaults.replace("<", "\\u003c"))

    async def index(request: Request) -> Response:
        return HTMLResponse(page)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        readiness.start()
        yield
        store.close()

    app = Starlette(
        routes=[
            Route("/", index),
            *api_routes(store, readiness),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or list(LOOPBACK))
        ],
        exception_handlers=error_handlers(),
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.readiness = readiness
    return app


class BoardServer(uvicorn.Server):
    """uvicorn's server for the app of `create_app`, which cancels the games' searches before
    it waits for the open responses to end at shutdown.

    A page's live analysis is a response that streams until its search ends (200,000
    simulations); uvicorn waits for it, so without this a Ctrl-C waited for the search. Each
    stream sends its search's last state and ends; the page starts the analysis again on the
    next server.

    Args:
        app: the board's app.
        host, port: where to listen.
    """

    def __init__(self, app: Starlette, *, host: str, port: int) -> None:
        super().__init__(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        self.store: SessionStore = app.state.store

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.store.close()
        await super().shutdown(sockets)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (0: a free port), for uvicorn to serve on.

    Raises:
        OSError: one line naming ``--port`` or ``--host``, for a port in use or not allowed, or
            an address this machine does not have.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: no TIME_WAIT wait
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        if error.errno in (errno.EADDRINUSE, errno.EACCES):
            raise OSError(f"--port {port}: cannot listen on {host}:{port} ({reason}); "
                          "give another --port") from None  # fmt: skip
        raise OSError(f"--host {host}: cannot listen there ({reason})") from None
    sock.listen(2048)  # uvicorn's backlog: a page that connects now waits, is not refused
    sock.set_inheritable(True)
    return sock


def main(argv: list[str] | None = None) -> int:
    """``trapy-web``: serve the web board until Ctrl-C."""
    parser = ArgumentParser(prog="trapy-web", description="Play and analyse Trap Y in the browser.")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--side", type=int, default=10, help="the page's first board side")
    parser.add_argument(
        "--agent",
        default=None,
        help="the page's first opponent spec (default: the shipped net at 200 simulations on "
        "side 10, uct:1000 on other sides; '' for none)",
    )
    parser.add_argument(
        "--evaluator",
        default=None,
        help="the page's first analysis spec: uct[:N], net:PATH, mcts:PATH:N or onnx:MODEL:N "
        "(default: the shipped net at 400 simulations on side 10, uct:400 on other sides)",
    )
    parser.add_argument(
        "--db",
        default=str(default_database_path()),
        help=f"the games' database file (default {default_database_path()}; "
        f"{MEMORY} keeps them in memory only)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="serve the games file as it is (a damaged one: the games that can be read); "
        "the page plays no move",
    )
    parser.add_argument(
        "--restore",
        action="store_true",
        help="put the games file's rolling copy (FILE.backup) back in its place, keeping the "
        "damaged file beside it, and stop",
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads for searches (default 1)"
    )
    args = parser.parse_args(argv)
    with reported(parser.prog):
        if args.restore:
            if args.db == MEMORY:
                raise ValueError("--restore: give the games file with --db FILE")
            print(f"trapy-web: {_named(restore, args.db)}", flush=True)
            return 0
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be from 0 to 65535, got {args.port}")
        if args.threads < 1:
            raise ValueError(f"--threads must be at least 1, got {args.threads}")
        torch.set_num_threads(args.threads)
        Board(args.side)  # a bad side fails before the defaults are looked up
        hint = f"trapy-web --db {shlex.quote(args.db)} --restore"
        games = _named(GameDatabase, args.db, read_only=args.read_only, restore_hint=hint)
        try:
            agent, evaluator = default_specs(args.side)
            agent = agent if args.agent is None else args.agent.strip()
            evaluator = evaluator if args.evaluator is None else args.evaluator
            check_specs(agent, evaluator, args.side)
            sock = listen(args.host, args.port)  # before any thread starts, or a line is printed
        except BaseException:
            games.close()
            raise
        hosts = list(LOOPBACK) if args.host in LOOPBACK else ["*"]
        app = create_app(
            side=args.side,
            agent=agent,
            evaluator=evaluator,
            allowed_hosts=hosts,
            store=SessionStore(games),
            prepare=[agent, evaluator],
        )
        try:
            _serve(app, sock, args, games)
        except KeyboardInterrupt as stop:  # before it served: one line, exit 130 or 143
            games.close()
            if not _threads_left():
                raise
            terminated = isinstance(stop, Terminated)
            print(f"trapy-web: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
            _leave_now(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)
        finally:
            games.close()  # the last copy of the games file
    if _threads_left():
        _leave_now(0)
    return 0


def _serve(app: Starlette, sock: socket.socket, args: Any, games: GameDatabase) -> None:
    """Say where the board is served (it listens already), then serve until Ctrl-C or
    SIGTERM: uvicorn shuts down, then raises the signal again, which ends it here."""
    shown = f"[{args.host}]" if ":" in args.host else args.host
    port = sock.getsockname()[1]
    print(f"trapy-web: serving the board at http://{shown}:{port}/", flush=True)
    if args.read_only:
        print(f"trapy-web: games read from {args.db}, read-only: no move is saved", flush=True)
    else:
        print(f"trapy-web: games kept in {args.db}", flush=True)
    if games.damaged:
        print(f"trapy-web: {len(games.damaged)} games cannot be read (damaged)", flush=True)
    if args.host not in LOOPBACK:
        print(f"trapy-web: listening on {args.host}: reachable from other machines", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        BoardServer(app, host=args.host, port=port).run(sockets=[sock])
    print("trapy-web: stopped", flush=True)


def _threads_left() -> bool:
    """Whether a thread besides the main one still runs (the preparation reading the nets)."""
    return any(t is not threading.main_thread() and t.is_alive() for t in threading.enumerate())


def _leave_now(code: int) -> None:
    """Exit at once: stopped while the preparation thread still reads the nets, the interpreter's
    exit would tear torch's threads down under it and abort ("terminate called without an
    active exception"). The games file is closed, nothing else is left to do."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _named(open_: Callable[..., T], db: str, **options: Any) -> T:
    """``open_(db, **options)``, its OSError naming ``--db``."""
    try:
        return open_(db, **options)
    except OSError as error:
        raise OSError(f"--db {one_line(error)}") from None


if __name__ == "__main__":
    sys.exit(main())
