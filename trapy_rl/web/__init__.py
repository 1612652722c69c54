"""The web board: play against any agent and see what a net or a search thinks, in a browser.

``trapy-web`` (`trapy_rl.web.server`) serves one page (``static/``) and a JSON API
(`trapy_rl.web.api`) on 127.0.0.1. The page draws the board as SVG from the hexagon geometry
of `trapy_rl.game.geometry` in the colours of `trapy_rl.game.draw` (`trapy_rl.web.board_data`).
Each game is a tree of positions with its variations (`trapy_rl.web.tree`), kept by
`trapy_rl.web.sessions` in an SQLite file written after every change (`trapy_rl.web.storage`),
its id in the page's address; games are opened from and saved to SGF (`trapy_rl.web.sgf`),
JSON records and GTP text (`trapy_rl.web.imports`). Analysis (value, policy, search with
visits, Q-values and the principal variation, streamed live) is `trapy_rl.web.analysis`; the
opponents offered by name are `trapy_rl.web.opponents`.

Needs the ``web`` extra: ``pip install 'trapy-rl[web]'``.
"""
