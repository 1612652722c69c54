"""The web board's games kept: in a database across restarts, never evicted, as trees of
variations, saved and loaded as SGF and records, analysed live."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
from starlette.testclient import TestClient

from trapy_rl.agents import kinds as agent_kinds
from trapy_rl.agents import register_agent_kind
from trapy_rl.agents.random import RandomAgent
from trapy_rl.game.board import Board
from trapy_rl.web.opponents import default_specs
from trapy_rl.web.readiness import Readiness
from trapy_rl.web.server import create_app, main
from trapy_rl.web.sgf import sgf_from_tree, trees_from_sgf
from trapy_rl.web.storage import default_database_path
from trapy_rl.web.tree import ROOT, GameTree


class BrokenAgent(RandomAgent):
    def act(self, batch, games):
        raise RuntimeError("out of memory")


@pytest.fixture
def broken_kind(monkeypatch):
    """The agent kind ``broken`` for one test, the registry restored after it."""
    monkeypatch.setattr(agent_kinds, "_REGISTRY", dict(agent_kinds._REGISTRY))
    register_agent_kind("broken", lambda spec, *, board, seed: BrokenAgent(), usage="broken")


def serve(db) -> TestClient:
    return TestClient(create_app(side=4, allowed_hosts=["testserver"], db=db))


@pytest.fixture
def client():
    with serve(":memory:") as test_client:
        yield test_client


def post(client, path, body=None, status=200):
    answer = client.post(path, json=body or {})
    assert answer.status_code == status, answer.text
    return answer.json()


def test_a_game_survives_a_restart_of_the_server_where_it_was(tmp_path):
    db = tmp_path / "games.sqlite"
    with serve(db) as client:
        game = post(client, "/api/games", {"side": 4, "agent": "random", "seed": 1}, 201)
        gid = game["id"]
        post(client, f"/api/games/{gid}/move", {"move": "a1"})
        before = post(client, f"/api/games/{gid}/agent-move")
    with serve(db) as client:  # a new server on the same file
        after = client.get(f"/api/games/{gid}").json()
        assert after["moves"] == before["moves"] and after["agent"] == "random"
        assert not after["agent_to_move"]
        assert post(client, f"/api/games/{gid}/move", {"move": "b1"})["agent_to_move"]
        assert [g["id"] for g in client.get("/api/games").json()["games"]] == [gid]


def test_no_game_is_evicted_and_finished_ones_stay_downloadable(client):
    first = post(client, "/api/games", {"side": 4}, 201)["id"]
    for move in ("a1", "swap", "b1", "a2", "c1", "a3", "d1"):
        post(client, f"/api/games/{first}/move", {"move": move})
    post(client, f"/api/games/{first}/resign")
    for _ in range(70):  # more than the sessions kept in memory
        post(client, "/api/games", {"side": 4}, 201)
    record = json.loads(client.get(f"/api/games/{first}/record").text)
    assert record["winner"] == 1 and record["resigned"] and len(record["moves"]) == 7
    listed = client.get("/api/games").json()
    assert listed["total"] == 71 and len(listed["games"]) == 50  # the first page
    ids = []
    for offset in range(0, 90, 30):  # every game listed, once, in pages
        page = client.get(f"/api/games?offset={offset}&limit=30").json()
        ids += [g["id"] for g in page["games"]]
    assert len(ids) == len(set(ids)) == 71 and ids[-1] == first


def test_moves_at_an_earlier_position_make_variations_and_undo_keeps_them(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    for move in ("a1", "b1", "c1"):
        game = post(client, f"/api/games/{gid}/move", {"move": move})
    a1 = game["line"][1]
    game = post(client, f"/api/games/{gid}/goto", {"node": a1})
    assert game["moves"] == ["a1"] and game["line"] == [0, 1, 2, 3]  # the line goes on
    game = post(client, f"/api/games/{gid}/move", {"move": "d1"})
    assert game["moves"] == ["a1", "d1"] and game["tree"]["parents"] == [-1, 0, 1, 2, 1]
    game = post(client, f"/api/games/{gid}/move", {"move": "b2"})
    undone = post(client, f"/api/games/{gid}/undo")
    assert undone["taken"] == ["b2"] and len(undone["tree"]["moves"]) == 5  # b2 removed
    game = post(client, f"/api/games/{gid}/goto", {"node": 2})
    assert game["moves"] == ["a1", "b1"]
    assert client.post(f"/api/games/{gid}/goto", json={"node": 9}).status_code == 400


def test_any_position_is_played_on_against_an_agent(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    for move in ("a1", "b1", "c1"):
        post(client, f"/api/games/{gid}/move", {"move": move})
    post(client, f"/api/games/{gid}/goto", {"node": 1})
    game = post(client, f"/api/games/{gid}/players", {"human": "blue", "agent": "random"})
    assert game["agent_to_move"] and game["agent"] == "random"
    game = post(client, f"/api/games/{gid}/agent-move")
    assert len(game["moves"]) == 2 and game["moves"][0] == "a1" and not game["agent_to_move"]


def test_an_agent_that_fails_leaves_the_game_as_it_was(client, broken_kind):
    gid = post(client, "/api/games", {"side": 4, "agent": "broken"}, 201)["id"]
    post(client, f"/api/games/{gid}/move", {"move": "a1"})
    answer = client.post(f"/api/games/{gid}/agent-move", json={})
    assert answer.status_code == 502 and "out of memory" in answer.json()["error"]
    game = client.get(f"/api/games/{gid}").json()
    assert game["moves"] == ["a1"] and game["agent_to_move"]


def test_sgf_round_trip_with_variations_and_a_resignation(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    for move in ("b2", "swap", "c1"):
        post(client, f"/api/games/{gid}/move", {"move": move})
    post(client, f"/api/games/{gid}/goto", {"node": 1})
    post(client, f"/api/games/{gid}/move", {"move": "a1"})
    post(client, f"/api/games/{gid}/goto", {"node": 3})
    post(client, f"/api/games/{gid}/resign")
    text = client.get(f"/api/games/{gid}/sgf").text
    assert "GM[Trap Y]" in text and "SZ[4]" in text and "RE[B+R]" in text
    assert ";B[b2](;W[swap];B[c1];W[resign])(;W[a1])" in text.replace("\n", "")
    (game,) = post(client, "/api/records", {"text": text})["games"]
    loaded = post(client, "/api/games", {"side": 4, "tree": game["tree"]}, 201)
    original = client.get(f"/api/games/{gid}").json()["tree"]
    assert loaded["tree"] == original and loaded["winner"] == 1 and loaded["resigned"]


def test_a_resignation_in_a_side_variation_survives_the_sgf_round_trip(client):
    """Only the main line's result was written (RE), so this resignation was lost."""
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    for move in ("b2", "swap", "c1"):
        post(client, f"/api/games/{gid}/move", {"move": move})
    post(client, f"/api/games/{gid}/goto", {"node": 1})
    a1 = post(client, f"/api/games/{gid}/move", {"move": "a1"})["node"]
    post(client, f"/api/games/{gid}/resign")  # blue, to move after a1, resigns there
    text = client.get(f"/api/games/{gid}/sgf").text
    assert "RE[" not in text  # the main line is unfinished
    assert ";B[b2](;W[swap];B[c1])(;W[a1];B[resign])" in text.replace("\n", "")
    (game,) = post(client, "/api/records", {"text": text})["games"]
    assert game["tree"]["resigned"] == {str(a1): 1}
    loaded = post(client, "/api/games", {"side": 4, "tree": game["tree"]}, 201)
    assert loaded["tree"] == client.get(f"/api/games/{gid}").json()["tree"]
    assert not loaded["winner"]  # shown at the main line's end, which goes on


