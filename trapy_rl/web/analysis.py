"""What an evaluator thinks of a position: value, policy, and a search that can be watched.

The evaluator comes from an agent spec through `parse_agent` (the agents that have one:
``uct[:N]`` with random playouts, ``net:PATH``, ``mcts:PATH:N``, ``onnx:MODEL:N``), so the page
names a net as everywhere else and nothing but the file a spec names is ever read.

Values are for blue (+1: blue wins) as well as for the player to move, so that a plot over a
game's moves reads one way. Shapes: A actions, K cells, P positions.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from trapy_rl.agents import parse_agent
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, GameState
from trapy_rl.mcts.policies import softmax_priors
from trapy_rl.mcts.search import MCTS, Evaluator
from trapy_rl.mcts.settings import SearchSettings

__all__ = ["MAX_SIMULATIONS", "SearchJob", "evaluate", "load_analyser", "value_curve"]

MAX_SIMULATIONS = 200_000
"""The most simulations one search may ask for."""
_CHUNK = 16  # simulations between progress reports and cancellation checks
_PV_LENGTH = 24


def load_analyser(spec: str, board: Board) -> tuple[Evaluator, SearchSettings]:
    """The evaluator and search settings of an agent spec, for analysis on ``board``.

    Raises:
        ValueError: naming the spec, when it is bad, its file is missing or for another
            side, or its kind has no evaluator (``random``).
    """
    agent = parse_agent(spec, board=board, seed=0)
    evaluator = getattr(agent, "evaluator", None)
    if evaluator is None:
        raise ValueError(
            f"{spec!r} has no evaluator to analyse with: use uct[:N], net:PATH, mcts:PATH:N "
            "or onnx:MODEL:N"
        )
    return evaluator, getattr(agent, "settings", None) or SearchSettings()


def _blue_view(value: float, to_move: int) -> float:
    return value if to_move == BLUE else -value


def evaluate(evaluator: Evaluator, state: GameState) -> dict[str, Any]:
    """The evaluator's value and policy for ``state``.

    Returns:
        A JSON-ready dict: ``value`` for the player to move and ``value_blue`` in [-1, 1];
        ``policy`` [A] probabilities, null at illegal actions (all null once the game is over,
        when the value is the result).
    """
    num_actions = state.board.num_actions
    if state.is_over:
        value_blue = 1.0 if state.winner == BLUE else -1.0
        return {
            "value": _blue_view(value_blue, state.to_move),
            "value_blue": value_blue,
            "policy": [None] * num_actions,
        }
    batch = BatchGame.from_states([state])
    logits, values = evaluator(batch, np.zeros(1, dtype=np.intp))
    legal = state.legal_mask()[None]  # [1, A]
    policy = softmax_priors(np.asarray(logits, dtype=np.float32), legal)[0]  # [A]
    value = float(values[0])
    return {
        "value": value,
        "value_blue": _blue_view(value, state.to_move),
        "policy": [float(p) if ok else None for p, ok in zip(policy, legal[0])],
    }


def value_curve(evaluator: Evaluator, state: GameState) -> list[float]:
    """[P] the value for blue after each of the game's first 0..P-1 moves (P = moves + 1).

    The positions are evaluated in one batch; finished ones are worth their result. A
    resignation is not a position: the last value is the last position's.
    """
    board = state.board
    positions = [GameState(board)]
    for action in state.history:
        positions.append(positions[-1].copy().play(action))
    curve = [1.0 if p.winner == BLUE else -1.0 for p in positions]
    live = [i for i, p in enumerate(positions) if not p.is_over]
    if live:
        batch = BatchGame.from_states([positions[i] for i in live])
        _, values = evaluator(batch, np.arange(len(live), dtype=np.intp))
        for i, value in zip(live, np.asarray(values, dtype=float)):
            curve[i] = _blue_view(float(value), positions[i].to_move)
    return curve


class SearchJob:
    """A search of one position in a thread, watched and cancelled from requests.

    The search runs in chunks of a few simulations into one tree; after each chunk the
    snapshot (`payload`) is updated, so the page shows progress and the best line so far.

    Args:
        evaluator: the leaves' evaluator.
        settings: the search settings (c_puct and the rest; the simulations are ``total``).
        state: the position (not over); copied.
        total: the simulations to run, 1..`MAX_SIMULATIONS`.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        settings: SearchSettings,
        state: GameState,
        total: int,
        *,
        node: int | None = None,
    ) -> None:
        if state.is_over:
            raise ValueError("the game is over: there is nothing to search")
        if (
            isinstance(total, bool)
            or not isinstance(total, int)
            or not 1 <= total <= MAX_SIMULATIONS
        ):
            raise ValueError(
                f"simulations must be an integer from 1 to {MAX_SIMULATIONS}, got {total!r}"
            )
        self.state = state.copy()
        self.node = node
        self.total = total
        self.done = 0
        self.version = 0  # one more after each chunk and at the end: what a watcher has seen
        self.status = "running"  # then "done", "cancelled" or "failed"
        self.error: str | None = None
        self._result: dict[str, Any] | None = None
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._mcts = MCTS(evaluator, state.board, num_games=1, settings=settings)
        self._thread = threading.Thread(target=self._run, name="trapy-web-search", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Stop after the chunk in progress; the last snapshot stays."""
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the search to end; whether it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        batch = BatchGame.from_states([self.state])
        board = self.state.board
        try:
            while self.done < self.total and not self._cancel.is_set():
                step = min(_CHUNK, self.total - self.done)
                result = self._mcts.search(batch, num_simulations=step)
                legal = self.state.legal_mask()
                visits = result.visit_counts[0]  # [A] int32
                q = result.q_values[0]  # [A] float32
                line = self._mcts.tree.principal_variation(0, max_length=_PV_LENGTH)
                snapshot = {
                    "visits": [int(v) if ok else None for v, ok in zip(visits, legal)],
                    "q": [float(x) if v > 0 else None for x, v in zip(q, visits)],
                    "root_value": float(result.root_values[0]),
                    "root_value_blue": _blue_view(float(result.root_values[0]), self.state.to_move),
                    "pv": [board.action_name(a) for a in line],
                    "best": board.action_name(int(np.argmax(visits))),
                }
                with self._lock:
                    self.done += step
                    self._result = snapshot
                    self.version += 1
            status = "cancelled" if self.done < self.total else "done"
        except Exception as error:  # reported to the page; the server goes on
            self.error = f"{type(error).__name__}: {error}"
            status = "failed"
        with self._lock:
            self.status = status
            self.version += 1

    @property
    def running(self) -> bool:
        return self.status == "running"

    def payload(self) -> dict[str, Any]:
        """The search so far: ``status``, ``done``, ``total``, ``ply``, ``node`` (the game
        tree's node searched, if given), ``version``, ``error`` and
        ``result`` (null before the first chunk): ``visits`` [A] (null at illegal actions),
        ``q`` [A] for the player to move (null where unvisited), ``root_value``,
        ``root_value_blue``, ``pv`` (names), ``best``."""
        with self._lock:
            return {
                "status": self.status,
                "done": self.done,
                "total": self.total,
                "ply": self.state.move_count,
                "node": self.node,
                "version": self.version,
                "error": self.error,
                "result": self._result,
            }
