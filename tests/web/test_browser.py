"""The page in headless Chromium against a running server: a whole game by clicks on a small
board against random, the swap, undo, the winner shown, an analysis, a screenshot; a side-10
game against the shipped net; a game that survives a reload and a restart of the server, New
game while the agent thinks, variations from an earlier position, live analysis (after a
restart of the server too), and an SGF file saved and opened again."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

pytest.importorskip("starlette", reason="the web board needs the 'web' extra")
playwright_api = pytest.importorskip("playwright.sync_api", reason="needs the 'web' extra")
uvicorn = pytest.importorskip("uvicorn", reason="needs the 'web' extra")

from trapy_rl.agents import kinds as agent_kinds  # noqa: E402
from trapy_rl.agents import register_agent_kind  # noqa: E402
from trapy_rl.agents.random import RandomAgent  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH (apt-get install chromium; make test installs it as root)",
)


class BrokenAgent(RandomAgent):
    """An agent that raises instead of moving."""

    def act(self, batch, games):
        raise RuntimeError("out of memory")


class SleepyAgent(RandomAgent):
    """Random moves after a pause: an agent that is still thinking when the page acts."""

    def act(self, batch, games):
        time.sleep(SLEEP_S)
        return super().act(batch, games)


SLEEP_S = 2.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(port: int, *, crash: bool = False, **options) -> Iterator[str]:
    """`create_app(**options)` served on 127.0.0.1:``port`` as ``trapy-web`` serves it, until
    the block ends; with ``crash``, stopped as a killed server stops: its responses cut off."""
    from trapy_rl.web.server import BoardServer, create_app

    app = create_app(**options)
    if crash:  # uvicorn alone, told to exit at once: no search is stopped, no stream ended
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
    else:
        server = BoardServer(app, host="127.0.0.1", port=port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.force_exit = crash
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive(), "the server did not stop within 10 s"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """The module's server, with the agent kind ``sleepy`` while it runs."""
    registry = dict(agent_kinds._REGISTRY)
    register_agent_kind(
        "sleepy", lambda spec, *, board, seed: SleepyAgent(seed=seed, name="sleepy"), usage="sleepy"
    )
    register_agent_kind("broken", lambda spec, *, board, seed: BrokenAgent(), usage="broken")
    try:
        with serving(_free_port(), side=4, agent="random", evaluator="uct,num_rollouts=4") as url:
            yield url
    finally:
        agent_kinds._REGISTRY.clear()
        agent_kinds._REGISTRY.update(registry)


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
    assert page.text_content("#error-text") == ""


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
    assert page.text_content("#error-text") == ""


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
    assert page.text_content("#error-text") == ""


def test_a_side_10_game_against_the_shipped_net_survives_a_reload_and_is_analysed(page):
    from trapy_rl.game.board import Board

    page.fill("#side", "10")
    page.fill("#agent", "mcts:pretrained:50")
    page.fill("#evaluator", "mcts:pretrained:50")
    page.click("#new-game")
    page.wait_for_function(  # the net loaded (a spinner meanwhile), the new board drawn
        "() => document.getElementById('status').textContent.includes('(you)')"
        f" && document.querySelectorAll('polygon.cell').length === {Board(10).num_cells}",
        timeout=60_000,
    )
    assert "10" in page.locator("#board text.coord").all_text_contents()
    for name in ("j3", "e5"):
        if page.locator(f"circle.stone[data-name='{name}']").count():
            continue  # taken by the net (after its swap the stone is yellow's)
        before = page.locator("#move-list li").count()
        page.click(f"#cell-{name}")
        page.wait_for_function(
            f"() => document.querySelectorAll('#move-list li').length >= {before + 2}"
        )
        your_turn_or_over(page)
    moves = page.locator("#move-list li").all_text_contents()
    page.reload()
    page.wait_for_selector("circle.stone")
    assert page.locator("#move-list li").all_text_contents() == moves
    assert page.input_value("#side") == "10"
    page.click("#evaluate")
    page.wait_for_function(
        "() => document.getElementById('value').textContent.includes('for blue')"
    )
    labels = page.locator("#board text:not(.coord)").all_text_contents()
    assert labels and "0" not in labels  # the policy in percent, only where it is not ~0
    assert page.text_content("#error-text") == ""


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
    assert page.text_content("#error-text") == ""


