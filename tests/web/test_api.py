"""The web board's JSON API in process: games, moves, undo, analysis, records, and refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
from starlette.testclient import TestClient

from trapy_rl.analysis.openings import opening_table
from trapy_rl.eval.records import parse_records, replay_record
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState
from trapy_rl.web.server import create_app


@pytest.fixture
def client():
    app = create_app(side=4, allowed_hosts=["testserver"])
    with TestClient(app) as test_client:
        yield test_client


def new_game(client, **fields):
    answer = client.post("/api/games", json={"side": 4, **fields})
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_the_page_and_the_board_geometry_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "<svg" in page.text and '"side": 4' in page.text
    board = client.get("/api/board?side=4").json()
    assert board["num_cells"] == Board(4).num_cells == len(board["corners"])
    assert board["names"][0] == "a1" and len(board["bands"]) == 5
    assert board["palette"]["stones"]["1"] == "#1f5bd6"


def test_a_game_against_random_to_the_end_gives_a_record_that_replays(client):
    game = new_game(client, agent="random", seed=3, human="blue")
    gid = game["id"]
    while not game["winner"]:
        empty = [cell for cell, stone in enumerate(game["stones"]) if stone == 0]
        game = client.post(f"/api/games/{gid}/move", json={"move": Board(4).names[empty[0]]})
        game = game.json()
        if game["agent_to_move"]:
            game = client.post(f"/api/games/{gid}/agent-move", json={}).json()
    assert game["winning_group"] and all(
        game["stones"][c] == game["winner"] for c in game["winning_group"]
    )
    text = client.get(f"/api/games/{gid}/record").text
    (record,) = parse_records(text.splitlines(), source="download")
    assert record["agent_b"] == "human" and record["blue_agent"] == "human"
    assert replay_record(record, Board(4)).winner == game["winner"]


def test_swap_undo_and_resign(client):
    game = new_game(client, agent="random", seed=1, human="yellow")
    gid = game["id"]
    assert game["agent_to_move"]
    game = client.post(f"/api/games/{gid}/agent-move", json={}).json()
    assert game["swap_allowed"] and len(game["moves"]) == 1
    game = client.post(f"/api/games/{gid}/swap", json={}).json()
    assert game["moves"][1] == "swap" and sum(s == 2 for s in game["stones"]) == 1
    game = client.post(f"/api/games/{gid}/agent-move", json={}).json()
    undone = client.post(f"/api/games/{gid}/undo", json={}).json()
    assert undone["taken"] == game["moves"][1:] and undone["moves"] == game["moves"][:1]
    game = client.post(f"/api/games/{gid}/resign", json={}).json()
    assert game["winner"] == 1 and game["resigned"]
    assert json.loads(client.get(f"/api/games/{gid}/record").text)["resigned"] is True


def test_tabs_have_independent_games(client):
    first, second = new_game(client), new_game(client)
    client.post(f"/api/games/{first['id']}/move", json={"move": "a1"})
    assert client.get(f"/api/games/{second['id']}").json()["moves"] == []
    assert client.get(f"/api/games/{first['id']}").json()["moves"] == ["a1"]


def test_evaluate_values_and_a_search_with_visits_q_and_a_line(client):
    game = new_game(client)
    gid = game["id"]
    for move in ("d1", "b2"):
        client.post(f"/api/games/{gid}/move", json={"move": move})
    spec = "uct,num_rollouts=4"
    answer = client.post(f"/api/games/{gid}/evaluate", json={"evaluator": spec, "ply": 1}).json()
    assert answer["ply"] == 1 and -1 <= answer["value_blue"] <= 1
    legal = GameState.from_moves(["d1"], Board(4)).legal_mask()
    assert [p is not None for p in answer["policy"]] == legal.tolist()
    assert sum(p for p in answer["policy"] if p) == pytest.approx(1.0, abs=1e-5)
    curve = client.post(f"/api/games/{gid}/values", json={"evaluator": spec}).json()
    assert len(curve["values_blue"]) == 3
    started = client.post(f"/api/games/{gid}/search", json={"evaluator": spec, "simulations": 64})
    assert started.status_code == 202
    client.app.state.store.get(gid).search.wait(30)
    done = client.get(f"/api/games/{gid}/search").json()
    assert done["status"] == "done" and done["done"] == 64 and done["ply"] == 2
    result = done["result"]
    assert sum(v for v in result["visits"] if v) == 64 and result["pv"][0] == result["best"]
    assert all((q is None) == (not v) for q, v in zip(result["q"], result["visits"]))


def test_a_search_can_be_cancelled(client):
    gid = new_game(client)["id"]
    client.post(f"/api/games/{gid}/search", json={"evaluator": "uct", "simulations": 200_000})
    cancelled = client.delete(f"/api/games/{gid}/search").json()
    assert cancelled["status"] == "cancelled" and cancelled["done"] < 200_000


def test_a_loaded_record_is_replayed(client):
    moves = ["a1", "swap", "b1", "a2", "c1", "a3", "d1"]
    state = GameState.from_moves(moves, Board(4))
    line = {"side": 4, "moves": moves, "winner": state.winner, "blue_agent": "x"}
    games = client.post("/api/records", json={"text": json.dumps(line) + "\n"}).json()["games"]
    assert len(games) == 1
    game = new_game(client, tree=games[0]["tree"])
    assert game["moves"] == moves and game["winner"] == state.winner and game["agent"] is None
    assert client.get(f"/api/games/{game['id']}?ply=2").json()["stones"].count(2) == 1


def test_gtp_text_is_read_as_records(client):
    """A GTP session's log, and showboard's move line: each a game to replay."""
    log = "boardsize 4\n=\n\nplay b a1\n=\n\ngenmove y\n= swap\n\nplay b b1\n=\n\n"
    games = client.post("/api/records", json={"text": log}).json()["games"]
    assert [g["tree"]["moves"] for g in games] == [[None, "a1", "swap", "b1"]]
    assert "unfinished after 3 moves" in games[0]["label"]
    shown = "= \n...\nblue to move (move 3)\nmoves (side 4): a1 swap, blue resigned\n\n"
    (game,) = client.post("/api/records", json={"text": shown}).json()["games"]
    replayed = new_game(client, tree=game["tree"])
    assert replayed["moves"] == ["a1", "swap"] and replayed["winner"] == 2


def test_an_opening_table_is_read_by_cell(client):
    board = Board(4)
    v = np.linspace(0.1, 0.9, board.num_cells)
    table = opening_table(v, board, low=v - 0.05, high=v + 0.05)
    answer = client.post("/api/openings", json={"text": table.to_csv(index=False)}).json()
    assert answer["side"] == 4 and answer["rank"] == table["rank"].tolist()
    np.testing.assert_allclose(answer["v"], v)
    np.testing.assert_allclose(answer["low"], v - 0.05)
    assert answer["swap"] == (v > 0.5).tolist()
    bare = client.post("/api/openings", json={"text": opening_table(v, board).to_csv()})
    assert bare.status_code == 400 and "columns" in bare.json()["error"]  # the index column
    plain = opening_table(v, board).to_csv(index=False)
    assert client.post("/api/openings", json={"text": plain}).json()["low"][0] is None


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "words"),
    [
        ("post", "/api/games", {"side": 1}, 400, "board side"),
        ("post", "/api/games", {"side": 4, "agent": "nonsense:1"}, 400, "unknown agent spec"),
        ("post", "/api/games", {"side": 4, "agent": "net:/no/such.pt"}, 400, "/no/such.pt"),
        ("post", "/api/games", {"side": 4, "colour": "blue"}, 400, "unknown field 'colour'"),
        ("post", "/api/games", {"side": "4"}, 400, "must be an integer"),
        ("post", "/api/games", {"human": "red"}, 400, "'blue' or 'yellow'"),
        ("post", "/api/records", {"text": "{"}, 400, "not JSON"),
        ("post", "/api/records", {"text": "play b a1 a1"}, 400, "line 1"),
        ("post", "/api/openings", {"text": "cell,name\n0,a1"}, 400, "not an opening table"),
        ("post", "/api/openings", {"text": 3}, 400, "opening table's text"),
        (
            "post",
            "/api/records",
            {"text": "moves (side 4): a1 a1"},
            400,
            "line 1: move 2: a1: the cell",
        ),
        (
            "post",
            "/api/records",
            {"text": '{"side": 4, "moves": ["a1", "a1"], "winner": 0}'},
            400,
            "move 2: a1",
        ),
        ("post", "/api/records", {"text": '{"side": 4, "moves": ["z9"], "winner": 1}'}, 400, "z9"),
        ("get", "/api/nowhere", None, 404, "no such page"),
        ("get", "/api/games/ffff", None, 404, "no such game"),
        ("delete", "/api/games", None, 405, "not allowed"),
    ],
)
def test_bad_requests_get_a_4xx_and_one_line(client, method, path, body, status, words):
    answer = getattr(client, method)(path, **({"json": body} if body is not None else {}))
    assert answer.status_code == status, answer.text
    message = answer.json()["error"]
    assert words.lower() in message.lower() and "\n" not in message and "Traceback" not in message


def test_bad_moves_and_analysis_are_refused_in_one_line(client):
    gid = new_game(client, agent="random", seed=0)["id"]
    url = f"/api/games/{gid}"
    assert client.post(url + "/move", json={"move": "z9"}).status_code == 400
    assert client.post(url + "/move", json={"move": "swap"}).status_code == 400
    assert client.post(url + "/move", json={"move": "a1"}).status_code == 200
    answer = client.post(url + "/move", json={"move": "b1"})
    assert answer.status_code == 409 and "agent's turn" in answer.json()["error"]
    assert client.post(url + "/agent-move", json={}).status_code == 200
    assert "occupied" in client.post(url + "/move", json={"move": "a1"}).json()["error"]
    assert json.loads(client.get(url + "/record").text)["winner"] == 0  # unfinished, saved too
    assert client.post(url + "/move", content=b'{"move": "b1"}').status_code == 415
    assert client.post(url + "/evaluate", json={"evaluator": "random"}).status_code == 400
    assert client.post(url + "/evaluate", json={"evaluator": "uct", "ply": 9}).status_code == 400
    big = client.post(url + "/search", json={"evaluator": "uct", "simulations": 10**9})
    assert big.status_code == 400 and "simulations" in big.json()["error"]
    assert client.get(url + "?ply=x").status_code == 400
    assert client.get("/api/board?side=99").status_code == 400


def test_another_host_name_is_refused():
    app = create_app(side=4)  # loopback names only
    with TestClient(app, base_url="http://evil.example") as client:
        assert client.get("/").status_code == 400


def test_a_record_without_a_winner_gets_a_400_naming_the_field(client):
    """It answered 500 (a KeyError in replay_record) and reset the connection's next request."""
    answer = client.post("/api/games", json={"record": {"side": 4, "moves": ["a1", "b1"]}})
    assert answer.status_code == 400, answer.text
    assert "'winner'" in answer.json()["error"] and "\n" not in answer.json()["error"]
    assert client.get("/api/agents").status_code == 200  # the next request is answered
