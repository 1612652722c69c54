"""The web board's picture in docs/: a side-7 position with a search's visits and value plot.

    python scripts/web_screenshot.py [docs/web-board.png]

Starts `trapy-web`'s app on a free loopback port and drives it with headless Chromium.
"""

from __future__ import annotations

import shutil
import socket
import sys
import threading
import time

import uvicorn
from playwright.sync_api import sync_playwright

from trapy_rl.web.server import create_app

MOVES = ["g1", "e3", "f3", "e4", "d5", "f4", "g3", "c4", "b5"]


def main(out: str = "docs/web-board.png") -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(side=7, agent="", evaluator="uct,num_rollouts=8")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1250, "height": 820})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#cell-a1")
        for name in MOVES:
            page.click(f"#cell-{name}")
            page.wait_for_selector(f"circle.stone[data-name='{name}']")
        page.click("#plot-values")
        page.wait_for_selector("#plot polyline")
        page.fill("#simulations", "800")
        page.click("#search")
        page.wait_for_function(
            "() => document.getElementById('pv').textContent.includes('search done')",
            timeout=120_000,
        )
        page.hover("#cell-d4")
        page.screenshot(path=out)
        browser.close()
    server.should_exit = True
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