def play_against_random(page, moves: list[str]) -> None:
    """A new game as blue against random; ``moves`` played where they are free."""
    page.select_option("#colour", "blue")
    page.fill("#agent", "random")
    page.click("#new-game")
    your_turn_or_over(page)
    for name in moves:
        if page.locator(f"circle.stone[data-name='{name}']").count():
            continue
        before = page.locator("#move-list li").count()
        page.click(f"#cell-{name}")
        page.wait_for_function(  # the move and the reply (the swap leaves one stone)
            f"() => document.querySelectorAll('#move-list li').length >= {before + 2}"
        )
        your_turn_or_over(page)


def test_a_reload_mid_game_resumes_the_game_and_the_settings(page):
    play_against_random(page, ["a1", "d1"])
    url, shown = (
        page.url,
        page.eval_on_selector_all("circle.stone", "s => s.map(c => c.dataset.name)"),
    )
    assert "?game=" in url
    page.reload()
    page.wait_for_selector("circle.stone")
    your_turn_or_over(page)
    assert page.url == url and page.input_value("#agent") == "random"
    assert page.eval_on_selector_all("circle.stone", "s => s.map(c => c.dataset.name)") == shown
    page.goto(url.split("?")[0])  # no id in the address: this browser's last game, not a new one
    page.wait_for_selector("circle.stone")
    assert page.url == url


def test_a_restart_of_the_server_mid_game_resumes_the_game(browser, tmp_path):
    port, db = _free_port(), tmp_path / "games.sqlite"
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    with serving(port, side=4, agent="random", db=db) as url:
        page.goto(url)
        page.wait_for_selector("#cell-a1")
        play_against_random(page, ["b2"])
        shown = page.eval_on_selector_all("circle.stone", "s => s.map(c => c.dataset.name)")
    with serving(port, side=4, agent="random", db=db):  # a new server, the same file
        page.reload()
        page.wait_for_selector("circle.stone")
        your_turn_or_over(page)
        assert page.eval_on_selector_all("circle.stone", "s => s.map(c => c.dataset.name)") == shown
        page.click("#cell-a1" if "a1" not in shown else "#cell-d1")
        page.wait_for_function(
            f"() => document.querySelectorAll('circle.stone').length > {len(shown)}"
        )
        assert page.text_content("#error-text") == ""
    page.close()


def test_a_move_at_an_earlier_position_starts_a_variation_navigable_by_keys(page):
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    for name in ("d1", "b2", "c2"):
        page.click(f"#cell-{name}")
        page.wait_for_selector(f"circle.stone[data-name='{name}']")
    page.click("#move-list li >> nth=0")  # back to after d1
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 1")
    assert page.locator("#move-list li").count() == 3  # the line goes on past the position
    page.click("#cell-a1")
    page.wait_for_selector("circle.stone[data-name='a1']")
    assert page.locator("#variations li").count() == 1
    assert page.locator("#variations button.move").all_text_contents() == ["b2", "a1"]
    page.keyboard.press("ArrowUp")  # the other variation of this move
    page.wait_for_selector("circle.stone[data-name='b2']")
    assert page.locator("circle.stone[data-name='a1']").count() == 0
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("circle.stone[data-name='c2']")
    page.keyboard.press("ArrowDown")  # c2 has no sibling: nothing happens
    page.keyboard.press("Home")
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 0")
    page.click("#variations button.move >> text=a1")
    page.wait_for_selector("circle.stone[data-name='a1']")
    assert page.text_content("#error-text") == ""


