"""The JSON API of the web board: games, moves, analysis and records, strictly checked.

Every request body is a JSON object sent as ``application/json`` (which a page of another
origin cannot send without a preflight that this server never grants) with only the fields
the route knows. A bad request gets a 4xx status and ``{"error": "<one line>"}``, never a
traceback: 400 bad input or illegal move, 404 unknown game or route, 405 wrong method, 409 the
game is busy, it is not the page's turn, or the change names a version of the game that is no
longer current, 413 a body over `MAX_BODY_BYTES`, 415 not JSON. An agent that fails instead of
moving gets 502 and one line; the game is as it was. A change is answered only once it is on
disk: one the games file could not take gets 503 (the game is as it was, the log says why), any
change while the file is served read-only 403; a game whose record cannot be read gets 410, and
``GET /api/games`` lists the others, naming it under ``damaged`` (with ``read_only``).

Every change may name ``version``, the game's version it was made from (each change adds one;
the page always names it): when another tab or window changed the game meanwhile, the change is
refused with 409 and the game is unchanged. The requests that need a net (a game against an
agent, the agent's move, evaluations and searches) wait while the server prepares its nets
(`trapy_rl.web.readiness`), so none finds a net half made.

Routes (``{id}`` a game's id; ``node`` a position of its tree, ``ply`` of the line shown):

    GET    /api/board?side=N              the geometry and colours (`board_payload`)
    GET    /api/agents                    the agent kinds, their usage lines, the presets
    GET    /api/ready                     the server's preparation (`Readiness.payload`)
    GET    /api/games?offset=O&limit=L    the games, the most recently changed first (a page of
                                          them: games, total, offset, limit)
    POST   /api/games                     {side, human, agent, seed}, {record} or
                                          {side, tree, names}: a new game
    GET    /api/games/{id}?ply=P          the game (`GameSession.payload`)
    DELETE /api/games/{id}?version=V      delete the game
    GET    /api/games/{id}/events         server-sent events: the game's version each time it
                                          changes ({"deleted": true} when it is deleted)
    POST   /api/games/{id}/goto           {node, version}: show that position (moves are
                                          played there)
    POST   /api/games/{id}/players        {human, agent, version}: play on from here against
                                          an agent
    POST   /api/games/{id}/move           {move, version}: the page's move ("swap" too)
    POST   /api/games/{id}/swap           {version}: the swap
    POST   /api/games/{id}/undo           {version}: take back the page's last move
    POST   /api/games/{id}/resign         {version}: the page's side resigns
    POST   /api/games/{id}/agent-move     {version}: the agent's move (answers when it has
                                          played)
    POST   /api/games/{id}/promote        {node, version}: the line through node becomes the
                                          main line
    POST   /api/games/{id}/delete-variation  {node, version}: node and all after it deleted
    GET    /api/games/{id}/record         the line shown as a record, one JSON line
    GET    /api/games/{id}/sgf            the whole game, variations included, as SGF
    POST   /api/games/{id}/evaluate       {evaluator, node | ply}: value and policy
    POST   /api/games/{id}/values         {evaluator}: the value for blue along the line shown
    POST   /api/games/{id}/search         {evaluator, simulations, node | ply}: start a search
    GET    /api/games/{id}/search         its progress and result so far
    GET    /api/games/{id}/search/events  the same as server-sent events, until it ends (or
                                          "replaced" when another search takes its place)
    DELETE /api/games/{id}/search         cancel it
    POST   /api/records                   {text}: the games of a file (JSON, GTP or SGF)
    POST   /api/openings                  {text}: a ``trapy-openings`` table (CSV) per cell
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from trapy_rl.agents.kinds import known_agent_kinds
from trapy_rl.analysis.openings import read_opening_table
from trapy_rl.errors import one_line
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.game.state import BLUE, YELLOW
from trapy_rl.web.analysis import SearchJob, evaluate, load_analyser, value_curve
from trapy_rl.web.board_data import board_payload
from trapy_rl.web.imports import read_game_file, tree_from_record
from trapy_rl.web.opponents import presets
from trapy_rl.web.readiness import Readiness
from trapy_rl.web.sessions import (
    AgentFailedError,
    BusyError,
    GameSession,
    SessionStore,
    StaleError,
    UnknownGameError,
)
from trapy_rl.web.sgf import sgf_from_tree
from trapy_rl.web.storage import DamagedGameError, ReadOnlyError, StorageError
from trapy_rl.web.tree import GameTree

__all__ = ["MAX_BODY_BYTES", "ApiError", "api_routes", "error_handlers"]

MAX_BODY_BYTES = 2 * 1024 * 1024
"""The largest request body (a record file's text included)."""
MAX_TEXT = 1000  # characters of a spec, a move or a name
EVENT_INTERVAL_S = 0.25  # between two looks at a watched search or game
PAGE_SIZE = 50  # games in a page of the list
MAX_PAGE_SIZE = 500
_PLAYERS = {"blue": BLUE, "yellow": YELLOW}
_MISSING = object()
log = logging.getLogger("trapy_rl.web")


class ApiError(Exception):
    """A bad request: its status (4xx) and a one-line message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------- input checks
async def read_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (``{}`` for an empty body), read up to `MAX_BODY_BYTES`."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise ApiError(415, "send the request body as JSON (Content-Type: application/json)")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise ApiError(413, f"the request body is over {MAX_BODY_BYTES} bytes")
    if not body.strip():
        return {}
    try:
        data = json.loads(bytes(body))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ApiError(400, f"the request body is not JSON: {one_line(error)}") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"the request body must be a JSON object, not {type(data).__name__}")
    return data


def only(body: dict[str, Any], *allowed: str) -> None:
    """Refuse fields the route does not know (a typo is an error, not a default)."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        known = ", ".join(allowed) or "none"
        raise ApiError(400, f"unknown field {_short(unknown[0])} (known fields: {known})")


def take(body: dict[str, Any], name: str, kind: type, default: Any = _MISSING) -> Any:
    """Field ``name`` of ``body``, which must be of ``kind`` (int, str, dict or list).

    A missing field or null gives ``default`` (or an error without one). Booleans are not
    integers here; strings are at most `MAX_TEXT` characters.
    """
    value = body.get(name)
    if value is None:
        if default is _MISSING:
            raise ApiError(400, f"field {name!r} is required")
        return default
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ApiError(400, f"field {name!r} must be {_KIND_NAMES[kind]}, got {_short(value)}")
    if kind is str and len(value) > MAX_TEXT:
        raise ApiError(400, f"field {name!r} is over {MAX_TEXT} characters")
    return value


_KIND_NAMES = {int: "an integer", str: "a string", dict: "an object", list: "a list"}


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def query_int(request: Request, name: str) -> int | None:
    """Query parameter ``name`` as an integer (None when absent)."""
    text = request.query_params.get(name)
    if text is None:
        return None
    if len(text) > 10 or not text.strip().lstrip("-").isdigit():
        raise ApiError(400, f"query parameter {name!r} must be an integer, got {_short(text)}")
    return int(text)


# ---------------------------------------------------------------------- routes
def api_routes(store: SessionStore, readiness: Readiness | None = None) -> list[Route]:
    """The API's routes over the games of ``store``; the requests that need a net wait for
    ``readiness`` (default: nothing to prepare)."""
    readiness = readiness if readiness is not None else Readiness([], 10)

    def game(request: Request) -> GameSession:
        try:
            return store.get(request.path_params["game_id"])
        except UnknownGameError:
            raise ApiError(404, "no such game: start a new game") from None

    def human_and_agent(body: dict[str, Any]) -> tuple[int, str | None]:
        human = take(body, "human", str, "blue").lower()
        if human not in _PLAYERS:
            raise ApiError(400, f"field 'human' must be 'blue' or 'yellow', got {_short(human)}")
        agent = take(body, "agent", str, None)
        return _PLAYERS[human], agent if agent is None or agent.strip() else None

    async def board(request: Request) -> Response:
        side = query_int(request, "side")
        return JSONResponse(board_payload(Board(10 if side is None else side)))

    async def agents(request: Request) -> Response:
        return JSONResponse(
            {"kinds": known_agent_kinds(), "max_side": MAX_SIDE, "presets": presets()}
        )

    def version(body: dict[str, Any]) -> int | None:
        """The version of the game the change was made from (None: not named)."""
        return take(body, "version", int, None)

    async def ready(request: Request) -> Response:
        return JSONResponse(readiness.payload())

    async def games(request: Request) -> Response:
        offset = query_int(request, "offset") or 0
        limit = query_int(request, "limit")
        limit = PAGE_SIZE if limit is None else limit
        if offset < 0 or not 1 <= limit <= MAX_PAGE_SIZE:
            raise ApiError(400, f"offset must be >= 0 and limit from 1 to {MAX_PAGE_SIZE}")
        listed = await run_in_threadpool(store.games, limit, offset)
        total = await run_in_threadpool(store.count)
        # The games whose records cannot be read are the server's problem, named beside the rest.
        damaged = [{"id": i, "error": why} for i, why in store.damaged().items()]
        return JSONResponse({"games": listed, "total": total, "offset": offset, "limit": limit,
                             "read_only": store.read_only, "damaged": damaged})  # fmt: skip

    async def new_game(request: Request) -> Response:
        body = await read_body(request)
        only(body, "side", "human", "agent", "seed", "record", "tree", "names")
        record = take(body, "record", dict, None)
        data = take(body, "tree", dict, None)
        side = take(body, "side", int, None)
        human, agent = human_and_agent(body)
        seed = take(body, "seed", int, None)
        if seed is not None and not 0 <= seed < 2**63:
            raise ApiError(400, f"field 'seed' must be from 0 to 2**63 - 1, got {seed}")
        tree, names = None, None
        if record is not None:
            tree, names = await run_in_threadpool(tree_from_record, record)
        elif data is not None:
            tree = await run_in_threadpool(_tree_from_data, data, 10 if side is None else side)
            names = _names(take(body, "names", list, None))
        if tree is not None:
            side = tree.board.side
        if agent is not None:
            await readiness.wait()
        session = await run_in_threadpool(  # an agent spec may load a checkpoint
            store.create,
            side=10 if side is None else side,
            human=human,
            agent_spec=agent,
            seed=seed,
            tree=tree,
            names=names,
        )
        return JSONResponse(session.payload(), status_code=201)

    async def show(request: Request) -> Response:
        if request.method == "DELETE":
            wanted = query_int(request, "version")
            await run_in_threadpool(store.delete, request.path_params["game_id"], wanted)
            return JSONResponse({"deleted": request.path_params["game_id"]})
        return JSONResponse(game(request).payload(query_int(request, "ply")))

    async def game_events(request: Request) -> Response:
        return StreamingResponse(
            _game_events(store, game(request)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def goto(request: Request) -> Response:
        body = await read_body(request)
        only(body, "node", "version")
        session = game(request)
        return JSONResponse(session.goto(take(body, "node", int), version(body)).payload())

    async def players(request: Request) -> Response:
        body = await read_body(request)
        only(body, "human", "agent", "version")
        human, agent = human_and_agent(body)
        session = game(request)
        if agent is not None:
            await readiness.wait()
        await run_in_threadpool(session.set_players, human, agent, version(body))  # may load a net
        return JSONResponse(session.payload())

    async def move(request: Request) -> Response:
        body = await read_body(request)
        only(body, "move", "version")
        session = game(request)
        return JSONResponse(session.play(take(body, "move", str), version(body)).payload())

    async def swap(request: Request) -> Response:
        body = await read_body(request)
        only(body, "version")
        return JSONResponse(game(request).play("swap", version(body)).payload())

    async def undo(request: Request) -> Response:
        body = await read_body(request)
        only(body, "version")
        session = game(request)
        taken = session.undo(version(body))
        return JSONResponse({**session.payload(), "taken": taken})

    async def resign(request: Request) -> Response:
        body = await read_body(request)
        only(body, "version")
        return JSONResponse(game(request).resign(version(body)).payload())

    async def agent_move(request: Request) -> Response:
        body = await read_body(request)
        only(body, "version")
        session = game(request)
        await readiness.wait()
        played = await run_in_threadpool(session.agent_move, version(body))
        return JSONResponse({**session.payload(), "played": played})

    async def promote(request: Request) -> Response:
        body = await read_body(request)
        only(body, "node", "version")
        session = game(request)
        return JSONResponse(session.promote(take(body, "node", int), version(body)).payload())

    async def delete_variation(request: Request) -> Response:
        body = await read_body(request)
        only(body, "node", "version")
        session = game(request)
        node = take(body, "node", int)
        return JSONResponse(session.delete_variation(node, version(body)).payload())

    def attachment(text: str, media_type: str, name: str) -> Response:
        disposition = f'attachment; filename="{name}"'
        return Response(text, media_type=media_type, headers={"Content-Disposition": disposition})

    async def record(request: Request) -> Response:
        session = game(request)
        line = json.dumps(session.record()) + "\n"
        return attachment(line, "application/x-ndjson", f"trapy-web-{session.id}.jsonl")

    async def sgf(request: Request) -> Response:
        session = game(request)
        names = session.record()
        text = sgf_from_tree(
            session.tree, names=(names["agent_a"], names["agent_b"], names["blue"] == "a")
        )
        return attachment(text, "application/x-go-sgf", f"trapy-web-{session.id}.sgf")

    def position(body: dict[str, Any], session: GameSession):
        node = take(body, "node", int, None)
        return node, session.position(take(body, "ply", int, None), node)

    async def analyser(body: dict[str, Any], session: GameSession):
        spec = take(body, "evaluator", str)
        await readiness.wait()
        return await run_in_threadpool(load_analyser, spec, session.board)

    async def evaluate_route(request: Request) -> Response:
        body = await read_body(request)
        only(body, "evaluator", "ply", "node")
        session = game(request)
        node, state = position(body, session)
        evaluator, _ = await analyser(body, session)
        answer = await run_in_threadpool(evaluate, evaluator, state)
        return JSONResponse({**answer, "ply": state.move_count, "node": node})

    async def values(request: Request) -> Response:
        body = await read_body(request)
        only(body, "evaluator")
        session = game(request)
        evaluator, _ = await analyser(body, session)
        end = session.tree.state(session.tree.line(session.node)[-1])
        curve = await run_in_threadpool(value_curve, evaluator, end)
        return JSONResponse({"values_blue": curve})

    async def search(request: Request) -> Response:
        session = game(request)
        if request.method == "GET":
            if session.search is None:
                raise ApiError(404, "no search has been started in this game")
            return JSONResponse(session.search.payload())
        if request.method == "DELETE":
            if session.search is not None:
                session.search.cancel()
                session.search.wait(5.0)
                return JSONResponse(session.search.payload())
            raise ApiError(404, "no search has been started in this game")
        body = await read_body(request)
        only(body, "evaluator", "simulations", "ply", "node")
        node, state = position(body, session)
        evaluator, settings = await analyser(body, session)
        total = take(body, "simulations", int, settings.num_simulations)
        if session.search is not None:
            session.search.cancel()  # one search a game: the newest wins
        session.search = SearchJob(evaluator, settings, state, total, node=node)
        return JSONResponse(session.search.payload(), status_code=202)

    async def search_events(request: Request) -> Response:
        session = game(request)
        job = session.search
        if job is None:
            raise ApiError(404, "no search has been started in this game")
        return StreamingResponse(
            _events(session, job),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def file_text(request: Request, what: str) -> str:
        """The body's one field, ``text``: a file's text."""
        body = await read_body(request)
        only(body, "text")
        text = body.get("text")
        if not isinstance(text, str):
            raise ApiError(400, f"field 'text' must be {what}")
        return text

    async def records(request: Request) -> Response:
        text = await file_text(request, "the record file's text")
        return JSONResponse({"games": await run_in_threadpool(read_game_file, text)})

    async def openings(request: Request) -> Response:
        text = await file_text(request, "the opening table's text (CSV)")
        return JSONResponse(await run_in_threadpool(read_openings, text))

    game_path = "/api/games/{game_id:str}"
    return [
        Route("/api/board", board),
        Route("/api/agents", agents),
        Route("/api/ready", ready),
        Route("/api/games", games, methods=["GET"]),
        Route("/api/games", new_game, methods=["POST"]),
        Route(game_path, show, methods=["GET", "DELETE"]),
        Route(game_path + "/events", game_events),
        Route(game_path + "/goto", goto, methods=["POST"]),
        Route(game_path + "/players", players, methods=["POST"]),
        Route(game_path + "/move", move, methods=["POST"]),
        Route(game_path + "/swap", swap, methods=["POST"]),
        Route(game_path + "/undo", undo, methods=["POST"]),
        Route(game_path + "/resign", resign, methods=["POST"]),
        Route(game_path + "/agent-move", agent_move, methods=["POST"]),
        Route(game_path + "/promote", promote, methods=["POST"]),
        Route(game_path + "/delete-variation", delete_variation, methods=["POST"]),
        Route(game_path + "/record", record),
        Route(game_path + "/sgf", sgf),
        Route(game_path + "/evaluate", evaluate_route, methods=["POST"]),
        Route(game_path + "/values", values, methods=["POST"]),
        Route(game_path + "/search", search, methods=["GET", "POST", "DELETE"]),
        Route(game_path + "/search/events", search_events),
        Route("/api/records", records, methods=["POST"]),
        Route("/api/openings", openings, methods=["POST"]),
    ]


async def _events(session: GameSession, job: SearchJob) -> AsyncIterator[str]:
    """Server-sent events of ``job``: its payload each time it changes, until it ends, or until
    another search replaces it (a last payload with status ``replaced``, so that a page does not
    take the search back, as it does after a server's restart). A watcher that leaves stops
    the search it watched."""
    seen = -1
    try:
        while True:
            payload = job.payload()
            if session.search is not job:
                yield f"data: {json.dumps({**payload, 'status': 'replaced'})}\n\n"
                return
            if payload["version"] != seen:
                seen = payload["version"]
                yield f"data: {json.dumps(payload)}\n\n"
            if payload["status"] != "running":
                return
            await asyncio.sleep(EVENT_INTERVAL_S)
    finally:  # the page left, or the stream ended: a search nobody watches is wasted time
        job.cancel()


async def _game_events(store: SessionStore, session: GameSession) -> AsyncIterator[str]:
    """Server-sent events of a game: ``{"version": V}`` now and each time it changes, until the
    game is deleted (``{"deleted": true}``), the page leaves or the server shuts down."""
    seen = -1
    session.watchers += 1
    try:
        while not store.closed:
            if session.deleted:
                yield f"data: {json.dumps({'deleted': True})}\n\n"
                return
            if session.version != seen:
                seen = session.version
                yield f"data: {json.dumps({'version': seen})}\n\n"
            await asyncio.sleep(EVENT_INTERVAL_S)
    finally:
        session.watchers -= 1


def _tree_from_data(data: dict[str, Any], side: int) -> GameTree:
    """A tree the page sent back (from `read_game_file`), every move checked again."""
    try:
        return GameTree.from_data(data, Board(side))
    except (KeyError, TypeError, AttributeError):
        raise ApiError(400, "field 'tree' must be a game tree: moves, parents, resigned") from None


def _names(names: list | None) -> tuple[str, str, bool] | None:
    if names is None:
        return None
    if len(names) != 3 or not all(isinstance(n, str) for n in names[:2]):
        raise ApiError(400, "field 'names' must be [agent_a, agent_b, a_is_blue]")
    return (names[0][:MAX_TEXT], names[1][:MAX_TEXT], bool(names[2]))


def read_openings(text: str) -> dict[str, Any]:
    """The opening table of ``trapy-openings``' CSV text, by cell for the board.

    Returns:
        ``side``, and per cell in cell order [K]: ``v`` (the stone owner's chance), ``low``
        and ``high`` (its interval, null without one), ``swap`` (bool), ``rank`` (1 fairest).

    Raises:
        ValueError: naming what makes the text no opening table.
    """
    board, table = read_opening_table(io.StringIO(text))

    def numbers(column: str) -> list[float | None]:
        return [None if np.isnan(x) else float(x) for x in table[column].to_numpy(np.float64)]

    return {
        "side": board.side,
        "v": numbers("v"),
        "low": numbers("low"),
        "high": numbers("high"),
        "swap": [bool(x) for x in table["swap"]],
        "rank": [int(x) for x in table["rank"]],
    }


# ---------------------------------------------------------------------- errors
def _json_error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


async def _api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return _json_error(error.status, str(error))


async def _busy(request: Request, error: Exception) -> Response:
    return _json_error(409, one_line(error))


async def _stale(request: Request, error: Exception) -> Response:
    """409 with ``stale``: the page reloads the game rather than waiting."""
    return JSONResponse({"error": one_line(error), "stale": True}, status_code=409)


async def _unknown_game(request: Request, error: Exception) -> Response:
    return _json_error(404, "no such game (it was deleted?): start a new game")


async def _agent_failed(request: Request, error: Exception) -> Response:
    return _json_error(502, one_line(error))


async def _bad_input(request: Request, error: Exception) -> Response:
    return _json_error(400, one_line(error))


async def _not_saved(request: Request, error: Exception) -> Response:
    """A write of the games file failed (logged where it failed): nothing was changed."""
    return _json_error(503, one_line(error))


async def _read_only(request: Request, error: Exception) -> Response:
    return _json_error(403, one_line(error))


async def _damaged(request: Request, error: Exception) -> Response:
    """A record the file holds but cannot give back: the server's loss, not the request's."""
    return _json_error(410, one_line(error))


async def _http(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    if error.status_code == 404:
        return _json_error(404, f"no such page or API route: {request.url.path[:80]}")
    return _json_error(error.status_code, one_line(Exception(error.detail)))


async def _internal(request: Request, error: Exception) -> Response:
    log.exception("internal error in %s %s", request.method, request.url.path)
    return _json_error(500, f"internal error ({type(error).__name__}); the server goes on")


def error_handlers() -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
    """Exception -> handler: every error a one-line JSON ``{"error": ...}``."""
    return {
        ApiError: _api_error,
        BusyError: _busy,
        StaleError: _stale,
        AgentFailedError: _agent_failed,
        UnknownGameError: _unknown_game,
        StorageError: _not_saved,
        ReadOnlyError: _read_only,
        DamagedGameError: _damaged,
        ValueError: _bad_input,
        OSError: _bad_input,
        HTTPException: _http,
        Exception: _internal,
    }
