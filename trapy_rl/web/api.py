"""The JSON API of the web board: games, moves, analysis and records, strictly checked.

Every request body is a JSON object sent as ``application/json`` (which a page of another
origin cannot send without a preflight that this server never grants) with only the fields
the route knows. A bad request gets a 4xx status and ``{"error": "<one line>"}``, never a
traceback: 400 bad input or illegal move, 404 unknown game or route, 405 wrong method, 409 the
game is busy or it is not the page's turn, 413 a body over `MAX_BODY_BYTES`, 415 not JSON.

Routes (``{id}`` a game's id; ``ply`` shows or analyses the position after that many moves):

    GET    /api/board?side=N              the geometry and colours (`board_payload`)
    GET    /api/agents                    the agent kinds and their usage lines
    POST   /api/games                     {side, human, agent, seed} or {record}: a new game
    GET    /api/games/{id}?ply=P          the game (`GameSession.payload`)
    POST   /api/games/{id}/move           {move}: the page's move ("swap" too)
    POST   /api/games/{id}/swap           the swap
    POST   /api/games/{id}/undo           take back the page's last move
    POST   /api/games/{id}/resign         the page's side resigns
    POST   /api/games/{id}/agent-move     the agent's move (answers when it has played)
    GET    /api/games/{id}/record         the finished game's record, one JSON line
    POST   /api/games/{id}/evaluate       {evaluator, ply}: value and policy
    POST   /api/games/{id}/values         {evaluator}: the value for blue after every move
    POST   /api/games/{id}/search         {evaluator, simulations, ply}: start a search
    GET    /api/games/{id}/search         its progress and result so far
    DELETE /api/games/{id}/search         cancel it
    POST   /api/records                   {text}: the games of a record file's text
    POST   /api/openings                  {text}: a ``trapy-openings`` table (CSV) per cell
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from trapy_rl.agents.kinds import known_agent_kinds
from trapy_rl.analysis.openings import read_opening_table
from trapy_rl.errors import one_line
from trapy_rl.eval.records import parse_records, replay_record
from trapy_rl.frontend.gtp_records import records_from_gtp
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.game.state import BLUE, PLAYER_NAMES, YELLOW
from trapy_rl.web.analysis import SearchJob, evaluate, load_analyser, value_curve
from trapy_rl.web.board_data import board_payload
from trapy_rl.web.sessions import BusyError, GameSession, SessionStore, UnknownGameError

__all__ = ["MAX_BODY_BYTES", "ApiError", "api_routes", "error_handlers"]

MAX_BODY_BYTES = 2 * 1024 * 1024
"""The largest request body (a record file's text included)."""
MAX_TEXT = 1000  # characters of a spec, a move or a name
MAX_RECORDS = 1000  # games listed from one record file
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
def api_routes(store: SessionStore) -> list[Route]:
    """The API's routes over the games of ``store``."""

    def game(request: Request) -> GameSession:
        try:
            return store.get(request.path_params["game_id"])
        except UnknownGameError:
            raise ApiError(404, "no such game (it may have expired): start a new game") from None

    async def board(request: Request) -> Response:
        side = query_int(request, "side")
        return JSONResponse(board_payload(Board(10 if side is None else side)))

    async def agents(request: Request) -> Response:
        return JSONResponse({"kinds": known_agent_kinds(), "max_side": MAX_SIDE})

    async def new_game(request: Request) -> Response:
        body = await read_body(request)
        only(body, "side", "human", "agent", "seed", "record")
        record = take(body, "record", dict, None)
        side = take(body, "side", int, None)
        if record is not None:
            side = record.get("side") if side is None else side
            if isinstance(side, bool) or not isinstance(side, int):
                raise ApiError(400, "the record's side must be an integer")
        human = take(body, "human", str, "blue").lower()
        if human not in _PLAYERS:
            raise ApiError(400, f"field 'human' must be 'blue' or 'yellow', got {_short(human)}")
        agent = take(body, "agent", str, None)
        agent = agent if agent is None or agent.strip() else None
        seed = take(body, "seed", int, None)
        if seed is not None and not 0 <= seed < 2**63:
            raise ApiError(400, f"field 'seed' must be from 0 to 2**63 - 1, got {seed}")
        session = await run_in_threadpool(  # an agent spec may load a checkpoint
            store.create,
            side=10 if side is None else side,
            human=_PLAYERS[human],
            agent_spec=agent,
            seed=seed,
            record=record,
        )
        return JSONResponse(session.payload(), status_code=201)

    async def show(request: Request) -> Response:
        return JSONResponse(game(request).payload(query_int(request, "ply")))

    async def move(request: Request) -> Response:
        body = await read_body(request)
        only(body, "move")
        return JSONResponse(game(request).play(take(body, "move", str)).payload())

    async def swap(request: Request) -> Response:
        only(await read_body(request))
        return JSONResponse(game(request).play("swap").payload())

    async def undo(request: Request) -> Response:
        only(await read_body(request))
        session = game(request)
        taken = session.undo()
        return JSONResponse({**session.payload(), "taken": taken})

    async def resign(request: Request) -> Response:
        only(await read_body(request))
        return JSONResponse(game(request).resign().payload())

    async def agent_move(request: Request) -> Response:
        only(await read_body(request))
        session = game(request)
        played = await run_in_threadpool(session.agent_move)
        return JSONResponse({**session.payload(), "played": played})

    async def record(request: Request) -> Response:
        session = game(request)
        line = json.dumps(session.record()) + "\n"
        name = f"trapy-web-{session.id}.jsonl"
        return Response(
            line,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def analyser(body: dict[str, Any], session: GameSession):
        spec = take(body, "evaluator", str)
        return await run_in_threadpool(load_analyser, spec, session.board)

    async def evaluate_route(request: Request) -> Response:
        body = await read_body(request)
        only(body, "evaluator", "ply")
        session = game(request)
        state = session.position(take(body, "ply", int, None))
        evaluator, _ = await analyser(body, session)
        answer = await run_in_threadpool(evaluate, evaluator, state)
        return JSONResponse({**answer, "ply": state.move_count})

    async def values(request: Request) -> Response:
        body = await read_body(request)
        only(body, "evaluator")
        session = game(request)
        evaluator, _ = await analyser(body, session)
        curve = await run_in_threadpool(value_curve, evaluator, session.state.copy())
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
        only(body, "evaluator", "simulations", "ply")
        state = session.position(take(body, "ply", int, None))
        evaluator, settings = await analyser(body, session)
        total = take(body, "simulations", int, settings.num_simulations)
        if session.search is not None:
            session.search.cancel()  # one search a game: the newest wins
        session.search = SearchJob(evaluator, settings, state, total)
        return JSONResponse(session.search.payload(), status_code=202)

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
        return JSONResponse({"games": await run_in_threadpool(read_records, text)})

    async def openings(request: Request) -> Response:
        text = await file_text(request, "the opening table's text (CSV)")
        return JSONResponse(await run_in_threadpool(read_openings, text))

    game_path = "/api/games/{game_id:str}"
    return [
        Route("/api/board", board),
        Route("/api/agents", agents),
        Route("/api/games", new_game, methods=["POST"]),
        Route(game_path, show),
        Route(game_path + "/move", move, methods=["POST"]),
        Route(game_path + "/swap", swap, methods=["POST"]),
        Route(game_path + "/undo", undo, methods=["POST"]),
        Route(game_path + "/resign", resign, methods=["POST"]),
        Route(game_path + "/agent-move", agent_move, methods=["POST"]),
        Route(game_path + "/record", record),
        Route(game_path + "/evaluate", evaluate_route, methods=["POST"]),
        Route(game_path + "/values", values, methods=["POST"]),
        Route(game_path + "/search", search, methods=["GET", "POST", "DELETE"]),
        Route("/api/records", records, methods=["POST"]),
        Route("/api/openings", openings, methods=["POST"]),
    ]


def read_records(text: str) -> list[dict[str, Any]]:
    """The games of a record file's text: ``trapy-play`` or ``trapy-eval`` JSON lines, one
    JSON object or list of them, or GTP text (`trapy_rl.frontend.gtp_records`: ``showboard``'s
    move lines or a session's commands); each replayed to check it.

    Returns:
        Per game: ``label`` (agents, winner, length) and ``record`` (as given).

    Raises:
        ValueError: naming the line or game that is not a valid record.
    """
    if text.lstrip().startswith(("{", "[")):
        parsed = parse_records(_json_lines(text), source="record")
    else:  # GTP text: its records are built, not parsed
        parsed = records_from_gtp(text)
    games = []
    for index, record in enumerate(parsed):
        if len(games) >= MAX_RECORDS:
            break
        side = record.get("side")
        if isinstance(side, bool) or not isinstance(side, int):
            raise ValueError(f"record {index + 1}: side must be an integer")
        try:
            state = replay_record(record, Board(side))
        except (ValueError, TypeError) as error:
            raise ValueError(f"record {index + 1}: {one_line(error)}") from None
        blue = record.get("blue_agent", "?")
        yellow = record.get("yellow_agent", "?")
        result = f"{PLAYER_NAMES[state.winner]} won" if state.winner else "unfinished"
        label = (
            f"game {record.get('game', index)}: {blue} (blue) v {yellow} (yellow), "
            f"{result} after {state.move_count} moves"
        )
        games.append({"label": label, "record": record})
    if not games:
        raise ValueError("the text holds no game records")
    return games


def _json_lines(text: str) -> list[str]:
    """JSON lines, or one JSON object or list of them, as JSON lines."""
    try:
        whole = json.loads(text)
    except ValueError:
        return text.splitlines()
    if isinstance(whole, list):
        return [json.dumps(item) for item in whole]
    return [json.dumps(whole)]


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


async def _bad_input(request: Request, error: Exception) -> Response:
    return _json_error(400, one_line(error))


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
        ValueError: _bad_input,
        OSError: _bad_input,
        HTTPException: _http,
        Exception: _internal,
    }
