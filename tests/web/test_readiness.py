"""A fresh ``trapy-web`` with the shipped net: the requests that need a net, fired from the
first moment the server answers, are awaited while the net is prepared, never answered 5xx;
the server says how far its preparation is (``GET /api/ready``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
pytest.importorskip("uvicorn", reason="the web board needs the 'web' extra")

from trapy_rl.pretrained import pretrained_names

ROUNDS = 3  # bursts of requests after the first answer
START_S = 120  # bounds: the server's start and each request
REQUEST_S = 120


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict]:
    """(status, JSON answer) of one request to the loopback server (``{}`` when not JSON)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_S) as answer:
            status, text = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, {}


@pytest.fixture
def fresh_server():
    """``trapy-web`` on side 10 (the shipped net for the opponent and the analysis) in its own
    process, on a free loopback port; its URL once ``GET /`` first answers."""
    if "pretrained" not in pretrained_names():
        pytest.skip("the shipped net is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "trapy_rl.web.server", "--port", str(port), "--db", ":memory:"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_S
    try:
        while True:  # the first moment the server answers
            assert process.poll() is None, process.stdout.read().decode()
            assert time.monotonic() < deadline, "the server did not answer"
            try:
                with urllib.request.urlopen(url + "/", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.01)
        yield url
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0].decode()
        assert "Traceback" not in output, output


def test_requests_from_the_first_answer_on_are_awaited_never_answered_5xx(fresh_server):
    url = fresh_server
    status, ready = call(url + "/api/ready")
    assert status == 200 and set(ready) >= {"ready", "done", "total", "step"}, ready
    seen: list[tuple[str, int, str]] = []
    lock = threading.Lock()

    def fire(name: str, method: str, path: str, body: dict | None = None) -> None:
        status, answer = call(url + path, method, body)
        with lock:
            seen.append((name, status, str(answer.get("error", ""))))

    for _ in range(ROUNDS):
        body = {"side": 10, "human": "yellow", "agent": "mcts:pretrained:50"}
        status, game = call(url + "/api/games", "POST", body)
        assert status == 201, game
        path = f"/api/games/{game['id']}"
        node = {"evaluator": "mcts:pretrained:400", "node": 0}
        threads = [
            threading.Thread(target=fire, args=args)
            for args in (
                ("agent-move", "POST", path + "/agent-move", {}),
                ("evaluate", "POST", path + "/evaluate", node),
                ("search", "POST", path + "/search", {**node, "simulations": 50}),
                ("values", "POST", path + "/values", {"evaluator": "mcts:pretrained:400"}),
            )
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(REQUEST_S)
        status, job = call(url + path + "/search")
        seen.append(("search result", status, str(job.get("error") or "")))
        assert job.get("status") != "failed", job
    failed = [entry for entry in seen if entry[1] >= 500]
    assert not failed, failed
    assert {status for _, status, _ in seen} <= {200, 202, 409}, seen
    status, ready = call(url + "/api/ready")
    assert ready["ready"] is True and ready["done"] == ready["total"], ready