def test_live_analysis_follows_the_position_until_stopped(page):
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    page.click("#cell-b2")
    page.wait_for_selector("circle.stone[data-name='b2']")
    page.click("#live")
    live = "() => document.getElementById('pv').textContent.includes('live, ')"
    page.wait_for_function(live)
    assert page.get_attribute("#live", "aria-pressed") == "true"
    page.wait_for_selector("circle.pv")  # the line as numbered stones, the visits beside them
    assert page.locator("#board text:not(.coord):not(.pv-number)").count() > 0
    assert page.locator("#value-text").text_content().startswith("blue ")
    page.click("#prev")  # a new position: the analysis starts again there
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 0")
    page.wait_for_function(live)
    page.click("#live")
    assert page.get_attribute("#live", "aria-pressed") == "false"
    game = page.url.split("game=")[1]
    status = page.evaluate(
        f"async () => (await (await fetch('/api/games/{game}/search')).json()).status"
    )
    assert status == "cancelled"
    assert page.text_content("#error-text") == ""


def test_live_analysis_comes_back_after_a_restart_of_the_server(browser, tmp_path):
    """The server waited for the page's event stream to end before it stopped (Ctrl-C), and
    the page never started the analysis again once the stream had ended; nor after a crash."""
    port, db = _free_port(), tmp_path / "games.sqlite"
    options = {"side": 4, "agent": "", "evaluator": "uct,num_rollouts=4", "db": db}
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    with serving(port, **options) as url:
        page.goto(url)
        page.wait_for_selector("#cell-b2")
        page.click("#cell-b2")
        page.wait_for_selector("circle.stone[data-name='b2']")
        page.click("#live")
        page.wait_for_function("() => document.getElementById('pv').textContent.includes('live, ')")
        search = f"{url}api/games/{page.url.split('game=')[1]}/search"
    with serving(port, crash=True, **options):  # a new server, the same games
        watched_again(page, search)
    with serving(port, **options):  # after a crash
        watched_again(page, search)
    page.close()


def watched_again(page, search: str) -> None:
    """The page's live analysis runs on this server (its search at ``search``) and is shown."""
    deadline = time.monotonic() + 15
    while not searching(search):
        assert time.monotonic() < deadline, "the page did not start the analysis again"
        time.sleep(0.2)
    page.wait_for_function("() => page.events && page.events.readyState === 1")  # watched
    page.wait_for_function("() => document.getElementById('pv').textContent.includes('live, ')")
    assert page.get_attribute("#live", "aria-pressed") == "true"
    assert page.text_content("#error-text") == ""


def searching(url: str) -> bool:
    """Whether the search at ``url`` (GET .../search) runs."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return json.load(answer)["status"] == "running"
    except OSError:  # no search yet (404), or no server
        return False


def test_an_sgf_with_a_variation_is_saved_and_opened_again(page, tmp_path):
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    for name in ("d1", "swap", "b2"):
        if name == "swap":
            page.click("#swap")
            page.wait_for_function("() => document.querySelectorAll('#move-list li').length === 2")
        else:
            page.click(f"#cell-{name}")
            page.wait_for_selector(f"circle.stone[data-name='{name}']")
    page.click("#move-list li >> nth=0")
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 1")
    page.click("#cell-a1")
    page.wait_for_selector("circle.stone[data-name='a1']")
    with page.expect_download() as download:
        page.click("#download-sgf")
    path = tmp_path / "game.sgf"
    download.value.save_as(path)
    text = path.read_text()
    assert "GM[Trap Y]" in text and "(;W[swap];B[b2])(;W[a1])" in text.replace("\n", "")
    page.set_input_files("#record-file", str(path))
    page.wait_for_selector("#record-games option", state="attached")
    assert "1 variations" in page.text_content("#record-games option")
    old = page.url
    page.click("#replay")
    page.wait_for_function(f"() => location.href !== {json.dumps(old)}")
    page.wait_for_function(
        "() => document.querySelectorAll('#variations button.move').length === 2"
    )
    assert page.locator("#variations button.move").all_text_contents() == ["swap", "a1"]
    assert page.text_content("#error-text") == ""


# ---------------------------------------------------------------------- a board you can trust
def api_call(url: str, method: str = "GET", body: dict | None = None) -> dict:
    """One JSON request to the loopback server (no page involved)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def test_the_page_waits_for_the_servers_preparation_then_the_opponent_moves(browser, tmp_path):
    """The page asked for the opponent's move at once, while the net was still prepared."""
    from trapy_rl.web.readiness import Readiness

    port, db = _free_port(), tmp_path / "games.sqlite"
    with serving(port, side=4, agent="random", db=db) as url:
        game = api_call(
            url + "api/games", "POST", {"side": 4, "human": "yellow", "agent": "random"}
        )
    slow = Readiness(["a net"], 4, prepare_one=lambda spec, side: time.sleep(3.0))
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    with serving(port, side=4, agent="random", db=db, prepare=slow) as url:
        page.goto(f"{url}?game={game['id']}")  # the opponent is to move in this game
        page.wait_for_selector("#ready", state="visible")
        assert "preparing" in page.text_content("#ready-text")
        assert "a net" in page.text_content("#ready-text")
        your_turn_or_over(page)  # then the move, asked once the server is ready
        assert page.is_hidden("#ready") and stones(page) == 1
        assert page.text_content("#error-text") == ""
    page.close()