def test_an_unfinished_game_is_saved_and_loaded_as_a_record(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    post(client, f"/api/games/{gid}/move", {"move": "b2"})
    text = client.get(f"/api/games/{gid}/record").text
    assert json.loads(text)["winner"] == 0
    (game,) = post(client, "/api/records", {"text": text})["games"]
    assert "unfinished after 1 moves" in game["label"]
    assert post(client, "/api/games", {"tree": game["tree"], "side": 4}, 201)["moves"] == ["b2"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("(;GM[Trap Y]SZ[4];B[a1];W[a1])", "game 1: move 2: W[a1]"),
        ("(;GM[Trap Y]SZ[4];B[a1];B[b1])", "move 2: B[b1], but yellow (W) is to move"),
        ("(;GM[Trap Y]SZ[4];B[a1](;W[b1])(;W[z9]))", "move 2: W[z9]"),
        ("(;GM[1]SZ[19];B[dd])", "GM[1] is not Trap Y"),
        ("(;GM[Trap Y];B[a1])", "SZ"),
        ("(;GM[Trap Y]SZ[4]AB[a1])", "setup stones"),
        ("(;GM[Trap Y]SZ[4];B[a1];W[resign];B[b1])", "move 2: B[b1]: b1: the game is over"),
        ("(;GM[Trap Y]SZ[4];B[a1]", "not an SGF file"),
    ],
)
def test_a_bad_sgf_is_refused_naming_the_move(client, text, words):
    answer = client.post("/api/records", json={"text": text})
    assert answer.status_code == 400 and words in answer.json()["error"], answer.text


def test_sgf_of_a_random_tree_reads_back_the_same():
    board, rng = Board(3), __import__("random").Random(0)
    tree = GameTree(board)
    for _ in range(40):
        node = rng.randrange(len(tree))
        state = tree.state(node)
        if state.is_over:
            continue
        if rng.random() < 0.15:  # resignations anywhere, before or after their node's children
            tree.resign(node, rng.choice((1, 2)))
        else:
            legal = [a for a, ok in enumerate(state.legal_mask()) if ok]
            tree.add(node, rng.choice(legal))
    assert len(tree.resigned) > 1
    ((back, names),) = trees_from_sgf(sgf_from_tree(tree, names=("x", "y", False)))
    assert shape(back, ROOT) == shape(tree, ROOT) and names == ("y", "x", True)


