"""Collection of the package's doctests: the optional interfaces only where their extras are.

pytest imports every module of ``trapy_rl`` for its doctests, and the PettingZoo and OpenSpiel
interfaces import their packages at import time. Without an extra its module is left out here,
as its tests leave themselves out (``pytest.importorskip``), and the rest of the suite runs.
"""

import importlib.util

_INTERFACES = {
    "trapy_rl/envs/pettingzoo.py": "pettingzoo",
    "trapy_rl/game/openspiel.py": "pyspiel",
    "trapy_rl/agents/openspiel_bot.py": "pyspiel",
}

collect_ignore = [
    path for path, package in _INTERFACES.items() if importlib.util.find_spec(package) is None
]
