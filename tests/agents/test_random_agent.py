"""The random agent: only legal moves, the swap about half the time, the batch untouched."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.agents import RandomAgent
from trapy_rl.game import BatchGame, Board


@pytest.mark.parametrize("side", [2, 3, 5, 10])
def test_only_legal_moves_and_batch_untouched(side: int) -> None:
    board = Board(side)
    batch = BatchGame(64, board)
    agent = RandomAgent(seed=side)
    while (batch.winner == 0).any():
        games = np.flatnonzero(batch.winner == 0)
        before = batch.copy()
        actions = agent.act(batch, games)
        for name in ("stones", "to_move", "winner", "move_count", "history"):
            np.testing.assert_array_equal(getattr(batch, name), getattr(before, name))
        assert actions.shape == games.shape
        assert batch.legal_mask()[games, actions].all()
        step = np.zeros(batch.num_games, dtype=np.int64)
        step[games] = actions
        batch.step(step)


def test_swaps_about_half_the_time_at_move_two() -> None:
    board = Board(10)
    n = 4000
    batch = BatchGame(n, board)
    agent = RandomAgent(seed=1)
    batch.step(agent.act(batch, np.arange(n)))
    assert not (batch.history[:, 0] == board.swap_action).any()  # no swap at move one
    second = agent.act(batch, np.arange(n))
    rate = (second == board.swap_action).mean()
    assert abs(rate - 0.5) < 0.04  # standard error 0.008
    # Never again after move two.
    batch.step(second)
    assert not (agent.act(batch, np.arange(n)) == board.swap_action).any()


def test_swap_probability_and_seed() -> None:
    board = Board(3)
    batch = BatchGame(500, board)
    batch.step(np.zeros(500, dtype=np.int64))
    never = RandomAgent(seed=0, swap_probability=0.0).act(batch, np.arange(500))
    always = RandomAgent(seed=0, swap_probability=1.0).act(batch, np.arange(500))
    assert not (never == board.swap_action).any() and (always == board.swap_action).all()
    first = RandomAgent(seed=7).act(batch, np.arange(500))
    np.testing.assert_array_equal(first, RandomAgent(seed=7).act(batch, np.arange(500)))
    with pytest.raises(ValueError, match="swap_probability"):
        RandomAgent(swap_probability=-0.1)
