"""Rollout evaluation against exact enumeration, and the rollout-MCTS agent."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from trapy_rl.agents import RandomAgent, RolloutEvaluator, RolloutMCTSAgent
from trapy_rl.agents.kinds import parse_agent
from trapy_rl.eval import play_match
from trapy_rl.game import BLUE, EMPTY, YELLOW, BatchGame, Board, find_winner
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.mcts import SearchSettings


def exact_fill_value(stones: np.ndarray, to_move: int, board: Board) -> float:
    """Mean outcome for ``to_move`` over every equally likely fill (mover: ceil(e/2) cells)."""
    empty = np.flatnonzero(stones == EMPTY)
    outcomes = []
    for mine in itertools.combinations(empty, (len(empty) + 1) // 2):
        full = stones.copy()
        full[empty] = 3 - to_move
        full[list(mine)] = to_move
        outcomes.append(1.0 if find_winner(full, board) == to_move else -1.0)
    return float(np.mean(outcomes))


def exact_value(batch: BatchGame, game: int, no_swap: float | None = None) -> float:
    """The evaluator's value in closed form: enumerate fills, averaging over the swap."""
    stones, player = batch.stones[game].copy(), int(batch.to_move[game])
    value = exact_fill_value(stones, player, batch.board) if no_swap is None else no_swap
    if batch.swap_allowed[game]:
        swapped = stones.copy()
        swapped[batch.history[game, 0]] = YELLOW
        after_swap = exact_fill_value(swapped, BLUE, batch.board)  # blue's view
        value = 0.5 * value + 0.5 * (after_swap if player == BLUE else -after_swap)
    return value


def positions(board: Board, n: int, empty_left: int, seed: int) -> BatchGame:
    """n unfinished games with ``empty_left`` empty cells, from random play."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < n:
        batch = BatchGame(1, board)
        while batch.winner[0] == 0 and (batch.stones[0] == EMPTY).sum() > empty_left:
            batch.step(random_legal_actions(batch.legal_mask(), rng))
        if batch.winner[0] == 0:
            found.append(batch.to_state(0))
    return BatchGame.from_states(found)


def test_values_match_exact_enumeration() -> None:
    board = Board(3)
    batch = positions(board, 8, empty_left=7, seed=1)
    evaluator = RolloutEvaluator(4000, seed=2)
    logits, values = evaluator(batch, np.arange(batch.num_games))
    assert logits.dtype == np.float32 and logits.shape == (batch.num_games, board.num_actions)
    np.testing.assert_array_equal(np.isfinite(logits), batch.legal_mask())
    assert (logits[np.isfinite(logits)] == 0).all()
    assert values.dtype == np.float32 and (np.abs(values) <= 1).all()
    exact = np.array([exact_value(batch, g) for g in range(batch.num_games)])
    # Standard error of a 4000-playout mean is at most 1/sqrt(4000) = 0.016.
    np.testing.assert_allclose(values, exact, atol=0.07)


def test_values_count_the_swap() -> None:
    board = Board(3)
    first_moves = np.arange(0, board.num_cells, 2)  # half the first moves; yellow may swap
    batch = BatchGame(len(first_moves), board)
    batch.step(first_moves)
    values = RolloutEvaluator(3000, seed=3).values(batch, np.arange(batch.num_games))
    no_swap = np.array(
        [exact_fill_value(batch.stones[g], YELLOW, board) for g in range(batch.num_games)]
    )
    exact = np.array([exact_value(batch, g, no_swap[g]) for g in range(batch.num_games)])
    assert np.abs(exact - no_swap).max() > 0.2  # the swap matters somewhere
    np.testing.assert_allclose(values, exact, atol=0.08)


def test_decided_position_has_high_value() -> None:
    """A side-3 position where the player to move wins in one, and most fills win."""
    board = Board(3)
    batch = positions(board, 60, empty_left=5, seed=4)
    exact = np.array([exact_value(batch, g) for g in range(batch.num_games)])
    game = int(exact.argmax())
    assert exact[game] >= 0.8
    wins_in_one = [
        a for a in np.flatnonzero(batch.legal_mask()[game]) if _wins(batch, game, int(a))
    ]
    assert wins_in_one
    value = RolloutEvaluator(2000, seed=5).values(batch, np.array([game]))[0]
    assert value == pytest.approx(exact[game], abs=0.06)
    assert value > 0.7


def _wins(batch: BatchGame, game: int, action: int) -> bool:
    one = batch.take([game])
    mover = one.to_move[0]
    one.step([action])
    return bool(one.winner[0] == mover)


def test_finished_games_are_lost_for_the_player_to_move() -> None:
    board = Board(2)
    batch = BatchGame(2, board)
    rng = np.random.default_rng(0)
    while batch.winner[0] == 0:
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    logits, values = RolloutEvaluator(seed=0)(batch, np.array([0]))
    assert values[0] == -1.0 and np.isneginf(logits).all()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_rollouts"):
        RolloutEvaluator(0)
    with pytest.raises(ValueError, match="num_simulations"):
        RolloutMCTSAgent(SearchSettings(num_simulations=0))


def test_search_finds_the_winning_move() -> None:
    """Known answer: wherever the mover can win at once, UCT plays a winning move."""
    board = Board(3)
    batch = positions(board, 40, empty_left=6, seed=6)
    has_win = [
        g
        for g in range(batch.num_games)
        if any(_wins(batch, g, int(a)) for a in np.flatnonzero(batch.legal_mask()[g]))
    ]
    assert len(has_win) >= 5
    games = np.array(has_win)
    before = batch.copy()
    actions = RolloutMCTSAgent(SearchSettings(num_simulations=200), seed=7).act(batch, games)
    np.testing.assert_array_equal(batch.history, before.history)  # batch untouched
    assert all(_wins(batch, g, int(a)) for g, a in zip(games, actions, strict=True))


def test_one_game_search_with_many_leaves_finds_the_winning_move() -> None:
    """A game searched alone sends 16 leaves a call (auto) and still plays the winning move."""
    board = Board(3)
    batch = positions(board, 40, empty_left=6, seed=6)
    games = [
        g
        for g in range(batch.num_games)
        if any(_wins(batch, g, int(a)) for a in np.flatnonzero(batch.legal_mask()[g]))
    ]
    agent = parse_agent("uct:200", board=board, seed=7)
    assert agent.settings.leaves_per_game(1) == 16
    for g in games[:8]:
        alone = batch.take([g])
        action = int(agent.act(alone, np.array([0]))[0])
        assert _wins(alone, 0, action)
    assert parse_agent("uct:200,leaves=4", board=board).settings.leaves == 4
    with pytest.raises(ValueError, match="leaves must be >= 0"):
        parse_agent("uct:200,leaves=-1", board=board)
    # uct's pending leaves count as virtual losses, a net search's as virtual visits.
    assert agent.settings.virtual == "loss"
    assert parse_agent("uct:20,virtual=visits", board=board).settings.virtual == "visits"
    with pytest.raises(ValueError, match="virtual must be one of"):
        parse_agent("uct:20,virtual=lost", board=board)


def test_uct_beats_random() -> None:
    board = Board(4)
    result = play_match(
        RolloutMCTSAgent(SearchSettings(num_simulations=50), seed=8),
        RandomAgent(seed=9),
        num_games=40,
        board=board,
        seed=8,
    )
    assert result.wins >= 36, str(result)
