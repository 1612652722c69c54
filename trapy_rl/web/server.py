"""``trapy-web``: the web board's server (Starlette on uvicorn), on 127.0.0.1 unless asked.

    trapy-web [--host 127.0.0.1] [--port 8000] [--side 10] [--agent SPEC] [--evaluator SPEC]
              [--db FILE | --db :memory:] [--threads 1]

It prints the address to open. The page (``static/``) and the API (`trapy_rl.web.api`) are
one app; the files it reads are the page's own, those an agent spec names and its database of
games (`trapy_rl.web.storage`, by default in the user's data folder), which it writes after
every change. ``--host`` other than a loopback address serves the whole network: only when
asked. Searches run with ``--threads`` torch threads (default 1: on a shared machine more
threads slow a search down instead of speeding it up). `BoardServer` stops the searches first
when it shuts down (Ctrl-C), so that the pages' event streams end instead of holding it open.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import torch

from trapy_rl.errors import ArgumentParser, MissingExtraError, reported

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
from trapy_rl.web.storage import MEMORY, default_database_path

__all__ = ["STATIC", "BoardServer", "create_app", "main"]

STATIC = Path(__file__).parent / "static"
"""The page's files: index.html, board.js, app.js, style.css."""
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def create_app(
    *,
    side: int = 10,
    agent: str = "random",
    evaluator: str = "uct:400,num_rollouts=4",
    allowed_hosts: list[str] | None = None,
    store: SessionStore | None = None,
    db: str | Path = MEMORY,
    prepare: list[str] | Readiness | None = None,
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
    """
    Board(side)  # a bad side fails now, not in the page
    store = store if store is not None else SessionStore(db)
    readiness = prepare if isinstance(prepare, Readiness) else Readiness(prepare or [], side)
    defaults = json.dumps({"side": side, "agent": agent, "evaluator": evaluator})
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
        "--threads", type=int, default=1, help="torch threads for searches (default 1)"
    )
    args = parser.parse_args(argv)
    with reported(parser.prog):
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be from 0 to 65535, got {args.port}")
        if args.threads < 1:
            raise ValueError(f"--threads must be at least 1, got {args.threads}")
        torch.set_num_threads(args.threads)
        Board(args.side)  # a bad side fails before the defaults are looked up
        agent, evaluator = default_specs(args.side)
        agent = agent if args.agent is None else args.agent.strip()
        evaluator = evaluator if args.evaluator is None else args.evaluator
        check_specs(agent, evaluator, args.side)
        hosts = list(LOOPBACK) if args.host in LOOPBACK else ["*"]
        app = create_app(
            side=args.side,
            agent=agent,
            evaluator=evaluator,
            allowed_hosts=hosts,
            db=args.db,
            prepare=[agent, evaluator],
        )
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"trapy-web: serving the board at http://{shown}:{args.port}/", flush=True)
        print(f"trapy-web: games kept in {args.db}", flush=True)
        if args.host not in LOOPBACK:
            print(f"trapy-web: listening on {args.host}: reachable from other machines", flush=True)
        # Ctrl-C is how the server stops: uvicorn shuts down, then raises it again.
        with contextlib.suppress(KeyboardInterrupt):
            BoardServer(app, host=args.host, port=args.port).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
