"""The opponents and evaluators the page offers by name, and the nets prepared before they are
asked for (`prepare`; the server's `trapy_rl.web.readiness.Readiness` runs it).

The shipped nets (`trapy_rl.pretrained`: ``pretrained``, ``pretrained_seed1`` on side 10,
``pretrained_side5`` on side 5) come at a few strengths: the policy alone, and the search at
50, 200 and 800 simulations a move. The board's default opponent is the shipped net's search
(`DEFAULT_AGENT` on side 10) on a side a net was trained for; on other sides it is rollout
search.

>>> [p["spec"] for p in presets()][:2]
['mcts:pretrained:200', 'net:pretrained']
"""

from __future__ import annotations

import numpy as np

from trapy_rl.agents import parse_agent
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState
from trapy_rl.pretrained import pretrained_info, pretrained_names
from trapy_rl.web.analysis import load_analyser

__all__ = [
    "DEFAULT_AGENT",
    "DEFAULT_EVALUATOR",
    "OTHER_SIDE_AGENT",
    "OTHER_SIDE_EVALUATOR",
    "check_specs",
    "default_specs",
    "prepare",
    "presets",
]

DEFAULT_AGENT = "mcts:pretrained:200"
DEFAULT_EVALUATOR = "mcts:pretrained:400"
OTHER_SIDE_AGENT = "uct:1000"
OTHER_SIDE_EVALUATOR = "uct:400,num_rollouts=4"
_STRENGTHS = (
    ("net:{name}", "policy alone, instant"),
    ("mcts:{name}:50", "50 simulations, quick"),
    ("mcts:{name}:200", "200 simulations"),
    ("mcts:{name}:800", "800 simulations, strongest"),
)
_OTHERS = (
    ("uct:1000", "rollout search, any side"),
    ("uct:200", "rollout search, weak, any side"),
    ("random", "random moves, any side"),
)


def default_specs(side: int) -> tuple[str, str]:
    """The default opponent and evaluator for a board of ``side``: the search of the shipped
    net of that side, the first by name (``pretrained`` on side 10: `DEFAULT_AGENT`,
    ``pretrained_side5`` on side 5), else rollout search."""
    for name in pretrained_names():  # sorted: "pretrained" before "pretrained_seed1"
        info = pretrained_info(name)
        if info["side"] == side and not info.get("pool"):
            return f"mcts:{name}:200", f"mcts:{name}:400"
    return OTHER_SIDE_AGENT, OTHER_SIDE_EVALUATOR


def check_specs(agent: str, evaluator: str, side: int) -> None:
    """Build the page's first opponent and evaluator once, so that a bad spec is refused when
    the server starts rather than when a game first asks for it.

    Raises:
        ValueError: naming the option and the spec's problem.
    """
    board = Board(side)
    for option, spec, build in (
        ("--agent", agent, lambda s: parse_agent(s, board=board, seed=0)),
        ("--evaluator", evaluator, lambda s: load_analyser(s, board)),
    ):
        if spec:
            try:
                build(spec)
            except ValueError as error:
                raise ValueError(f"{option}: {error}") from None


def presets() -> list[dict[str, object]]:
    """The opponents offered by name: ``spec``, ``label`` and ``side`` (null: any side), the
    default first."""
    found = [{"spec": DEFAULT_AGENT, "label": "the shipped net, 200 simulations", "side": 10}]
    for name in pretrained_names():
        info = pretrained_info(name)
        if info.get("pool"):  # the rating pool's yardsticks, not nets to offer as players
            continue
        side = info["side"]
        for spec, label in _STRENGTHS:
            spec = spec.format(name=name)
            if spec != DEFAULT_AGENT:
                found.append({"spec": spec, "label": f"{name}: {label}", "side": side})
    found.extend({"spec": spec, "label": label, "side": None} for spec, label in _OTHERS)
    return found


def prepare(spec: str, side: int) -> None:
    """Build ``spec``'s agent for ``side`` and run its evaluator once on the empty board, so
    that its net is read, exported and its session opened before a game asks (the loaded nets
    are shared by file: `trapy_rl.agents.network.load_evaluator`).

    Raises:
        whatever building or running the agent raises (a bad spec: ValueError).
    """
    board = Board(side)
    agent = parse_agent(spec, board=board, seed=0)
    evaluator = getattr(agent, "evaluator", None)
    if evaluator is not None:
        evaluator(BatchGame.from_states([GameState(board)]), np.zeros(1, dtype=np.intp))