def test_a_failed_opponent_move_leaves_the_page_usable_and_is_asked_again(
    browser, server_url, tmp_path
):
    """The page kept '...is thinking' and its spinner and ignored clicks until a reload
    (``server_url``: the kind ``sleepy`` registered)."""
    port, db = _free_port(), tmp_path / "games.sqlite"
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    with serving(port, crash=True, side=4, agent="sleepy", db=db) as url:
        page.goto(url)
        page.wait_for_selector("#cell-a1")
        page.select_option("#colour", "blue")
        page.fill("#agent", "sleepy")
        page.click("#new-game")
        page.wait_for_function(
            "() => document.getElementById('status').textContent.includes('(you)')"
        )
        page.click("#cell-b2")
        page.wait_for_function(
            "() => document.getElementById('status').textContent.includes('thinking')"
        )
    # the server died while the opponent thought: the page says so and stays usable
    page.wait_for_function("() => document.getElementById('error-text').textContent !== ''")
    error = page.text_content("#error-text")
    assert "stopped or restarting" in error and "asked again" in error and "Failed" not in error
    assert "thinking" not in page.text_content("#status") and page.is_hidden("#spinner")
    assert page.is_enabled("#undo") and page.is_enabled("#prev")
    with serving(port, side=4, agent="sleepy", db=db):  # back: the move is asked again
        page.wait_for_function(
            "() => document.querySelectorAll('#move-list li').length === 2"  # (a swap or a stone)
            " && document.getElementById('status').textContent.includes('(you)')",
            timeout=30_000,
        )
        assert page.text_content("#error-text") == ""
    page.close()


def test_an_agent_that_fails_is_said_in_words_with_a_retry(page):
    page.select_option("#colour", "yellow")
    page.fill("#agent", "broken")
    page.click("#new-game")
    page.wait_for_selector("#retry", state="visible")
    assert "the opponent did not move" in page.text_content("#error-text")
    assert "thinking" not in page.text_content("#status") and page.is_hidden("#spinner")
    assert page.is_enabled("#play-here") and page.is_enabled("#agent-move")
    page.click("#retry")  # asks again (and fails again, in words)
    page.wait_for_selector("#retry", state="visible")


def test_live_analysis_says_it_stopped_when_the_server_comes_back_without_the_game(
    browser, tmp_path
):
    port = _free_port()
    options = {"side": 4, "agent": "", "evaluator": "uct,num_rollouts=4"}
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    with serving(port, db=tmp_path / "a.sqlite", **options) as url:
        page.goto(url)
        page.wait_for_selector("#cell-b2")
        page.click("#cell-b2")
        page.click("#live")
        page.wait_for_function("() => document.getElementById('pv').textContent.includes('live, ')")
    with serving(port, db=tmp_path / "b.sqlite", **options):  # another games file
        page.wait_for_function(
            "() => document.getElementById('pv').textContent.includes('live analysis stopped')",
            timeout=20_000,
        )
        assert page.get_attribute("#live", "aria-pressed") == "false"
        assert "no such game" in page.text_content("#error-text")
    page.close()


