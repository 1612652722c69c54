"""The web board's pictures in docs/: a side-10 position under live analysis by the shipped net
(visits and win rates on the cells, the line as numbered stones, the value bar and plot, a
variation), the same position's value and policy by the net alone, an opening map from
``trapy-openings`` on the side-10 board, and the position searched in a 390 px wide window
(a phone held upright), move numbers on.

    python scripts/web_screenshot.py [docs/web-board.png]
    python scripts/web_screenshot.py --policy [docs/web-board-policy.png]
    python scripts/web_screenshot.py --openings TABLE.csv [docs/web-board-openings.png]
    python scripts/web_screenshot.py --narrow [docs/web-board-narrow.png]

Starts `trapy-web`'s app on a free loopback port and drives it with headless Chromium. The
opening map in docs/ is docs/openings-seed_0.csv, the shipped net's map from its own games.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator

from playwright.sync_api import Page, sync_playwright

from trapy_rl.web.server import BoardServer, create_app

MOVES = ["j3", "i4", "h5", "k4", "k3", "l3", "i6", "g6", "h7"]
VARIATION = (6, "j4")  # after the sixth move, another seventh


@contextlib.contextmanager
def board_page(
    side: int, height: int, evaluator: str = "uct,num_rollouts=8", width: int = 1250
) -> Iterator[Page]:
    """The page of a board of ``side`` served on a free loopback port, in headless Chromium."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(side=side, agent="", evaluator=evaluator)
    server = BoardServer(app, host="127.0.0.1", port=port)
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True)
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#cell-a1")
            yield page
            browser.close()
    finally:
        server.should_exit = True


def play(page: Page, moves: list[str]) -> None:
    """Click ``moves`` on the board, each once its stone shows."""
    for name in moves:
        page.click(f"#cell-{name}")
        page.wait_for_selector(f"circle.stone[data-name='{name}']")


def main(out: str = "docs/web-board.png") -> None:
    with board_page(10, 1000, evaluator="mcts:pretrained:400") as page:
        play(page, MOVES)
        after, move = VARIATION
        page.click(f"#move-list li >> nth={after - 1}")
        page.wait_for_function(
            f"() => document.querySelectorAll('circle.stone').length === {after}"
        )
        page.click(f"#cell-{move}")
        page.wait_for_selector(f"circle.stone[data-name='{move}']")
        page.click("#variations button.move >> nth=0")  # back to the main line, at its move
        page.wait_for_selector(f"circle.stone[data-name='{MOVES[after]}']")
        page.keyboard.press("End")
        page.wait_for_function(
            f"() => document.querySelectorAll('circle.stone').length === {len(MOVES)}"
        )
        page.click("#plot-values")
        page.wait_for_selector("#plot polyline")
        page.click("#live")
        page.wait_for_function(
            "() => /live, [0-9]{4,}/.test(document.getElementById('pv').textContent)",
            timeout=120_000,
        )
        page.hover("#cell-h6")
        page.screenshot(path=out, full_page=True)
        page.click("#live")
    print(f"wrote {out}")


def policy(out: str = "docs/web-board-policy.png") -> None:
    """The position of `main` with the shipped net's value and policy (no search)."""
    with board_page(10, 1000, evaluator="mcts:pretrained:400") as page:
        play(page, MOVES)
        page.click("#evaluate")
        page.wait_for_function(
            "() => document.getElementById('value').textContent.includes('for blue')"
        )
        page.hover("#cell-h6")
        page.screenshot(path=out, full_page=True)
    print(f"wrote {out}")


def openings(table: str, out: str = "docs/web-board-openings.png") -> None:
    """The side-10 board with the opening map of ``table`` (a trapy-openings CSV)."""
    with board_page(10, 900) as page:
        page.set_input_files("#openings-file", table)
        page.wait_for_selector("#openings-table td")
        page.screenshot(path=out, full_page=True)
    print(f"wrote {out}")


def narrow(out: str = "docs/web-board-narrow.png") -> None:
    """The position of `main` searched (400 simulations) in a 390 px wide window."""
    with board_page(10, 844, evaluator="mcts:pretrained:400", width=390) as page:
        play(page, MOVES)
        page.check("#numbers")
        page.click("#search")
        page.wait_for_function(
            "() => document.getElementById('pv').textContent.includes('search done')",
            timeout=120_000,
        )
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > 390:
            raise SystemExit(f"the page is {width} px wide in a 390 px window")
        page.screenshot(path=out, full_page=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--narrow"]:
        narrow(*sys.argv[2:])
    elif sys.argv[1:2] == ["--openings"]:
        openings(*sys.argv[2:])
    elif sys.argv[1:2] == ["--policy"]:
        policy(*sys.argv[2:])
    else:
        main(*sys.argv[1:])
