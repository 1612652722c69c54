"""The page in headless Chromium against a running server: a whole game by clicks on a small
board against random, the swap, undo, the winner shown, an analysis, and a screenshot."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
playwright_api = pytest.importorskip("playwright.sync_api", reason="needs the 'web' extra")
uvicorn = pytest.importorskip("uvicorn", reason="needs the 'web' extra")

from trapy_rl.agents import register_agent_kind  # noqa: E402
from trapy_rl.agents.random import RandomAgent  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH (apt-get install chromium; make test installs it as root)",
)


class SleepyAgent(RandomAgent):
    """Random moves after a pause: an agent that is still thinking when the page acts."""

    def act(self, batch, games):
        time.sleep(SLEEP_S)
        return super().act(batch, games)


SLEEP_S = 2.0
register_agent_kind(
    "sleepy",
    lambda spec, *, board, seed: SleepyAgent(seed=seed, name="sleepy"),
    usage="sleepy",
    replace=True,
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    from trapy_rl.web.server import create_app

    port = _free_port()
    app = create_app(side=4, agent="random", evaluator="uct,num_rollouts=4")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, server_url):
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.goto(server_url)
    page.wait_for_selector("#cell-a1")
    yield page
    page.close()


def your_turn_or_over(page) -> None:
    page.wait_for_function(
        "() => { const s = document.getElementById('status').textContent;"
        " return s.includes('(you)') || s.includes('wins'); }",
        timeout=20_000,
    )


def stones(page) -> int:
    return page.locator("circle.stone").count()


def test_a_game_against_random_by_clicks_with_swap_and_undo_ends_with_the_winner(page):
    page.select_option("#colour", "yellow")
    page.fill("#agent", "random")
    page.click("#new-game")
    page.wait_for_selector("#swap", state="visible")  # the new game, random's first move made
    your_turn_or_over(page)
    assert page.locator("circle.stone[data-stone='1']").count() == 1  # random opened
    page.click("#swap")
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 2")
    your_turn_or_over(page)
    assert page.locator("#move-list li").nth(1).text_content() == "swap"
    names = page.eval_on_selector_all("polygon.cell", "cells => cells.map(c => c.dataset.name)")

    def click_an_empty_cell() -> None:
        taken = set(page.eval_on_selector_all("circle.stone", "s => s.map(c => c.dataset.name)"))
        name = next(n for n in names if n not in taken)
        before = page.locator("#move-list li").count()
        page.click(f"#cell-{name}")
        page.wait_for_function(
            f"() => document.querySelectorAll('#move-list li').length > {before}"
        )
        your_turn_or_over(page)

    click_an_empty_cell()
    moves = page.locator("#move-list li").count()
    page.click("#undo")
    page.wait_for_function(f"() => document.querySelectorAll('#move-list li').length < {moves}")
    assert page.locator("#move-list li").count() == 3  # back to the swap and random's reply
    while "wins" not in page.text_content("#status"):
        click_an_empty_cell()
    status = page.text_content("#status")
    assert ("blue wins" in status or "yellow wins" in status) and "#status.over"
    assert page.locator("polygon.win-edge").count() >= 2
    assert "disabled" not in page.get_attribute("#download", "class")
    assert page.text_content("#error") == ""


def test_an_analysis_shows_value_policy_and_a_search(page, tmp_path):
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(  # the new game: no agent, so no "(you)"
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    for name in ("d1", "b2", "c2"):
        page.click(f"#cell-{name}")
        page.wait_for_selector(f"circle.stone[data-name='{name}']")
    page.click("#evaluate")
    page.wait_for_function(
        "() => document.getElementById('value').textContent.includes('for blue')"
    )
    page.fill("#simulations", "200")
    page.click("#search")
    page.wait_for_function(
        "() => document.getElementById('pv').textContent.includes('search done')", timeout=30_000
    )
    assert page.locator("#board text").count() > 0  # visit counts and the line on the cells
    page.click("#plot-values")
    page.wait_for_selector("#plot polyline")
    page.click("#prev")
    page.wait_for_function(
        "() => document.getElementById('ply-label').textContent === 'move 2 / 3'"
    )
    assert stones(page) == 2
    page.screenshot(path=str(tmp_path / "page.png"))
    assert page.text_content("#error") == ""


def test_a_gtp_log_replays_and_an_opening_map_shows_on_the_board(page, tmp_path):
    import numpy as np

    from trapy_rl.analysis.openings import opening_table
    from trapy_rl.game.board import Board

    log = tmp_path / "session.gtp"
    log.write_text("boardsize 4\n=\n\nplay b d1\n=\n\ngenmove y\n= swap\n\nplay b a1\n=\n\n")
    page.set_input_files("#record-file", str(log))
    page.wait_for_selector("#record-games option", state="attached")
    page.click("#replay")
    page.wait_for_function(
        "() => document.getElementById('ply-label').textContent === 'move 0 / 3'"
    )
    page.click("#last")
    page.wait_for_selector("circle.stone[data-name='a1']")
    assert stones(page) == 2  # d1, yellow's after the swap, and a1

    board = Board(4)
    v = np.linspace(0.2, 0.8, board.num_cells)
    table = tmp_path / "openings.csv"
    opening_table(v, board).to_csv(table, index=False)
    page.set_input_files("#openings-file", str(table))
    page.wait_for_selector("#openings-table td")
    fairest = opening_table(v, board).sort_values("rank")["name"].iloc[0]
    assert page.locator("#openings-table tr").nth(1).locator("td").nth(1).text_content() == fairest
    assert page.locator("#board text", has_text="#1").count() == 1  # the fairest, marked
    assert page.text_content("#error") == ""


def test_new_game_while_the_agent_thinks_keeps_the_new_game(page):
    """The old reply, arriving after New game, switched the page back to the old game."""
    page.select_option("#colour", "yellow")
    page.fill("#agent", "sleepy")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('thinking')"
    )
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    new_url = page.url
    time.sleep(SLEEP_S + 1.0)  # the old game's reply has come back by now
    assert page.text_content("#status") == "move 1: blue to move"
    assert stones(page) == 0 and page.url == new_url
    page.click("#cell-a1")  # the new game is the one played
    page.wait_for_selector("circle.stone[data-name='a1']")
    assert page.text_content("#error") == ""