def test_two_tabs_of_a_game_follow_each_other_and_a_stale_move_is_refused(browser, server_url):
    """A stale tab's move was played elsewhere as a new branch, and the other tab never knew."""
    first = browser.new_page(viewport={"width": 1200, "height": 800})
    first.goto(server_url)
    first.wait_for_selector("#cell-a1")
    first.fill("#agent", "")
    first.click("#new-game")
    first.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    second = browser.new_page(viewport={"width": 1200, "height": 800})
    second.goto(first.url)
    second.wait_for_selector("#cell-a1")
    first.click("#cell-a1")
    second.wait_for_selector("circle.stone[data-name='a1']")  # followed, without a reload
    # the second tab stops hearing (as a tab whose stream broke): its next move is stale
    second.evaluate(
        "() => { page.gameEvents.close(); page.gameEvents = {gameId: page.game.id, close() {}}; }"
    )
    first.click("#cell-b1")
    first.wait_for_selector("circle.stone[data-name='b1']")
    second.click("#cell-c1")
    second.wait_for_selector("circle.stone[data-name='b1']")  # reloaded as it stands
    assert "changed in another tab" in second.text_content("#error-text")
    assert second.locator("circle.stone[data-name='c1']").count() == 0
    game = api_call(f"{server_url}api/games/{first.url.split('game=')[1]}")
    assert game["moves"] == ["a1", "b1"] and len(game["tree"]["moves"]) == 3  # unchanged
    first.close()
    second.close()


def test_the_analysis_view_reads_at_a_glance(page, server_url):
    page.select_option("#colour", "yellow")
    page.fill("#agent", "random")
    page.click("#new-game")
    your_turn_or_over(page)
    assert page.text_content("#players") == "This game (side 4): yellow: you, blue: random"
    page.select_option("#colour", "blue")  # the next game's setting: the header keeps this one's
    page.fill("#agent", "")
    assert "yellow: you" in page.text_content("#players")
    assert "three of the five coloured edges" in page.text_content("#goal")
    assert "neutral" in page.get_attribute("#value-bar", "class")
    assert page.text_content("#value-text") == "not analysed yet"
    radius = page.get_attribute("circle.stone", "r")
    page.fill("#simulations", "300")
    page.click("#search")
    page.wait_for_function(
        "() => document.getElementById('pv').textContent.includes('search done')"
    )
    assert page.get_attribute("circle.stone", "r") == radius  # stones keep their size
    assert "neutral" not in page.get_attribute("#value-bar", "class")
    game = page.url.split("game=")[1]
    job = api_call(f"{server_url}api/games/{game}/search")["result"]
    labelled = page.eval_on_selector_all(
        "#board text:not(.coord):not(.sub):not(.pv-number)",
        "ts => ts.map(t => document.elementsFromPoint(t.getBoundingClientRect().x + 1,"
        " t.getBoundingClientRect().y + 1).find(e => e.classList.contains('cell')).dataset.cell)",
    )
    assert 1 <= len(labelled) <= 5
    assert all(job["visits"][int(cell)] >= 3 for cell in labelled)
    best = max(range(len(job["visits"])), key=lambda a: job["visits"][a] or 0)
    # The best move outlined: its cell, or, when it is the swap, the one stone the swap takes.
    stone = page.get_attribute("circle.stone", "data-name")
    outlined = page.get_attribute("polygon.best", "data-name")
    assert outlined == (stone if job["best"] == "swap" else job["best"])
    assert job["best"] == page.evaluate(f"() => [...page.geometry.names, 'swap'][{best}]")
    assert page.locator("#candidates tr.best td").nth(1).text_content() == job["best"]
    page.fill("#top-k", "2")
    page.dispatch_event("#top-k", "change")
    assert page.locator("#board text.sub").count() <= 2
    page.check("#numbers")
    assert page.locator("text.move-number").count() == stones(page)
    page.uncheck("#numbers")
    assert page.locator("text.move-number").count() == 0
    players = page.eval_on_selector_all(
        "#move-list li", "ls => ls.map(l => l.className.split(' ')[0])"
    )
    assert players == ["blue", "yellow", "blue"][: len(players)]
    page.click("#live")
    page.wait_for_function("() => document.getElementById('pv').textContent.includes('live, ')")
    page.click("#live")
    page.wait_for_function("() => document.getElementById('pv').textContent.includes('stopped')")
    time.sleep(0.6)  # no late event makes it 'live' again
    assert "live," not in page.text_content("#pv")
    assert page.text_content("#error-text") == ""


