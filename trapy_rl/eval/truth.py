"""How near an agent comes to the truth on a solved board.

Three scores, each a count with its 95% Wilson interval (`Share`):

- **won kept** (any agent): in the won positions of the side's shipped test set of solved
  positions (`trapy_rl.solve.positions`), the share where the agent's move keeps the position
  won. A policy that knows the game keeps every won position won.
- **value sign** (an agent with a net or a search): in every position of the test set, the share
  where the sign of the agent's value for the player to move (the net's value head, or a
  search's root value) says who wins.
- **swap decisions** (any agent): after every first move c of the side's exact opening table
  (`trapy_rl.solve.openings`), the agent's second move: the swap exactly where the lone stone
  wins (v*(c) = 1). The decision is the agent's own, as it plays it; the opening maps'
  decisions (v(c) > 1/2) are scored against the same table by
  `trapy_rl.analysis.agreement.exact_swap_agreement`.

    >>> from trapy_rl.agents import parse_agent
    >>> from trapy_rl.game.board import Board
    >>> score = score_agent(parse_agent("uct:200", board=Board(4), seed=0), side=4)
    >>> score.swaps.total, score.won_kept.total > 0
    (22, True)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from trapy_rl.agents.base import Agent, reset_agent
from trapy_rl.agents.moves import checked_actions
from trapy_rl.eval.stats import wilson_interval
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.mcts import MCTS, Evaluator, SearchSettings
from trapy_rl.solve.openings import load_openings
from trapy_rl.solve.positions import TestSet, load_test_set

__all__ = [
    "Share",
    "TruthScore",
    "score_agent",
    "swap_decisions",
    "truth_sides",
    "value_signs",
    "won_kept",
]


@dataclass(frozen=True)
class Share:
    """``hits`` of ``total``, with the rate and its 95% Wilson interval."""

    hits: int
    total: int

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.total)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.hits}/{self.total} ({self.rate:.3f} [{low:.2f}, {high:.2f}])"


@dataclass(frozen=True)
class TruthScore:
    """An agent's scores on one solved side; None where the side has no table or the agent
    gives no value. ``wrong_swaps`` names the first moves whose swap decision was wrong."""

    agent: str
    side: int
    won_kept: Share | None
    value_sign: Share | None
    swaps: Share | None
    wrong_swaps: tuple[str, ...] = field(default=())
    test_set: str = ""  # the positions won_kept and value_sign were measured on (`TestSet.source`)

    def metrics(self, prefix: str = "truth/") -> dict[str, float]:
        """The rates by name (``truth/won_kept``, ...), for TensorBoard and JSON."""
        shares = {"won_kept": self.won_kept, "value_sign": self.value_sign, "swaps": self.swaps}
        return {prefix + name: s.rate for name, s in shares.items() if s is not None}

    def __str__(self) -> str:
        parts = [f"{self.agent} on side {self.side}:"]
        if self.won_kept is not None:
            parts.append(f"won kept {self.won_kept}")
        if self.value_sign is not None:
            parts.append(f"value sign {self.value_sign}")
        if self.swaps is not None:
            wrong = f", wrong: {' '.join(self.wrong_swaps)}" if self.wrong_swaps else ""
            parts.append(f"swap decisions {self.swaps}{wrong}")
        return " ".join(parts[:1]) + " " + "; ".join(parts[1:])


def truth_sides() -> list[int]:
    """The sides where the truth is known: an exact opening table and a test set ship."""
    return [side for side in range(2, 11) if None not in _shipped(side)]


def won_kept(agent: Agent, test_set: TestSet) -> Share:
    """The share of the test set's won positions where ``agent``'s move keeps it won."""
    won = [p for p in test_set.positions if p.win]
    if not won:
        return Share(0, 0)
    batch = BatchGame.from_states([p.state(test_set.board) for p in won])
    games = np.arange(len(won))
    reset_agent(agent, games)
    actions = checked_actions(agent, batch, games)
    kept = sum(int(a) in p.winning for a, p in zip(actions, won, strict=True))
    return Share(kept, len(won))


def value_signs(
    evaluator: Evaluator, test_set: TestSet, settings: SearchSettings | None = None
) -> Share:
    """The share of the test set's positions whose value sign says who wins: the evaluator's
    value (``settings`` None), or the root value of a search with ``settings``. A value of
    exactly 0 counts as wrong."""
    states = test_set.states()
    batch = BatchGame.from_states(states)
    games = np.arange(len(states))
    if settings is None:
        _, values = evaluator(batch, games)
    else:
        search = MCTS(evaluator, test_set.board, num_games=len(states), settings=settings)
        values = search.search(batch, games=games).root_values
    values = np.asarray(values, dtype=np.float64)  # [n], for the player to move
    win = np.array([p.win for p in test_set.positions])
    right = np.where(win, values > 0, values < 0)
    return Share(int(right.sum()), len(states))


def swap_decisions(agent: Agent, table: dict) -> tuple[Share, tuple[str, ...]]:
    """The agent's second move after every solved first move of ``table``, against v*.

    Returns:
        (share of right decisions, the cells decided wrongly by name).
    """
    board = Board(table["side"])
    names = list(table["cells"])
    cells = np.array([board.parse_action(n) for n in names], dtype=np.int64)
    batch = BatchGame(len(cells), board)
    batch.step(cells)
    games = np.arange(len(cells))
    reset_agent(agent, games)
    swapped = checked_actions(agent, batch, games) == board.swap_action
    should = np.array([table["cells"][n]["stone_wins"] for n in names], dtype=bool)
    wrong = tuple(n for n, s, w in zip(names, swapped, should, strict=True) if s != w)
    return Share(len(names) - len(wrong), len(names)), wrong


def score_agent(
    agent: Agent,
    side: int,
    *,
    test_set: TestSet | None = None,
    table: dict | None = None,
) -> TruthScore:
    """Every score the side's truth allows for ``agent`` (the shipped test set and table by
    default). The value sign needs an agent with an ``evaluator`` (a net agent, or a search
    agent, whose ``settings`` then say the search).

    Raises:
        ValueError: when the side has neither a test set nor a table.
    """
    shipped_set, shipped_table = _shipped(side)
    test_set = shipped_set if test_set is None else test_set
    table = shipped_table if table is None else table
    if test_set is None and table is None:
        raise ValueError(f"side {side}: no exact values ship (solved sides: {truth_sides()})")
    kept = signs = swaps = None
    wrong: tuple[str, ...] = ()
    if test_set is not None:
        kept = won_kept(agent, test_set)
        evaluator = getattr(agent, "evaluator", None)
        if callable(evaluator):
            signs = value_signs(evaluator, test_set, getattr(agent, "settings", None))
    if table is not None:
        swaps, wrong = swap_decisions(agent, table)
    source = test_set.source if test_set is not None else ""
    return TruthScore(getattr(agent, "name", str(agent)), side, kept, signs, swaps, wrong, source)


@functools.cache
def _shipped(side: int) -> tuple[TestSet | None, dict | None]:
    """The side's shipped test set and exact table (None where none ships), read once a
    process: a training run scores against them at every evaluation. Treat them as read-only."""
    found = []
    for load in (load_test_set, load_openings):
        try:
            found.append(load(side))
        except ValueError:
            found.append(None)
    return found[0], found[1]
