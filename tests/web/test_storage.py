"""The games file cannot lie: checked when the server opens it (empty, truncated, damaged,
read-only, another program's: refused in one line that says what to do, or served read-only on
request), a move answered as played only once it is on disk, a rolling copy to restore."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
from starlette.testclient import TestClient

from trapy_rl.web.server import create_app, main
from trapy_rl.web.sessions import SessionStore
from trapy_rl.web.storage import (
    SCHEMA_VERSION,
    GameDatabase,
    GamesFileError,
    ReadOnlyError,
    backup_path,
    restore,
)

ROOT = Path(__file__).resolve().parents[2]
GAMES = 12


def make_games(path: Path, games: int = GAMES) -> list[str]:
    """A games file of ``games`` games of three moves (side 4), closed; their ids."""
    store = SessionStore(GameDatabase(path))
    ids = []
    for _ in range(games):
        session = store.create(side=4, human=None)
        for move in ("a1", "b2", "c3"):
            session.play(move)
        ids.append(session.id)
    store.db.close()
    return ids


def refusal(path: Path, **options) -> str:
    with pytest.raises(GamesFileError) as refused:
        GameDatabase(path, **options)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def serve(db, **options) -> TestClient:
    return TestClient(create_app(side=4, allowed_hosts=["testserver"], db=db, **options))


def damage_a_record(path: Path) -> None:
    """Overwrite a few bytes inside one game's JSON in the file: SQLite's checks still pass
    (they do not read the records' text), only reading the records finds it."""
    data = bytearray(path.read_bytes())
    at = data.index(b'"tree"')
    data[at : at + 6] = b"\x00\x00\x00\x00\x00\x00"
    path.write_bytes(bytes(data))


# ---------------------------------------------------------------------- the checks at start
def test_a_new_file_is_made_marked_and_copied(tmp_path):
    path = tmp_path / "games" / "web.sqlite"
    ids = make_games(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert backup_path(path).is_file()  # made at start and again at stop
    reopened = GameDatabase(path)
    assert sorted(row["id"] for row in reopened.list()) == sorted(ids)
    reopened.close()


def test_an_empty_file_is_refused_not_taken_for_a_new_one(tmp_path):
    path = tmp_path / "web.sqlite"
    path.write_bytes(b"")
    message = refusal(path)
    assert "is empty (0 bytes)" in message and "no copy to restore" in message
    assert path.stat().st_size == 0  # left as it was
    make_games(tmp_path / "other.sqlite")
    shutil.copy(backup_path(tmp_path / "other.sqlite"), backup_path(path))
    assert "--restore" not in refusal(path)  # the library names its own call
    assert "restore(" in refusal(path)


@pytest.mark.parametrize("cut", [100, 4096, 4096 + 1000, 3 * 4096 - 7])
def test_a_file_truncated_anywhere_is_refused_naming_its_copy(tmp_path, cut):
    path = tmp_path / "web.sqlite"
    make_games(path)
    size = path.stat().st_size
    assert cut < size
    with path.open("rb+") as handle:
        handle.truncate(cut)
    message = refusal(path, restore_hint="trapy-web --db F --restore")
    assert "restore its copy of" in message and "trapy-web --db F --restore" in message
    assert restore(path).startswith(f"restored {path} from its copy")
    again = GameDatabase(path)
    assert len(again.list()) == GAMES  # nothing lost
    again.close()
    (aside,) = tmp_path.glob("web.sqlite.damaged-*[0-9]")  # the damaged file is kept
    assert aside.stat().st_size == cut


def test_every_truncation_of_a_games_file_is_refused(tmp_path):
    path = tmp_path / "web.sqlite"
    make_games(path, 30)
    original = path.read_bytes()
    for cut in range(0, len(original), 512):
        path.write_bytes(original[:cut])
        refusal(path)


def test_a_damaged_record_is_refused_or_served_read_only_with_the_rest(tmp_path):
    path = tmp_path / "web.sqlite"
    ids = make_games(path)
    damage_a_record(path)
    with sqlite3.connect(path) as db:  # what SQLite itself says
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    message = refusal(path)
    assert f"1 of {GAMES} games that cannot be read" in message and "--read-only" in message
    with serve(path, read_only=True) as client:
        listed = client.get("/api/games")
        assert listed.status_code == 200  # not a 400 blaming the page
        body = listed.json()
        assert body["read_only"] and len(body["games"]) == GAMES - 1
        (damaged,) = body["damaged"]
        assert damaged["id"] in ids and "not JSON" in damaged["error"]
        answer = client.get(f"/api/games/{damaged['id']}")
        assert answer.status_code == 410 and "cannot be read" in answer.json()["error"]
        good = body["games"][0]["id"]
        assert client.get(f"/api/games/{good}").json()["moves"] == ["a1", "b2", "c3"]


def test_another_programs_sqlite_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    before = path.read_bytes()
    assert "without the games table" in refusal(path)
    assert path.read_bytes() == before
    path.write_text("hello")
    assert "not an SQLite file" in refusal(path)


def _without_permission_override() -> None:
    """As root, give up the capabilities that ignore file permissions (CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH), so that a read-only file is read-only to this process too."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl")


OPEN = """
import sys
from trapy_rl.web.storage import GameDatabase
db = GameDatabase(sys.argv[1], read_only=sys.argv[2] == "ro")
print(len(db.list()), db.read_only)
"""


def test_a_read_only_file_is_refused_or_served_read_only(tmp_path):
    path = tmp_path / "web.sqlite"
    make_games(path)
    path.chmod(0o444)
    tmp_path.chmod(0o555)  # nor can SQLite make its journal beside it
    try:
        runs = {
            mode: subprocess.run(
                [sys.executable, "-c", OPEN, str(path), mode],
                capture_output=True,
                text=True,
                timeout=120,
                preexec_fn=_without_permission_override,
            )
            for mode in ("rw", "ro")
        }
    finally:
        tmp_path.chmod(0o755)
    refused = runs["rw"]
    assert refused.returncode == 1 and "GamesFileError" in refused.stderr, refused.stderr
    assert "cannot be written" in refused.stderr and "--read-only" in refused.stderr
    served = runs["ro"]
    assert served.returncode == 0 and served.stdout.split() == [str(GAMES), "True"], served


# ---------------------------------------------------------------------- while serving
def test_a_move_the_file_cannot_take_is_not_played(tmp_path):
    path = tmp_path / "web.sqlite"
    with serve(path) as client:
        game = client.post("/api/games", json={"side": 4, "human": "blue"}).json()
        gid = game["id"]
        assert client.post(f"/api/games/{gid}/move", json={"move": "a1"}).status_code == 200
        store = client.app.state.store
        store.db._db.execute("PRAGMA query_only = ON")  # SQLite now refuses every write
        refused = client.post(f"/api/games/{gid}/move", json={"move": "b2"})
        assert refused.status_code == 503, refused.text
        assert "could not be written" in refused.json()["error"]
        shown = client.get(f"/api/games/{gid}").json()
        assert shown["moves"] == ["a1"] and len(shown["tree"]["moves"]) == 2  # as on disk
        for change in ("undo", "resign"):
            assert client.post(f"/api/games/{gid}/{change}", json={}).status_code == 503
        assert client.get(f"/api/games/{gid}").json() == shown
        new = client.post("/api/games", json={"side": 4})
        assert new.status_code == 503
        assert [g["id"] for g in client.get("/api/games").json()["games"]] == [gid]
        store.db._db.execute("PRAGMA query_only = OFF")  # the disk is back: play goes on
        assert client.post(f"/api/games/{gid}/move", json={"move": "b2"}).status_code == 200
    with serve(path) as client:  # what the file holds is what was shown
        assert client.get(f"/api/games/{gid}").json()["moves"] == ["a1", "b2"]


def test_read_only_serving_plays_no_move_and_the_page_is_told(tmp_path):
    path = tmp_path / "web.sqlite"
    (gid, *_) = make_games(path)
    before = path.read_bytes()
    with serve(path, read_only=True) as client:
        assert '"read_only": true' in client.get("/").text
        assert client.get("/api/games").json()["read_only"]
        answer = client.post(f"/api/games/{gid}/move", json={"move": "d1"})
        assert answer.status_code == 403 and "read-only" in answer.json()["error"]
        assert client.get(f"/api/games/{gid}").json()["moves"] == ["a1", "b2", "c3"]
        assert client.post("/api/games", json={"side": 4}).status_code == 403
        looked = client.post(f"/api/games/{gid}/goto", json={"node": 1})  # looking is allowed
        assert looked.status_code == 200 and looked.json()["moves"] == ["a1"]
    assert path.read_bytes() == before
    with pytest.raises(ReadOnlyError):
        GameDatabase(path, read_only=True).save("x", {}, {})


def test_the_copy_is_renewed_while_games_change(tmp_path, monkeypatch):
    from trapy_rl.web import storage

    path = tmp_path / "web.sqlite"
    make_games(path, 1)
    monkeypatch.setattr(storage, "BACKUP_INTERVAL_S", 0.0)
    store = SessionStore(GameDatabase(path))
    store.create(side=4)
    with sqlite3.connect(backup_path(path)) as copy:
        assert copy.execute("SELECT count(*) FROM games").fetchone()[0] == 2
    store.db.close()


# ---------------------------------------------------------------------- the command line
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--db", "/etc/hostname/games.sqlite"], "--db /etc/hostname/games.sqlite: /etc/hostname"),
        (["--db", "EMPTY"], "is empty (0 bytes)"),
        (["--db", "MISSING", "--read-only"], "no such file to serve read-only"),
        (["--db", ":memory:", "--restore"], "--restore: give the games file"),
        (["--db", "MISSING", "--restore"], "no copy to restore"),
    ],
)
def test_a_games_file_refused_is_one_line_naming_db(tmp_path, capsys, argv, words):
    (tmp_path / "empty.sqlite").write_bytes(b"")
    names = {"EMPTY": tmp_path / "empty.sqlite", "MISSING": tmp_path / "missing.sqlite"}
    argv = [str(names.get(a, a)) for a in argv]
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--side", "4", "--agent", "random", "--evaluator", "uct:4"])
    assert stopped.value.code in (1, 2)
    out, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert line.startswith("trapy-web: error: ") and words in line, line
    assert "serving" not in out


def run_web(*argv: str, **options) -> subprocess.Popen:
    code = "import sys; from trapy_rl.launch import web; sys.argv[0] = 'trapy-web'; "
    code += "sys.exit(web())"
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "TRAPY_DEBUG")}
    return subprocess.Popen(
        [sys.executable, "-c", code, "--side", "4", "--agent", "random", "--evaluator", "uct:4",
         *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **options,
    )  # fmt: skip


def test_a_busy_port_is_one_line_before_the_board_is_served(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        process = run_web("--port", str(port), "--db", str(tmp_path / "g.sqlite"))
        out, err = process.communicate(timeout=120)
    assert process.returncode == 1 and out == "", (out, err)
    assert err.splitlines() == [
        f"trapy-web: error: --port {port}: cannot listen on 127.0.0.1:{port} "
        "(Address already in use); give another --port"
    ], err


def test_the_board_is_served_at_the_address_it_prints(tmp_path):
    process = run_web("--port", "0", "--db", str(tmp_path / "g.sqlite"))
    try:
        line = process.stdout.readline()  # printed once it listens
        assert line.startswith("trapy-web: serving the board at http://127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1].strip(" /\n"))
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            connection.sendall(b"GET /api/games HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            assert connection.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0 and err == "", err
    assert out.splitlines()[-1] == "trapy-web: stopped", out


# trapy-web with a signal sent to itself at a moment of its start: just before it serves (the
# games file open, the port bound), or the moment the preparation thread starts reading the
# nets (side 10: the shipped nets), the moment a stop used to abort.
SIGNALLED_START = """
import os, signal, sys, time
import trapy_rl.web.server as server
if "{moment}" == "before serving":
    real = server._serve
    def _serve(*args):
        os.kill(os.getpid(), signal.{signame})
        time.sleep(10)
        return real(*args)
    server._serve = _serve
else:
    class Readiness(server.Readiness):
        def start(self):
            super().start()
            os.kill(os.getpid(), signal.{signame})
    server.Readiness = Readiness
from trapy_rl.launch import web
sys.argv[0] = "trapy-web"
sys.exit(web())
"""


def _signalled(tmp_path, moment: str, signame: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "TRAPY_DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", SIGNALLED_START.format(moment=moment, signame=signame),
         "--port", "0", "--db", str(tmp_path / "g.sqlite")],
        capture_output=True, text=True, env=env, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


@pytest.mark.parametrize(("signame", "code", "word"), [("SIGINT", 130, "interrupted"),
                                                       ("SIGTERM", 143, "terminated")])  # fmt: skip
def test_a_signal_before_the_server_serves_is_one_line(tmp_path, signame, code, word):
    process = _signalled(tmp_path, "before serving", signame)
    assert process.returncode == code, process
    assert process.stderr == f"trapy-web: {word}\n" and process.stdout == "", process


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_while_the_nets_are_prepared_stops_the_server_cleanly(tmp_path, signame):
    process = _signalled(tmp_path, "while preparing", signame)
    assert process.returncode == 0, process  # it serves already: stopped as any stop is
    assert "terminate called" not in process.stderr and process.stderr == "", process
    assert process.stdout.splitlines()[-1] == "trapy-web: stopped", process