def test_keyboard_play_and_resign_with_confirmation(page):
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    page.focus("#cell-a1")
    page.keyboard.press("Enter")
    page.wait_for_selector("circle.stone[data-name='a1']")
    page.fill("#move-input", "B2")
    page.press("#move-input", "Enter")
    page.wait_for_selector("circle.stone[data-name='b2']")
    page.fill("#move-input", "z9")
    page.press("#move-input", "Enter")
    assert "no cell z9" in page.text_content("#error-text")
    page.focus("#cell-c1")
    page.keyboard.press("ArrowLeft")  # navigation from the board
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 1")
    page.keyboard.press("End")
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 2")
    page.click("#resign")
    assert page.is_visible("#confirm") and "wins" not in page.text_content("#status")
    page.click("#confirm-no")
    assert page.is_hidden("#confirm") and "wins" not in page.text_content("#status")
    page.click("#resign")
    page.click("#confirm-yes")
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('by resignation')"
    )


def test_games_are_listed_in_pages_and_deleted(browser, tmp_path):
    port = _free_port()
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    with serving(port, side=4, agent="", db=tmp_path / "games.sqlite") as url:
        for _ in range(54):
            api_call(url + "api/games", "POST", {"side": 4})
        page.goto(url)  # the 55th game, new
        page.wait_for_selector("#cell-a1")
        page.wait_for_function(
            "() => document.getElementById('games-range').textContent === '1–50 of 55'"
        )
        assert page.locator("#games option").count() == 50
        page.click("#games-older")
        page.wait_for_function(
            "() => document.getElementById('games-range').textContent === '51–55 of 55'"
        )
        assert page.is_disabled("#games-older") and page.is_enabled("#games-newer")
        shown = page.url.split("game=")[1]
        page.click("#delete-game")
        assert page.is_visible("#confirm")
        page.click("#confirm-yes")
        page.wait_for_function(f"() => !location.href.includes({json.dumps(shown)})")
        listed = api_call(url + "api/games?limit=500")
        assert listed["total"] == 54 and shown not in [g["id"] for g in listed["games"]]
        assert "deleted" in page.text_content("#error-text")
    page.close()


def test_variations_are_promoted_deleted_and_drawn_as_a_tree(page):
    page.fill("#agent", "")
    page.click("#new-game")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'move 1: blue to move'"
    )
    for name in ("d1", "b2", "c2"):
        page.click(f"#cell-{name}")
        page.wait_for_selector(f"circle.stone[data-name='{name}']")
    page.click("#move-list li >> nth=0")
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 1")
    page.click("#cell-a1")
    page.wait_for_selector("circle.stone[data-name='a1']")
    assert page.locator("#tree circle.node").count() == 5  # the root and four moves
    assert page.locator("#tree circle.node.current").get_attribute("data-node") == page.evaluate(
        "() => String(page.game.node)"
    )
    page.click("#variations button.promote")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#variations button.move')].map(b => b.textContent)"
        ".join() === 'a1,b2'"
    )
    assert page.locator("#move-list li").all_text_contents() == ["d1", "a1"]
    page.click("#variations button.delete >> nth=1")  # b2 and c2
    assert "2 positions" in page.text_content("#confirm-text")
    page.click("#confirm-yes")
    page.wait_for_function("() => document.querySelectorAll('#tree circle.node').length === 3")
    assert page.locator("#variations li").count() == 0
    page.locator("#tree circle.node").nth(0).click()  # the tree navigates
    page.wait_for_function("() => document.querySelectorAll('circle.stone').length === 0")
    assert page.text_content("#error-text") == ""


def test_a_narrow_window_shows_the_whole_page_without_sideways_scrolling(browser, server_url):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(server_url)
    page.wait_for_selector("#cell-a1")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    box = page.locator("#board").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.close()
