"""One truth across tabs: every change names the game's version it was made from, a stale one
is refused (409) with the game unchanged, and a game's event stream tells the other tabs; and
the changes of the game list and the tree: delete a game, promote and delete a variation."""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
from starlette.testclient import TestClient

from trapy_rl.web.server import create_app


@pytest.fixture
def client():
    with TestClient(create_app(side=4, allowed_hosts=["testserver"])) as test_client:
        yield test_client


def post(client, path, body=None, status=200):
    answer = client.post(path, json=body or {})
    assert answer.status_code == status, answer.text
    return answer.json()


def test_a_move_from_a_stale_position_is_refused_and_the_game_is_unchanged(client):
    """A stale tab's move was played as a new branch at the position shown elsewhere."""
    game = post(client, "/api/games", {"side": 4}, 201)
    gid, seen = game["id"], game["version"]
    moved = post(client, f"/api/games/{gid}/move", {"move": "a1", "version": seen})  # tab A
    assert moved["version"] == seen + 1
    before = client.get(f"/api/games/{gid}").json()
    for path, body in (  # tab B, still showing the empty board
        ("/move", {"move": "b1"}),
        ("/swap", {}),
        ("/goto", {"node": 0}),
        ("/undo", {}),
        ("/resign", {}),
        ("/players", {"human": "blue", "agent": "random"}),
        ("/promote", {"node": 0}),
        ("/delete-variation", {"node": 1}),
    ):
        answer = client.post(f"/api/games/{gid}{path}", json={**body, "version": seen})
        assert answer.status_code == 409, (path, answer.text)
        assert "changed" in answer.json()["error"] and answer.json()["stale"] is True
    assert client.delete(f"/api/games/{gid}?version={seen}").status_code == 409
    assert client.get(f"/api/games/{gid}").json() == before


def test_two_tabs_moving_at_once_get_one_move_played(client):
    """Both moves were accepted, one of them as the wrong colour's."""
    game = post(client, "/api/games", {"side": 4}, 201)
    gid, seen = game["id"], game["version"]
    answers: list[int] = []
    barrier = threading.Barrier(2)

    def tab(move: str) -> None:
        barrier.wait(5)
        answer = client.post(f"/api/games/{gid}/move", json={"move": move, "version": seen})
        answers.append(answer.status_code)

    threads = [threading.Thread(target=tab, args=(m,)) for m in ("a1", "b1")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(answers) == [200, 409]
    after = client.get(f"/api/games/{gid}").json()
    assert len(after["moves"]) == 1 and len(after["tree"]["moves"]) == 2


def test_the_agents_move_from_a_stale_position_is_refused(client):
    game = post(client, "/api/games", {"side": 4, "agent": "random", "human": "yellow"}, 201)
    gid = game["id"]
    played = post(client, f"/api/games/{gid}/agent-move", {"version": game["version"]})
    answer = client.post(f"/api/games/{gid}/agent-move", json={"version": game["version"]})
    assert answer.status_code == 409
    assert client.get(f"/api/games/{gid}").json()["moves"] == played["moves"]


def test_a_games_event_stream_tells_its_version_and_its_deletion(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    version = post(client, f"/api/games/{gid}/move", {"move": "a1"})["version"]
    with client.stream("GET", f"/api/games/{gid}/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = (line for line in stream.iter_lines() if line.startswith("data:"))
        assert json.loads(next(lines)[6:]) == {"version": version}
        assert client.delete(f"/api/games/{gid}?version={version}").status_code == 200
        assert [json.loads(line[6:]) for line in lines] == [{"deleted": True}]
    assert client.get(f"/api/games/{gid}").status_code == 404
    assert gid not in [g["id"] for g in client.get("/api/games").json()["games"]]
    assert client.post(f"/api/games/{gid}/move", json={"move": "b1"}).status_code == 404


def test_a_variation_is_promoted_and_deleted(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    for move in ("a1", "b1", "c1"):
        game = post(client, f"/api/games/{gid}/move", {"move": move})
    a1 = game["line"][1]
    game = post(client, f"/api/games/{gid}/goto", {"node": a1})
    game = post(client, f"/api/games/{gid}/move", {"move": "d1"})  # a variation at move 2
    d1 = game["node"]
    assert game["tree"]["children"][a1] == [2, d1]
    game = post(client, f"/api/games/{gid}/promote", {"node": d1, "version": game["version"]})
    assert game["tree"]["children"][a1] == [d1, 2]  # the main line now
    game = post(client, f"/api/games/{gid}/goto", {"node": 0})
    assert [game["tree"]["moves"][n] for n in game["line"]] == [None, "a1", "d1"]
    sgf = client.get(f"/api/games/{gid}/sgf").text
    assert sgf.replace("\n", "").index("W[d1]") < sgf.replace("\n", "").index("W[b1]")
    game = post(client, f"/api/games/{gid}/goto", {"node": 3})  # c1, in the other line
    game = post(client, f"/api/games/{gid}/delete-variation", {"node": 2})  # b1 and c1
    assert game["tree"]["moves"] == [None, "a1", "d1"] and game["node"] == a1
    reloaded = client.get(f"/api/games/{gid}").json()
    assert reloaded["tree"] == game["tree"]
    answer = client.post(f"/api/games/{gid}/delete-variation", json={"node": 0})
    assert answer.status_code == 400 and "empty board" in answer.json()["error"]