def shape(tree: GameTree, node: int) -> tuple:
    """The tree below ``node`` without its numbering: (move, who resigned there, children's
    shapes in order)."""
    return (
        tree.actions[node],
        tree.resigned.get(node),
        [shape(tree, child) for child in tree.children[node]],
    )


def test_a_search_streams_its_progress_as_server_sent_events(client):
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    game = post(client, f"/api/games/{gid}/move", {"move": "b2"})
    body = {"evaluator": "uct,num_rollouts=2", "simulations": 96, "node": game["node"]}
    assert client.post(f"/api/games/{gid}/search", json=body).status_code == 202
    with client.stream("GET", f"/api/games/{gid}/search/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data:")]
    assert events[-1]["status"] == "done" and events[-1]["done"] == 96
    assert events[-1]["node"] == game["node"] and events[-1]["result"]["pv"]
    assert [e["version"] for e in events] == sorted({e["version"] for e in events})


def test_a_replaced_search_ends_its_event_stream_saying_so(client):
    """A page that watched it must not start it again, as it does when a stream breaks off."""
    gid = post(client, "/api/games", {"side": 4}, 201)["id"]
    node = post(client, f"/api/games/{gid}/move", {"move": "b2"})["node"]
    body = {"evaluator": "uct,num_rollouts=2", "simulations": 200_000, "node": node}
    assert client.post(f"/api/games/{gid}/search", json=body).status_code == 202
    with client.stream("GET", f"/api/games/{gid}/search/events") as stream:
        lines = (line for line in stream.iter_lines() if line.startswith("data:"))
        assert json.loads(next(lines)[6:])["status"] == "running"
        assert client.post(f"/api/games/{gid}/search", json=body).status_code == 202
        events = [json.loads(line[6:]) for line in lines]
    assert events[-1]["status"] == "replaced"
    assert client.delete(f"/api/games/{gid}/search").json()["status"] == "cancelled"


def test_the_default_database_is_in_the_users_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_database_path() == tmp_path / "trapy_rl" / "web.sqlite"
    monkeypatch.setenv("XDG_DATA_HOME", "")
    assert default_database_path().parts[-4:] == (".local", "share", "trapy_rl", "web.sqlite")


def test_the_shipped_nets_are_offered_by_name_and_are_the_default_on_side_10(client):
    presets = client.get("/api/agents").json()["presets"]
    specs = [p["spec"] for p in presets]
    assert specs[0] == "mcts:pretrained:200" == default_specs(10)[0]
    assert {"net:pretrained", "mcts:pretrained_seed1:800", "random"} <= set(specs)
    assert default_specs(7)[0].startswith("uct")
    assert default_specs(5)[0] == "mcts:pretrained_side5:200"  # the exact board's own net


def test_a_side_with_a_shipped_net_of_its_own_defaults_to_it(monkeypatch):
    from trapy_rl.web import opponents

    shipped = {"pretrained": {"side": 10}, "pool_a": {"side": 6, "pool": True},
               "pretrained_side6": {"side": 6}}  # fmt: skip
    monkeypatch.setattr(opponents, "pretrained_names", lambda: sorted(shipped))
    monkeypatch.setattr(opponents, "pretrained_info", shipped.__getitem__)
    assert default_specs(6) == ("mcts:pretrained_side6:200", "mcts:pretrained_side6:400")
    assert default_specs(10) == (opponents.DEFAULT_AGENT, opponents.DEFAULT_EVALUATOR)
    assert default_specs(7) == (opponents.OTHER_SIDE_AGENT, opponents.OTHER_SIDE_EVALUATOR)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--threads", "0"], "--threads"),
        (["--side", "1"], "side"),
        (["--port", "-1"], "--port"),
        (["--agent", "wizard"], "--agent: unknown agent spec 'wizard'"),
        (["--side", "4", "--evaluator", "random"], "--evaluator: 'random' has no evaluator"),
    ],
)
def test_bad_options_of_trapy_web_are_one_line(capsys, argv, words):
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--db", ":memory:"])
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("trapy-web: error:") and words in line


def test_the_preparation_reads_the_nets_in_the_background_and_skips_a_bad_spec():
    readiness = Readiness(["mcts:pretrained:8", "nonsense:1", ""], 10)
    assert readiness.payload() | {"seconds": 0} == {
        "ready": False,
        "done": 0,
        "total": 2,
        "step": None,
        "seconds": 0,
    }
    readiness.start()
    assert readiness.wait_blocking(120)
    assert readiness.payload()["ready"] and readiness.payload()["done"] == 2
