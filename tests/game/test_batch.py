"""BatchGame against the GameState reference, and its batch mechanics."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trapy_rl.game import BLUE, YELLOW, BatchGame, Board, GameState, IllegalMoveError
from trapy_rl.game.sampling import random_legal_actions


def assert_same(batch: BatchGame, states: list[GameState]) -> None:
    assert (batch.stones == np.stack([s.stones for s in states])).all()
    assert batch.to_move.tolist() == [s.to_move for s in states]
    assert batch.winner.tolist() == [s.winner for s in states]
    assert batch.move_count.tolist() == [s.move_count for s in states]
    assert (batch.legal_mask() == np.stack([s.legal_mask() for s in states])).all()
    assert batch.swap_allowed.tolist() == [s.swap_allowed for s in states]
    for i, s in enumerate(states):
        assert batch.history[i, : s.move_count].tolist() == s.history
        assert (batch.history[i, s.move_count :] == -1).all()


def play_along(batch: BatchGame, states: list[GameState], rng: np.random.Generator) -> None:
    """Step both engines with the same random actions until every game ends, comparing each ply."""
    while not batch.is_over.all():
        actions = random_legal_actions(batch.legal_mask(), rng)
        # Finished games get garbage actions, which they must ignore.
        actions[batch.is_over] = rng.integers(-5, 500, batch.is_over.sum())
        ended = batch.step(actions)
        for i, s in enumerate(states):
            if not s.is_over:
                s.play(int(actions[i]))
                assert ended[i] == s.is_over
            else:
                assert not ended[i]
        assert_same(batch, states)


@pytest.mark.parametrize("side", range(2, 11))
def test_batch_equals_reference_on_random_games(side):
    rng = np.random.default_rng(side)
    games = 300 if side <= 6 else 120
    board = Board(side)
    batch = BatchGame(games, board)
    states = [GameState(board) for _ in range(games)]
    play_along(batch, states, rng)
    swaps = sum(s.history[1] == board.swap_action for s in states if s.move_count > 1)
    assert 0.3 < swaps / games < 0.7  # the swap path is exercised
    for i, s in enumerate(states):
        assert batch.winning_group(i).tolist() == s.winning_group()
        assert batch.to_state(i).stones.tolist() == s.stones.tolist()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), side=st.integers(2, 7), games=st.integers(1, 12))
def test_batch_equals_reference_property(seed, side, games):
    rng = np.random.default_rng(seed)
    board = Board(side)
    play_along(BatchGame(games, board), [GameState(board) for _ in range(games)], rng)


def test_group_regions_match_flood_fill():
    from trapy_rl.game.state import group_of, regions_of

    rng = np.random.default_rng(1)
    batch = BatchGame(20)
    for _ in range(60):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    regions = batch.group_regions()
    for g in range(batch.num_games):
        for cell in np.flatnonzero(batch.stones[g]):
            group = group_of(batch.stones[g], int(cell), batch.board)
            assert regions[g, cell] == regions_of(group, batch.board)


def test_illegal_actions_name_the_games_and_change_nothing():
    batch = BatchGame(4, side=4)
    batch.step(np.array([0, 1, 2, 3]))
    before = batch.copy()
    swap = batch.board.swap_action
    with pytest.raises(IllegalMoveError) as error:
        batch.step(np.array([0, 5, swap + 1, 7]))
    message = str(error.value)
    assert "illegal actions in 2 game(s)" in message
    assert (
        "game 0: a1 is occupied" in message
        and f"game 2: action {swap + 1} is out of range" in message
    )
    assert "game 1" not in message and "game 3" not in message
    for name in ("stones", "to_move", "winner", "move_count", "history"):
        assert (getattr(batch, name) == getattr(before, name)).all()
    batch.step(np.array([swap, 5, 6, 7]))  # swap legal at move two
    with pytest.raises(IllegalMoveError, match="game 0: swap is not allowed now"):
        batch.step(np.array([swap, 8, 9, 10]))
    with pytest.raises(ValueError, match="shape"):
        batch.step(np.array([1, 2]))


def test_swap_in_batch():
    batch = BatchGame(2)
    batch.step(np.array([9, 9]))
    batch.step(np.array([batch.board.swap_action, 10]))
    assert batch.stones[0, 9] == YELLOW and batch.stones[1, 9] == BLUE
    assert batch.to_move.tolist() == [BLUE, BLUE]
    assert batch.move_count.tolist() == [2, 2]
    assert not batch.swap_allowed.any()


def test_reset_copy_take_assign():
    rng = np.random.default_rng(0)
    batch = BatchGame(6, side=5)
    for _ in range(8):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    clone = batch.copy()
    clone.step(random_legal_actions(clone.legal_mask(), rng))
    assert (batch.move_count == 8).all() and (clone.move_count >= 8).all()
    assert not np.shares_memory(clone.stones, batch.stones)

    sub = batch.take([4, 4, 1])
    assert sub.num_games == 3 and (sub.stones[0] == batch.stones[4]).all()
    sub.step(random_legal_actions(sub.legal_mask(), rng))
    assert (batch.move_count == 8).all()  # take copies
    target = BatchGame(6, side=5)
    target.assign([0, 2, 5], sub)
    assert (target.stones[2] == sub.stones[1]).all() and (target.stones[1] == 0).all()

    restored = BatchGame(6, side=5)
    restored.copy_from(batch)
    assert (restored.stones == batch.stones).all()
    with pytest.raises(ValueError, match="same board"):
        restored.copy_from(BatchGame(6, side=4))

    batch.reset([1, 3])
    assert (batch.stones[[1, 3]] == 0).all() and (batch.move_count[[1, 3]] == 0).all()
    assert (batch.move_count[[0, 2, 4, 5]] == 8).all()
    mask = np.zeros(6, dtype=bool)
    mask[0] = True
    batch.reset(mask)
    assert batch.move_count[0] == 0
    play_along(batch, [batch.to_state(i) for i in range(6)], rng)


def test_resign_and_from_states():
    states = [
        GameState.from_moves(["a1", "swap", "b2"], Board(4)),
        GameState(Board(4)),
        GameState.from_moves(["c3"], Board(4)).resign(),
    ]
    batch = BatchGame.from_states(states)
    assert_same(batch, states)
    assert batch.resigned.tolist() == [False, False, True]
    batch.resign(np.array([True, False, False]))
    assert batch.winner[0] == BLUE and batch.resigned[0]  # yellow was to move
    assert batch.winning_group(0).size == 0
    state = batch.to_state(2)
    assert state.resigned and state.winner == BLUE


def test_same_seed_same_games():
    def run(seed):
        rng = np.random.default_rng(seed)
        batch = BatchGame(16, side=6)
        while not batch.is_over.all():
            batch.step(random_legal_actions(batch.legal_mask(), rng))
        return batch.history.copy()

    assert (run(3) == run(3)).all() and not (run(3) == run(4)).all()


def test_random_play_statistics():
    """docs/rules.md: random play lasts about 130 moves; swap taken about half the time."""
    rng = np.random.default_rng(7)
    batch = BatchGame(2000)
    while not batch.is_over.all():
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    assert 125 < batch.move_count.mean() < 136
    swapped = (batch.history[:, 1] == batch.board.swap_action).mean()
    assert 0.45 < swapped < 0.55


def test_step_only_chosen_games():
    batch = BatchGame(3, side=4)
    # Game 1 is not chosen: its action is ignored, even an illegal one.
    batch.step(np.array([0, -7, 2]), games=np.array([True, False, True]))
    assert batch.move_count.tolist() == [1, 0, 1] and batch.stones[1].sum() == 0
    batch.step(np.array([5, 3, 9]), games=[1])
    assert batch.move_count.tolist() == [1, 1, 1] and batch.stones[1, 3] == BLUE


@pytest.mark.parametrize(
    "actions, dtype",
    [
        ([1.7, 2.0, 3.0], "float64"),  # would play cell 1
        ([True, False, True], "bool"),  # would play cells 1, 0, 1
        (["1", "2", "3"], "<U1"),
        (np.array([1, 2, 3], dtype=object), "object"),
    ],
)
def test_step_refuses_actions_that_are_not_integers(actions, dtype):
    batch = BatchGame(3, side=3)
    with pytest.raises(
        TypeError, match=re.escape(f"actions must be integers, got an array of dtype {dtype}")
    ):
        batch.step(actions)
    assert (batch.move_count == 0).all()


def test_step_takes_every_integer_dtype():
    for dtype in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64):
        batch = BatchGame(2, side=3)
        batch.step(np.array([1, 2], dtype=dtype))
        assert batch.stones[:, 1:3].tolist() == [[BLUE, 0], [0, BLUE]]
    BatchGame(2, side=3).step([1, 2])  # Python ints
    # An unsigned action too big for intp is reported as it is, not wrapped to a negative one.
    with pytest.raises(IllegalMoveError, match=f"action {2**64 - 1} is out of range"):
        BatchGame(1, side=3).step(np.array([2**64 - 1], dtype=np.uint64))


@pytest.mark.parametrize(
    "games, error, reason",
    [
        ([-1], ValueError, "game index -1 is out of range 0..2"),  # would be the last game
        ([0, 3, 7], ValueError, "game index 3 is out of range 0..2 (and 1 more)"),
        (np.array([2], dtype=np.uint8) - 3, ValueError, "game index 255 is out of range"),
        ([True, False], ValueError, "a games mask must have shape (3,), got (2,)"),
        ([0.0], TypeError, "games must be a [B] bool mask or integer indices, got dtype float64"),
        ([[0, 1]], TypeError, "of shape (1, 2)"),
    ],
)
def test_games_must_be_a_mask_or_indices_in_range(games, error, reason):
    batch = BatchGame(3, side=3)
    batch.step([0, 1, 2])
    before = batch.copy()
    calls = (
        lambda: batch.step([3, 4, 5], games=games),
        lambda: batch.reset(games),
        lambda: batch.resign(games),
    )
    for call in calls:
        with pytest.raises(error, match=re.escape(reason)):
            call()
    for name in ("stones", "to_move", "winner", "move_count", "history", "resigned"):
        assert (getattr(batch, name) == getattr(before, name)).all()
    batch.step([3, 4, 5], games=[])  # no game chosen: nothing moves
    assert (batch.move_count == 1).all()
