"""A thousand malformed requests: each gets a 4xx and a one-line error; the server goes on."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
from starlette.testclient import TestClient

from trapy_rl.web.server import create_app

NUM_REQUESTS = 1200
_ODD_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    3,
    41,
    10**30,
    -(10**30),
    1.5,
    float("nan"),
    "",
    " ",
    "a1",
    "A1",
    "z99",
    "swap",
    "resign",
    "a" * 5000,
    "\u00e9\u00e8",
    "\x00",
    "../../etc/passwd",
    "net:/etc/passwd",
    "mcts:/nonexistent:5",
    "uct:x",
    "uct:5,c_puct=",
    "random",
    "random:1",
    "onnx:",
    ",",
    ":",
    "uct,num_rollouts=-1",
    [],
    [1, 2],
    {},
    {"moves": 5},
    {"side": 4},
    {"side": 4, "moves": ["a1"], "winner": 7},
    {"side": 3, "moves": "a1", "winner": 1},
    {"moves": [None, "a1"], "parents": [-1, 0]},
    {"moves": [None, "a1", "a1"], "parents": [-1, 0, 0]},
    {"moves": [None, "a1"], "parents": [-1, 5]},
    {"moves": {}, "parents": []},
    ["a", "b", 1],
]
_FIELDS = [
    "side",
    "human",
    "agent",
    "seed",
    "record",
    "move",
    "evaluator",
    "ply",
    "simulations",
    "text",
    "tree",
    "node",
    "names",
    "colour",
    "version",
    "x",
]
_PATHS = [
    "/api/games",
    "/api/games/{id}",
    "/api/games/{id}/move",
    "/api/games/{id}/goto",
    "/api/games/{id}/players",
    "/api/games/{id}/sgf",
    "/api/games/{id}/swap",
    "/api/games/{id}/undo",
    "/api/games/{id}/resign",
    "/api/games/{id}/agent-move",
    "/api/games/{id}/record",
    "/api/games/{id}/evaluate",
    "/api/games/{id}/values",
    "/api/games/{id}/search",
    "/api/games/{id}/promote",
    "/api/games/{id}/delete-variation",
    "/api/games?offset={odd}&limit={odd}",
    "/api/games/{id}?version={odd}",
    "/api/records",
    "/api/openings",
    "/api/board?side={odd}",
    "/api/games/{id}?ply={odd}",
    "/static/../server.py",
    "/static/%2e%2e/api.py",
    "/api/games/{id}/../../x",
    "/nowhere",
]
_RAW_BODIES = [
    b"{",
    b"[]",
    b"null",
    b'"text"',
    b"\xff\xfe",
    b"{" * 5000,
    b'{"side": 4,}',
    b"1e999",
    b'{"a": NaN}',
    b"  ",
    b'{"move": "a1"}' * 3,
]


def _body(rng: random.Random) -> tuple[bytes, str]:
    """A malformed or odd body and its content type."""
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(_RAW_BODIES), "application/json"
    if kind < 0.4:
        return b'{"move": "a1"}', rng.choice(
            ["text/plain", "", "application/x-www-form-urlencoded"]
        )
    fields = {rng.choice(_FIELDS): rng.choice(_ODD_VALUES) for _ in range(rng.randint(0, 3))}
    return json.dumps(fields).encode(), "application/json"


def test_malformed_requests_get_4xx_and_leave_the_server_answering():
    rng = random.Random(0)
    app = create_app(side=4, allowed_hosts=["testserver"])
    with TestClient(app) as client:  # unexpected exceptions are raised here: a 500 fails
        real = client.post("/api/games", json={"side": 3}).json()["id"]
        statuses, deleted = set(), False
        for _ in range(NUM_REQUESTS):
            game_id = rng.choice([real, "nope", "", "%00", "a" * 300])
            path = rng.choice(_PATHS).format(
                id=game_id, odd=rng.choice(["x", "-1", "99", "1e3", ""])
            )
            method = rng.choice(["GET", "POST", "POST", "DELETE", "PUT"])
            body, content_type = _body(rng)
            headers = {"content-type": content_type} if content_type else {}
            answer = client.request(method, path, content=body, headers=headers)
            statuses.add(answer.status_code)
            gone = method == "DELETE" and path.split("?")[0] == f"/api/games/{real}"
            deleted |= gone and answer.status_code == 200
            assert answer.status_code < 500, (method, path, body[:80], answer.text)
            if answer.status_code >= 400 and not path.startswith("/static"):
                message = answer.json()["error"]
                assert message and "\n" not in message and "Traceback" not in message
        app.state.store.close()  # searches the fuzz started by chance
        assert statuses & {400, 404, 405, 409, 415}
        assert client.get(f"/api/games/{real}").status_code == (404 if deleted else 200)
        assert client.post("/api/games", json={"side": 4, "agent": "random"}).status_code == 201
