"""GameState and the flood-fill winner against docs/rules.md: hand-made positions, swap, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trapy_rl.game import BLUE, YELLOW, Board, GameState, IllegalMoveError, find_winner
from trapy_rl.game.state import winning_players

BOARD = Board()


def cells(spec: str) -> list[int]:
    """'a2..r2 q1' -> cell indices; a range runs along a row or a column."""
    out = []
    for token in spec.split():
        if ".." in token:
            start, end = (BOARD.coords[BOARD.parse_action(t)] for t in token.split(".."))
            step = np.sign(end - start)
            count = int(np.abs(end - start).max())
            out += [BOARD.cell_index(*(start + step * t)) for t in range(count + 1)]
        else:
            out.append(BOARD.parse_action(token))
    return out


def stones_of(blue: list[int]) -> np.ndarray:
    stones = np.zeros(BOARD.num_cells, dtype=np.int8)
    stones[blue] = BLUE
    return stones


def play_with_fillers(blue: list[int]) -> GameState:
    """Blue plays ``blue`` in order; yellow answers on interior cells, which touch no region."""
    fillers = [c for c in range(BOARD.num_cells) if c not in blue and BOARD.region_masks[c] == 0]
    assert len(fillers) >= len(blue)
    state = GameState()
    for b, y in zip(blue[:-1], fillers):
        state.play(b).play(y)
        assert state.winner == 0
    return state.play(blue[-1])


# Groups touching each winning triple {k, k+1, k+3}, and each consecutive (losing) triple.
WINNING = {
    "bottom-left, bottom-right, top": "j1 i2..i10",
    "bottom-right, right, left": "a2..r2 q1",
    "right, top, bottom-left": "b1..b10 c10..j10",
    "top, left, bottom-right": "k1..b10 a10",
    "left, bottom-left, right": "a2..r2 i1",
    "four regions: the whole bottom row": "a1..s1",
}
NOT_WINNING = {
    "bottom-left, bottom-right, right": "b1..s1",
    "bottom-right, right, top": "s1..j10",
    "right, top, left": "a10..j10",
    "top, left, bottom-left": "a1..a10",
    "left, bottom-left, bottom-right": "a1..r1",
}


@pytest.mark.parametrize("spec", WINNING.values(), ids=WINNING.keys())
def test_winning_groups(spec):
    blue = cells(spec)
    mask = np.bitwise_or.reduce(BOARD.region_masks[blue])
    assert BOARD.win_table[mask]
    assert find_winner(stones_of(blue)) == BLUE
    state = play_with_fillers(blue)
    assert state.winner == BLUE and state.is_over
    assert state.winning_group() == sorted(blue)
    assert not state.legal_mask().any()


@pytest.mark.parametrize("spec", NOT_WINNING.values(), ids=NOT_WINNING.keys())
def test_consecutive_triples_do_not_win(spec):
    blue = cells(spec)
    assert np.bitwise_count(np.bitwise_or.reduce(BOARD.region_masks[blue])) == 3
    assert find_winner(stones_of(blue)) == 0
    state = play_with_fillers(blue)
    assert state.winner == 0 and state.winning_group() == []


def test_every_winning_triple_is_covered():
    covered = {
        int(np.bitwise_or.reduce(BOARD.region_masks[cells(spec)])) for spec in WINNING.values()
    }
    triples = {m for m in range(32) if BOARD.win_table[m] and np.bitwise_count(m) == 3}
    assert triples <= covered


def test_two_separate_groups_do_not_add_up():
    # Bottom-left + top in one group, right in another: no single group touches three regions.
    blue = cells("b1..b10 r2")
    assert find_winner(stones_of(blue)) == 0


def test_swap():
    state = GameState().play("c3")
    assert state.to_move == YELLOW and state.swap_allowed
    assert state.legal_mask()[BOARD.swap_action]
    state.play("swap")
    c3 = BOARD.parse_action("c3")
    assert state.stones[c3] == YELLOW and np.count_nonzero(state.stones) == 1
    assert state.to_move == BLUE and state.move_count == 2 and not state.swap_allowed
    assert not state.legal_mask()[BOARD.swap_action]
    state.play("d4")
    assert state.to_move == YELLOW
    with pytest.raises(IllegalMoveError, match="swap: not allowed now"):
        state.play("swap")


@pytest.mark.parametrize(
    ("moves", "move", "message"),
    [
        ([], "swap", "swap: not allowed now"),
        (["a1", "b1"], "swap", "swap: not allowed now"),
        (["e5"], "e5", "e5: the cell is occupied by blue"),
        (["e5", "swap"], "E5", "e5: the cell is occupied by yellow"),
        ([], "k10", "'k10' is not a cell"),
        ([], 146, "out of range"),
        ([], "resign", "not a move"),
    ],
)
def test_illegal_moves_say_why(moves, move, message):
    state = GameState.from_moves(moves)
    before = state.copy()
    with pytest.raises(IllegalMoveError, match=message):
        state.play(move)
    assert (state.stones == before.stones).all() and state.history == before.history


def test_moves_after_the_end_are_refused():
    state = play_with_fillers(cells("j1 i2..i10"))
    with pytest.raises(IllegalMoveError, match="the game is over \\(blue won\\)"):
        state.play("s1")
    assert issubclass(IllegalMoveError, ValueError)


def test_resignation():
    state = GameState.from_moves(["a1", "b1", "c1"])
    state.resign()
    assert state.winner == BLUE and state.resigned and state.is_over
    assert state.winning_group() == []
    with pytest.raises(IllegalMoveError, match="over"):
        state.resign()
    assert GameState().resign(BLUE).winner == YELLOW


def test_copy_is_independent_and_history_names():
    state = GameState.from_moves(["j1", "swap", "a1"])
    clone = state.copy()
    clone.play("b1")
    assert state.move_count == 3 and clone.move_count == 4
    assert state.move_names() == ["j1", "swap", "a1"]
    assert state.last_action == 0


def random_game(seed: int, side: int = 10) -> GameState:
    rng = np.random.default_rng(seed)
    state = GameState(side=side)
    while not state.is_over:
        legal = state.legal_actions()
        if state.swap_allowed and rng.random() < 0.5:
            state.play("swap")
        else:
            state.play(int(rng.choice([a for a in legal if a != state.board.swap_action])))
    return state


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), side=st.integers(2, 10))
def test_incremental_winner_equals_flood_fill_at_every_ply(seed, side):
    game = random_game(seed, side)
    replay = GameState(side=side)
    for action in game.history:
        assert find_winner(replay.stones, replay.board) == 0
        replay.play(action)
        assert find_winner(replay.stones, replay.board) == replay.winner
    assert replay.winner == game.winner != 0
    assert set(game.winning_group()) <= set(np.flatnonzero(game.stones == game.winner))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), side=st.integers(2, 10))
def test_mirror_maps_winners_to_winners(seed, side):
    game = random_game(seed, side)
    board = game.board
    mirrored = GameState.from_moves([int(board.mirror_actions[a]) for a in game.history], board)
    assert mirrored.winner == game.winner
    assert (mirrored.stones == game.stones[board.mirror_cells]).all()
    assert mirrored.winning_group() == sorted(board.mirror_cells[game.winning_group()].tolist())


@pytest.mark.parametrize("side", [2, 3, 4, 6, 10])
def test_full_boards_are_always_decisive(side):
    """docs/rules.md: on every completely filled board exactly one player has a winning group."""
    board = Board(side)
    rng = np.random.default_rng(side)
    count = 10_000 if side == 10 else 2_000
    blue_wins = 0
    for _ in range(count):
        stones = np.full(board.num_cells, YELLOW, dtype=np.int8)
        stones[rng.permutation(board.num_cells)[: (board.num_cells + 1) // 2]] = BLUE
        winners = winning_players(stones, board)
        assert len(winners) == 1, stones
        blue_wins += BLUE in winners
    assert 0 < blue_wins < count


def test_random_games_last_about_130_moves():
    lengths = [random_game(seed).move_count for seed in range(200)]
    assert 120 < np.mean(lengths) < 140
