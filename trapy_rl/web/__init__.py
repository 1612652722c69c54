"""The web board: play against any agent and see what a net or a search thinks, in a browser.

``trapy-web`` (`trapy_rl.web.server`) serves one page (``static/``) and a JSON API
(`trapy_rl.web.api`) on 127.0.0.1. The page draws the board as SVG from the hexagon geometry
of `trapy_rl.game.geometry` in the colours of `trapy_rl.game.draw` (`trapy_rl.web.board_data`);
each browser tab holds its own game (`trapy_rl.web.sessions`); analysis (value, policy,
search with visits, Q-values and the principal variation) is `trapy_rl.web.analysis`.

Needs the ``web`` extra: ``pip install 'trapy-rl[web]'``.
"""
