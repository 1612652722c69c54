"""Resignation calibrated from played-out games, and the warnings that a run is collapsing.

A fixed resignation threshold lets self-play collapse: once the value head is overconfident,
games end after a few moves, the net sees no middle game and its value loss falls to nothing
while it learns less and less. AlphaZero keeps false resignations under 5% by playing a share
of games out (resignation off) and moving the threshold: `ResignCalibrator` keeps the lowest
root value each winner of a played-out game saw, and sets the threshold to the
``false_rate``-quantile of those values, so that at most that share of winners would have
resigned. The threshold never rises above 0 (a player does not resign while it expects to win).
A curriculum's change of board `restart`s it: winners' values on one board do not calibrate
resignation on another, and a window full of small-board games would take most of a side-10
run to flush out.

`collapse_warnings` reads an iteration's metrics and says, in words, when games or the value
loss have collapsed; the loop asks it only once the games have settled
(`games_settle_iterations`), since just after new games start only short ones have ended.

Shapes: W values in the window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.train.selfplay import GameRecord

__all__ = ["ResignCalibrator", "collapse_warnings", "games_settle_iterations"]


class ResignCalibrator:
    """The resignation threshold that keeps false resignations at or under ``false_rate``.

    Args:
        threshold: the threshold until ``min_games`` played-out games were seen (since the
            start or the last `restart`).
        false_rate: the largest share of played-out games' winners allowed below it.
        window: the most recent played-out games' winners kept.
        min_games: played-out games needed before the threshold moves.

    Attributes:
        threshold: the current threshold.
        winner_mins: [W] float32, the lowest root value of each winner, oldest first.
    """

    def __init__(
        self, threshold: float, *, false_rate: float, window: int = 2000, min_games: int = 50
    ) -> None:
        if not 0 < false_rate < 0.5:
            raise ValueError(f"false_rate must be in (0, 0.5), got {false_rate}")
        self.threshold = self.initial_threshold = float(threshold)
        self.false_rate = float(false_rate)
        self.window = int(window)
        self.min_games = int(min_games)
        self.winner_mins = np.zeros(0, np.float32)

    def update(self, records: Sequence[GameRecord]) -> float:
        """Add the played-out games of ``records``; returns the (new) threshold."""
        new = [r.winner_min_value for r in records if r.playout]
        if new:
            joined = np.concatenate([self.winner_mins, np.asarray(new, np.float32)])
            self.winner_mins = joined[-self.window :]
        if len(self.winner_mins) >= self.min_games:
            # "lower": an observed value, so that strictly below it lie at most false_rate.
            quantile = np.quantile(self.winner_mins, self.false_rate, method="lower")
            self.threshold = float(min(quantile, 0.0))
        return self.threshold

    def restart(self) -> float:
        """Forget the winners seen so far: back to the first threshold until ``min_games``
        new played-out games; returns that threshold."""
        self.threshold = self.initial_threshold
        self.winner_mins = np.zeros(0, np.float32)
        return self.threshold

    def state_dict(self) -> dict:
        return {"threshold": self.threshold, "winner_mins": self.winner_mins.copy()}

    def load_state_dict(self, state: dict) -> None:
        self.threshold = float(state["threshold"])
        self.winner_mins = np.asarray(state["winner_mins"], dtype=np.float32)


def games_settle_iterations(board: Board, moves_per_iteration: int) -> int:
    """Iterations after self-play starts new games (a run's start, a curriculum's change of
    side) before its game lengths mean anything: until then only the games that end early
    can have ended, so the mean length is short whatever the net does. A game may last the
    board's cells plus the swap; each iteration plays ``moves_per_iteration`` moves a game.

    >>> games_settle_iterations(Board(10), 16)
    10
    """
    return math.ceil((board.num_cells + 1) / moves_per_iteration)


def collapse_warnings(metrics: dict[str, float], board: Board) -> dict[str, str]:
    """Plain-words warnings when self-play looks collapsed.

    Args:
        metrics: one iteration's metrics (``selfplay/...``, ``loss/...``).
        board: the board (a game shorter than a fifth of its cells is a collapse sign).

    Returns:
        {kind: warning}: ``game_length`` and/or ``value_loss``, or nothing.
    """
    warnings = {}
    length = metrics.get("selfplay/game_length", float("nan"))
    resign = metrics.get("selfplay/resign_rate", float("nan"))
    if length < board.num_cells / 5:
        warnings["game_length"] = (
            f"self-play games last {length:.0f} moves on a board of {board.num_cells} cells "
            f"({resign:.0%} resigned): the net sees no middle game; see selfplay.resign_*"
        )
    value_loss = metrics.get("loss/value", float("nan"))
    if value_loss < 0.05 and resign > 0.5:
        warnings["value_loss"] = (
            f"value loss {value_loss:.3f} with {resign:.0%} of games resigned: the value head "
            "has little left to learn from; calibrate resignation (selfplay.resign_false_rate)"
        )
    return warnings
