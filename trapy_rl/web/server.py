"""``trapy-web``: the web board's server (Starlette on uvicorn), on 127.0.0.1 unless asked.

    trapy-web [--host 127.0.0.1] [--port 8000] [--side 10] [--agent random] [--evaluator SPEC]

It prints the address to open. The page (``static/``) and the API (`trapy_rl.web.api`) are
one app; the only files it reads are the page's own and those an agent spec names.
``--host`` other than a loopback address serves the whole network: only when asked.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from trapy_rl.errors import MissingExtraError, reported

try:
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
from trapy_rl.web.sessions import SessionStore

__all__ = ["STATIC", "create_app", "main"]

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
) -> Starlette:
    """The web board's ASGI app.

    Args:
        side: the board side the page starts with.
        agent: the opponent the page offers first (any agent spec).
        evaluator: the analysis evaluator the page offers first (a spec with an evaluator).
        allowed_hosts: the Host headers answered (default: the loopback names), so that a
            page of another site cannot reach this server through its own domain name.
        store: the games (default: a new `SessionStore`).
    """
    Board(side)  # a bad side fails now, not in the page
    store = store if store is not None else SessionStore()
    defaults = json.dumps({"side": side, "agent": agent, "evaluator": evaluator})
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    page = page.replace("{{DEFAULTS}}", defaults.replace("<", "\\u003c"))

    async def index(request: Request) -> Response:
        return HTMLResponse(page)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        store.close()

    app = Starlette(
        routes=[
            Route("/", index),
            *api_routes(store),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or list(LOOPBACK))
        ],
        exception_handlers=error_handlers(),
        lifespan=lifespan,
    )
    app.state.store = store
    return app


def main(argv: list[str] | None = None) -> int:
    """``trapy-web``: serve the web board until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="trapy-web", description="Play and analyse Trap Y in the browser."
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--side", type=int, default=10, help="the page's first board side")
    parser.add_argument("--agent", default="random", help="the page's first opponent spec")
    parser.add_argument(
        "--evaluator",
        default="uct:400,num_rollouts=4",
        help="the page's first analysis spec: uct[:N], net:PATH, mcts:PATH:N or onnx:MODEL:N",
    )
    args = parser.parse_args(argv)
    with reported(parser.prog):
        import uvicorn  # only serving needs the server (web extra); create_app does not

        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be from 0 to 65535, got {args.port}")
        hosts = list(LOOPBACK) if args.host in LOOPBACK else ["*"]
        app = create_app(
            side=args.side, agent=args.agent, evaluator=args.evaluator, allowed_hosts=hosts
        )
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"trapy-web: serving the board at http://{shown}:{args.port}/", flush=True)
        if args.host not in LOOPBACK:
            print(f"trapy-web: listening on {args.host}: reachable from other machines", flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
