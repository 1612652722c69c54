"""The ``solver`` agent kind: perfect play on small boards, refused on big ones."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.agents import RandomAgent, parse_agent
from trapy_rl.agents.moves import checked_actions
from trapy_rl.game import BatchGame, Board


def play(first, second, board: Board, games: int) -> np.ndarray:
    """The winners of ``games`` games, ``first`` moving first."""
    batch = BatchGame(games, board)
    while (batch.winner == 0).any():
        for player, agent in ((1, first), (2, second)):
            turn = np.flatnonzero((batch.winner == 0) & (batch.to_move == player))
            if len(turn):
                actions = np.zeros(games, dtype=np.int64)
                actions[turn] = checked_actions(agent, batch, turn)
                batch.step(actions, games=np.isin(np.arange(games), turn))
    return batch.winner.copy()


@pytest.mark.parametrize("side", [2, 3, 4])
def test_second_player_always_wins(side: int) -> None:
    """With the swap the second player wins every board: the agent never misses it."""
    board = Board(side)
    solver = parse_agent("solver", board=board, seed=0)
    winners = play(RandomAgent(seed=side), solver, board, 12)
    assert (winners == 2).all()
    winners = play(parse_agent("solver", board=board, seed=1), solver, board, 2)
    assert (winners == 2).all()


def test_first_player_beats_random_play() -> None:
    board = Board(4)
    winners = play(parse_agent("solver", board=board, seed=0), RandomAgent(seed=4), board, 12)
    assert (winners == 1).mean() >= 0.5  # lost against perfect play, not against random


def test_refuses_big_boards_and_bad_options() -> None:
    with pytest.raises(ValueError, match="plays sides 2 to 4, not side 5"):
        parse_agent("solver", board=Board(5))
    with pytest.raises(ValueError, match="unknown option 'depth'"):
        parse_agent("solver,depth=3", board=Board(4))
    agent = parse_agent("solver,table_bits=12", board=Board(3))
    with pytest.raises(ValueError, match="built for side 3, asked to play side 4"):
        agent.act(BatchGame(1, Board(4)), np.array([0]))
