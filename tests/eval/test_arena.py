"""The arena: colours alternate, counts add up, Wilson intervals, records that replay."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from trapy_rl.agents import RandomAgent
from trapy_rl.eval import MatchResult, load_records, play_match, replay_record, wilson_interval
from trapy_rl.eval.arena import play_games
from trapy_rl.game import BLUE, YELLOW, BatchGame, Board, IllegalMoveError
from trapy_rl.game.sampling import random_legal_actions

BOARD = Board(4)


class Spy:
    """Plays like a wrapped agent and notes which games and players it was asked about."""

    def __init__(self, inner, name: str) -> None:
        self.inner, self.name = inner, name
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []
        self.batch: BatchGame | None = None
        self.resets: list[np.ndarray] = []

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        self.batch = batch
        self.calls.append((games.copy(), batch.to_move[games].copy()))
        return self.inner.act(batch, games)

    def reset(self, games: np.ndarray) -> None:
        self.resets.append(games.copy())


class FirstCell:
    """Deterministic: the lowest-numbered empty cell, never the swap."""

    name = "first"

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        return batch.legal_mask()[games, :-1].argmax(axis=1)


def test_colours_alternate_and_each_agent_is_called_once_per_step() -> None:
    a = Spy(RandomAgent(seed=1), "a")
    b = Spy(RandomAgent(seed=2), "b")
    result = play_match(a, b, num_games=21, board=BOARD, seed=0)
    even = np.arange(21) % 2 == 0
    for games, players in a.calls:
        # a is blue (player 1) in the even games, yellow (player 2) in the odd ones.
        np.testing.assert_array_equal(players, np.where(even[games], BLUE, YELLOW))
        assert len(np.unique(games)) == len(games)
    for games, players in b.calls:
        np.testing.assert_array_equal(players, np.where(even[games], YELLOW, BLUE))
    # One call per agent per step: a moves first in even games and b in odd, so both are
    # called at step one and the number of calls is at most the longest game.
    assert len(a.calls) <= BOARD.num_actions and len(b.calls) <= BOARD.num_actions
    assert 0 in a.calls[0][0] and 1 in b.calls[0][0]
    assert len(a.resets) == 1 and len(a.resets[0]) == 21
    assert result.games_as_blue == 11 and result.games_as_yellow == 10


def test_play_games_plays_only_the_chosen_games_and_leaves_the_others_alone() -> None:
    batch = BatchGame(8, BOARD)
    rng = np.random.default_rng(0)
    for _ in range(3):  # three random moves everywhere, the swap among them
        batch.step(random_legal_actions(batch.legal_mask(), rng, swap_probability=0.5))
    chosen = np.array([1, 3, 6])
    assert batch.history[3, 1] == BOARD.swap_action  # one chosen game has swapped
    others = np.setdiff1d(np.arange(8), chosen)
    a_is_blue = np.array([True, False, True, True, False, False, True, False])
    before = {
        field: getattr(batch, field)[others].copy()
        for field in ("stones", "history", "move_count", "to_move", "winner")
    }
    a, b = Spy(RandomAgent(seed=1), "a"), Spy(RandomAgent(seed=2), "b")
    play_games(batch, a, b, a_is_blue=a_is_blue, games=chosen)

    assert (batch.winner[chosen] != 0).all()
    for game in chosen:  # legal games with the right winners
        assert batch.to_state(int(game)).winner == batch.winner[game]
    for field, values in before.items():
        np.testing.assert_array_equal(getattr(batch, field)[others], values, err_msg=field)
    for spy, blue in ((a, a_is_blue), (b, ~a_is_blue)):
        assert [list(games) for games in spy.resets] == [list(chosen)]
        for games, players in spy.calls:
            assert set(games) <= set(chosen)
            np.testing.assert_array_equal(players, np.where(blue[games], BLUE, YELLOW))
    with pytest.raises(ValueError, match=r"a_is_blue must be \[8\] bool"):
        play_games(batch, a, b, a_is_blue=np.ones(8, dtype=np.int8))


def test_counts_add_up() -> None:
    result = play_match(RandomAgent(seed=3), RandomAgent(seed=4), num_games=101, board=BOARD)
    assert result.games == 101 == result.games_as_blue + result.games_as_yellow
    assert result.wins == result.wins_as_blue + result.wins_as_yellow
    assert 0 <= result.wins_as_blue <= result.games_as_blue
    assert result.win_rate == result.wins / 101
    low, high = result.interval
    assert low <= result.win_rate <= high
    assert 0 <= result.swaps <= 101
    assert BOARD.num_actions >= result.mean_length >= 4
    text = str(result)
    assert "random vs random: 101 games" in text and "as yellow" in text and "swap rate" in text


def test_deterministic_self_play_splits_by_colour() -> None:
    """The same deterministic agent on both sides: every even game equals every odd one."""
    result = play_match(FirstCell(), FirstCell(), num_games=10, board=BOARD)
    assert result.wins == 5 and result.swaps == 0
    assert {result.win_rate_as_blue, result.win_rate_as_yellow} == {0.0, 1.0}


def test_random_openings_make_deterministic_agents_play_distinct_games(tmp_path) -> None:
    path = tmp_path / "games.jsonl"
    result = play_match(
        FirstCell(), FirstCell(), num_games=40, board=BOARD, seed=3, openings=1, record_path=path
    )
    assert result.openings == 1 and "from 1 random stones per pair" in str(result)
    records = load_records(path)
    firsts = [record["moves"][0] for record in records]
    assert all(record["openings"] == 1 for record in records)
    # Games 2i and 2i + 1 share their opening stone; the pairs draw theirs independently.
    assert firsts[0::2] == firsts[1::2]
    assert len(set(firsts[0::2])) >= 10  # 20 draws from BOARD's 22 cells
    # FirstCell plays both colours alike, so each distinct opening is one distinct game.
    assert len({tuple(record["moves"]) for record in records}) == len(set(firsts))
    assert "swap" not in firsts
    for record in records:
        replay_record(record, BOARD)  # every game is legal from its opening on
    # The same seed, the same openings; without openings every pair plays the same two games.
    again = play_match(FirstCell(), FirstCell(), num_games=40, board=BOARD, seed=3, openings=1)
    assert again == result
    plain = tmp_path / "plain.jsonl"
    play_match(FirstCell(), FirstCell(), num_games=40, board=BOARD, record_path=plain)
    assert len({tuple(record["moves"]) for record in load_records(plain)}) == 1


def test_openings_must_leave_games_to_play() -> None:
    board = Board(3)
    with pytest.raises(ValueError, match="openings must be an integer >= 0"):
        play_match(FirstCell(), FirstCell(), num_games=2, board=board, openings=-1)
    with pytest.raises(ValueError, match=f"openings={board.num_cells} random stones end a game"):
        play_match(FirstCell(), FirstCell(), num_games=2, board=board, openings=board.num_cells)


def test_swap_rate_of_random_agents() -> None:
    result = play_match(RandomAgent(seed=5), RandomAgent(seed=6), num_games=1000, board=Board(3))
    assert abs(result.swap_rate - 0.5) < 0.07  # standard error 0.016


@pytest.mark.parametrize(
    "wins, games, expected",
    [
        (8, 10, (0.4902, 0.9433)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (50, 100, (0.4038, 0.5962)),
        (1, 1, (0.2065, 1.0)),
    ],
)
def test_wilson_known_numbers(wins: int, games: int, expected: tuple[float, float]) -> None:
    assert wilson_interval(wins, games) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("games", [1, 2, 7, 40, 333])
def test_wilson_matches_scipy(games: int) -> None:
    for wins in range(games + 1):
        ci = stats.binomtest(wins, games).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson_interval(wins, games) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(3, 2)
    empty = MatchResult("a", "b", 0, 0, 0, 0, 0, 0, 0, 0)
    assert np.isnan(empty.win_rate) and empty.interval == (0.0, 1.0)


def test_records_replay_to_the_final_positions(tmp_path) -> None:
    path = tmp_path / "games.jsonl"
    a = Spy(RandomAgent(seed=7), "a-agent")
    b = RandomAgent(seed=8, name="b-agent")
    result = play_match(a, b, num_games=30, board=BOARD, seed=99, record_path=path)
    final = a.batch  # the arena's batch, as the agent last saw it: now finished
    records = load_records(path)
    assert [r["game"] for r in records] == list(range(30))
    swaps = 0
    for record in records:
        game = record["game"]
        state = replay_record(record, BOARD)
        np.testing.assert_array_equal(state.stones, final.stones[game])
        assert state.winner == record["winner"] == final.winner[game]
        assert record["seed"] == 99 and record["side"] == BOARD.side
        assert (record["agent_a"], record["agent_b"]) == ("a-agent", "b-agent")
        assert record["blue"] == ("a" if game % 2 == 0 else "b")
        assert record["blue_agent"] == ("a-agent" if game % 2 == 0 else "b-agent")
        assert record["length"] == len(record["moves"]) == state.move_count
        swaps += record["moves"][1] == "swap"
    # The result and the records tell the same story.
    assert sum(r["winner_agent"] == "a" for r in records) == result.wins
    assert swaps == result.swaps
    assert sum(r["length"] for r in records) == result.total_moves


def test_bad_records_are_named(tmp_path) -> None:
    path = tmp_path / "games.jsonl"
    play_match(RandomAgent(seed=1), RandomAgent(seed=2), num_games=2, board=BOARD, record_path=path)
    record = load_records(path)[0]
    with pytest.raises(ValueError, match="is for side 4, not side 5"):
        replay_record(record, Board(5))
    lying = dict(record, winner=3 - record["winner"])
    with pytest.raises(ValueError, match="recorded winner"):
        replay_record(lying, BOARD)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(record) + "\n\n{not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:3: not JSON"):
        load_records(bad)
    bad.write_text(json.dumps({"moves": []}) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not a game record"):
        load_records(bad)


def test_illegal_moves_name_the_agent() -> None:
    class Occupier:
        name = "cheat"

        def act(self, batch, games):
            return np.zeros(len(games), dtype=np.int64)  # cell 0, occupied after once

    with pytest.raises(IllegalMoveError, match=r"agent 'cheat' played illegal move 'a1'"):
        play_match(Occupier(), RandomAgent(seed=0), num_games=4, board=BOARD)

    class Short:
        name = "short"

        def act(self, batch, games):
            return np.zeros(1, dtype=np.int64)

    with pytest.raises(IllegalMoveError, match=r"agent 'short' returned .* shape \(1,\)"):
        play_match(Short(), RandomAgent(seed=0), num_games=4, board=BOARD)
    with pytest.raises(ValueError, match="num_games"):
        play_match(RandomAgent(), RandomAgent(), num_games=0, board=BOARD)


def test_progress_bar_runs(capsys) -> None:
    result = play_match(
        RandomAgent(seed=1), RandomAgent(seed=2), num_games=6, board=BOARD, progress=True
    )
    assert result.games == 6
