"""Checked moves: an agent's answer is played only if it is one legal integer action per game."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.agents import RandomAgent
from trapy_rl.agents.moves import checked_actions, checked_move
from trapy_rl.game import BatchGame, Board, GameState, IllegalMoveError
from trapy_rl.game.sampling import random_legal_actions

BOARD = Board(3)


class Fixed:
    """Answers the same actions whatever it is asked (to be refused where they are illegal)."""

    def __init__(self, actions, name: str = "fixed") -> None:
        self.actions, self.name = actions, name
        self.resets: list[np.ndarray] = []

    def act(self, batch: BatchGame, games: np.ndarray):
        return self.actions

    def reset(self, games: np.ndarray) -> None:
        self.resets.append(games.copy())


def test_an_illegal_move_is_refused_in_one_line_naming_the_move() -> None:
    state = GameState.from_moves(["a1", "b1"], BOARD)
    a1 = BOARD.parse_action("a1")
    with pytest.raises(ValueError) as refused:
        checked_move(Fixed(np.array([a1]), name="cheat"), state)
    assert isinstance(refused.value, IllegalMoveError)
    message = str(refused.value)
    assert "\n" not in message
    assert message == "agent 'cheat' played illegal move 'a1' (move 3)"  # as in a match
    assert state.history == [a1, BOARD.parse_action("b1")]  # the position is left alone


@pytest.mark.parametrize(
    "answer, reason",
    [
        (np.array([1, 2]), r"shape \(2,\) for 1 game, not one action per game"),
        (np.array([1.0]), "float64 actions"),
        (np.array(1), r"shape \(\)"),
        (np.array([-1]), "illegal move -1"),
        (np.array([BOARD.num_actions]), f"illegal move {BOARD.num_actions}"),
    ],
)
def test_answers_that_are_not_one_legal_action_are_refused(answer, reason) -> None:
    state = GameState.from_moves(["c2", "a2"], BOARD)  # the swap is no longer legal
    with pytest.raises(IllegalMoveError, match=reason):
        checked_move(Fixed(answer), state)
    with pytest.raises(IllegalMoveError, match="illegal move 'swap'"):
        checked_move(Fixed(np.array([BOARD.swap_action])), state)


def test_checked_move_resets_the_agent_and_returns_a_legal_action() -> None:
    rng = np.random.default_rng(0)
    agent = RandomAgent(seed=1)
    for _ in range(50):
        state = GameState(BOARD)
        for _ in range(rng.integers(0, 6)):
            state.play(int(random_legal_actions(state.legal_mask()[None], rng)[0]))
        if state.is_over:
            continue
        action = checked_move(agent, state)
        assert isinstance(action, int) and state.legal_mask()[action]
    spy = Fixed(np.array([0]))
    assert checked_move(spy, GameState(BOARD)) == 0
    assert [list(games) for games in spy.resets] == [[0]]


def test_checked_actions_names_the_first_illegal_move_and_counts_them() -> None:
    batch = BatchGame(4, BOARD)
    batch.step(np.array([0, 1, 2, 3]))  # a1, b1, c1, d1
    games = np.array([1, 2, 3])
    legal = batch.legal_mask()
    fine = np.array([5, 6, BOARD.swap_action])
    np.testing.assert_array_equal(checked_actions(Fixed(fine), batch, games, legal=legal), fine)
    occupied = np.array([5, 2, 3])  # c1 in game 2 and d1 in game 3 are taken
    with pytest.raises(
        IllegalMoveError,
        match=r"agent 'fixed' played illegal move 'c1' in game 2 \(move 2\); 2 illegal in all",
    ):
        checked_actions(Fixed(occupied), batch, games)
    with pytest.raises(IllegalMoveError, match=r"shape \(2,\) for 3 games"):
        checked_actions(Fixed(np.array([5, 6])), batch, games)
