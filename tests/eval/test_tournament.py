"""Tournaments: pairings, a strong agent rated above random, the cache, run checkpoints, plots."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from tiny import write_tiny_checkpoint, write_tiny_run_checkpoint

from trapy_rl.agents import RandomAgent, register_agent_kind
from trapy_rl.agents.base import AgentSpec
from trapy_rl.eval import play_match
from trapy_rl.eval.cache import ResultCache, flip_result
from trapy_rl.eval.report import baseline_rows, write_tournament
from trapy_rl.eval.tournament import pairings, play_tournament, run_checkpoints
from trapy_rl.game import Board
from trapy_rl.train.checkpoint import CheckpointError

GAMES_PLAYED: dict[str, int] = {}


class CountingAgent(RandomAgent):
    """A random agent that counts the games it starts (play_match resets every game once)."""

    def reset(self, games: np.ndarray) -> None:
        GAMES_PLAYED[self.name] = GAMES_PLAYED.get(self.name, 0) + len(games)


def _make_counting(spec: AgentSpec, *, board: Board, seed: int | None) -> CountingAgent:
    options = spec.typed_options({"swap_probability": 0.5})
    return CountingAgent(seed, name=spec.text, **options)


register_agent_kind("counting", _make_counting, usage="counting[:LABEL]", replace=True)


@pytest.fixture(autouse=True)
def _clear_counts():
    GAMES_PLAYED.clear()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_pairings() -> None:
    assert pairings(["a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert pairings(["a", "b", "c"], mode="gauntlet") == [("a", "b"), ("a", "c")]
    assert pairings(["a", "b", "c"], mode="gauntlet", focus="c") == [("c", "a"), ("c", "b")]
    assert pairings(["a", "b", "c", "d"], mode="ladder") == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
        ("b", "d"),
        ("c", "d"),
    ]
    assert pairings(["a", "b", "c", "d"], mode="chain") == [("a", "b"), ("b", "c"), ("c", "d")]
    # Each agent that is not a baseline against each baseline; baselines never meet.
    assert pairings(["x", "a", "y", "b"], mode="baselines", baselines=["x", "y"]) == [
        ("a", "x"),
        ("a", "y"),
        ("b", "x"),
        ("b", "y"),
    ]
    for kwargs, message in [
        ({"specs": ["a"]}, "at least two"),
        ({"specs": ["a", "b", "a"]}, r"repeated: \['a'\]"),
        (
            {"specs": ["a", "b"], "mode": "swiss"},
            "mode must be one of round_robin, gauntlet, baselines, ladder, chain",
        ),
        ({"specs": ["a", "b"], "mode": "gauntlet", "focus": "z"}, "focus 'z'"),
        ({"specs": ["a", "b"], "focus": "a"}, "focus is for mode=gauntlet"),
        ({"specs": ["a", "b"], "baselines": ["a"]}, "baselines are for mode=baselines"),
        ({"specs": ["a", "b"], "mode": "baselines"}, "needs baselines"),
        ({"specs": ["a", "b"], "mode": "baselines", "baselines": ["z"]}, r"\['z'\]"),
    ]:
        specs = kwargs.pop("specs")
        with pytest.raises(ValueError, match=message):
            pairings(specs, **kwargs)


def test_strong_agent_rated_above_random() -> None:
    # Measured: uct:30 wins about 38 of 40 games against random on side 4.
    result = play_tournament(["random", "uct:30"], board=Board(4), num_games=20, seed=0)
    (match,) = result.matches
    assert match.agent_a == "random" and match.games == 20
    assert match.interval[1] < 0.5  # random's win rate is significantly below one half
    ratings = result.ratings
    assert ratings.names[ratings.anchor] == "random" and ratings.ratings[0] == 0
    assert ratings.lower[1] > 0  # uct's interval lies above random


def test_network_search_beats_random_on_side_3(tmp_path) -> None:
    # Measured: an untrained tiny net with 16 simulations wins 34 of 40 games at side 3.
    checkpoint = write_tiny_checkpoint(tmp_path / "net.pt", side=3)
    from trapy_rl.agents import parse_agent

    board = Board(3)
    agent = parse_agent(f"mcts:{checkpoint}:16,device=cpu", board=board, seed=1)
    result = play_match(agent, RandomAgent(seed=2), num_games=40, board=board)
    assert result.interval[0] > 0.5


def test_cache_avoids_replays(tmp_path) -> None:
    board, cache = Board(3), tmp_path / "cache" / "matches.jsonl"
    specs = ["random", "counting:1", "counting:2"]
    first = play_tournament(specs, board=board, num_games=6, seed=3, cache_path=cache)
    assert first.played == 3 and first.cached == 0
    assert GAMES_PLAYED == {"counting:1": 12, "counting:2": 12}
    assert len(cache.read_text().splitlines()) == 3

    GAMES_PLAYED.clear()
    again = play_tournament(specs[::-1], board=board, num_games=6, seed=3, cache_path=cache)
    assert again.played == 0 and GAMES_PLAYED == {}
    np.testing.assert_allclose(
        again.ratings.ratings[::-1] - again.ratings.ratings[2],
        first.ratings.ratings - first.ratings.ratings[0],
        atol=1e-6,
    )

    # One more agent: only its own three matches are played.
    more = play_tournament(
        [*specs, "counting:3"], board=board, num_games=6, seed=3, cache_path=cache
    )
    assert more.played == 3 and more.cached == 3
    assert GAMES_PLAYED == {"counting:1": 6, "counting:2": 6, "counting:3": 18}

    # Another seed or game count is another key: played again.
    GAMES_PLAYED.clear()
    play_tournament(specs[:2], board=board, num_games=4, seed=3, cache_path=cache)
    assert GAMES_PLAYED == {"counting:1": 4}

    # So are random openings; openings=0 keeps the key of a cache written before they existed.
    GAMES_PLAYED.clear()
    opened = play_tournament(
        specs[:2], board=board, num_games=6, seed=3, cache_path=cache, openings=1
    )
    assert GAMES_PLAYED == {"counting:1": 6} and opened.matches[0].openings == 1
    assert '"openings": 1' in cache.read_text().splitlines()[-1]
    assert '"openings"' not in cache.read_text().splitlines()[0].split('"result"')[0]


def test_same_seed_same_results_without_cache() -> None:
    board = Board(3)
    one = play_tournament(["random", "uct:4"], board=board, num_games=8, seed=5)
    two = play_tournament(["random", "uct:4", "counting"], board=board, num_games=8, seed=5)
    assert one.matches[0] == two.matches[0]  # a pair's seeds do not depend on the others


def test_rewritten_checkpoint_is_played_again(tmp_path) -> None:
    board, cache = Board(3), tmp_path / "matches.jsonl"
    checkpoint = write_tiny_checkpoint(tmp_path / "net.pt", side=3, seed=0)
    specs = ["counting", f"net:{checkpoint},device=cpu"]
    play_tournament(specs, board=board, num_games=4, cache_path=cache)
    play_tournament(specs, board=board, num_games=4, cache_path=cache)
    assert GAMES_PLAYED == {"counting": 4}
    write_tiny_checkpoint(checkpoint, side=3, seed=1)  # other weights under the same name
    play_tournament(specs, board=board, num_games=4, cache_path=cache)
    assert GAMES_PLAYED == {"counting": 8}
    key = json.loads(cache.read_text().splitlines()[0])["key"]
    assert list(key["files"]) == [specs[1]] and len(key["files"][specs[1]]) == 64


def test_unreadable_cache_lines_are_skipped_and_replayed(tmp_path) -> None:
    board, cache = Board(3), tmp_path / "matches.jsonl"
    play_tournament(["random", "counting"], board=board, num_games=4, cache_path=cache)
    cache.write_text(cache.read_text()[:-20] + "\n")  # cut short, as by a crash
    with pytest.warns(RuntimeWarning, match=r"matches\.jsonl:1: skipping"):
        result = play_tournament(["random", "counting"], board=board, num_games=4, cache_path=cache)
    assert result.played == 1 and GAMES_PLAYED == {"counting": 8}
    with pytest.warns(RuntimeWarning):
        assert len(ResultCache(cache)) == 1


def test_flip_result() -> None:
    result = play_match(
        RandomAgent(seed=0), RandomAgent(seed=1, name="b"), num_games=9, board=Board(3)
    )
    flipped = flip_result(result)
    assert flip_result(flipped) == result
    assert flipped.agent_a == "b" and flipped.wins == result.games - result.wins
    assert flipped.wins_as_blue + flipped.wins_as_yellow == flipped.wins
    assert flipped.games_as_blue + flipped.games_as_yellow == flipped.games
    assert dataclasses.replace(flipped, agent_a="x").agent_b == "random"


def test_bad_specs_fail_before_any_game(tmp_path) -> None:
    board = Board(3)
    with pytest.raises(ValueError, match="unknown agent spec 'uct2:5'"):
        play_tournament(["counting", "uct2:5"], board=board, num_games=4)
    with pytest.raises(CheckpointError, match=r"missing\.pt"):
        play_tournament(["counting", f"net:{tmp_path / 'missing.pt'}"], board=board, num_games=4)
    with pytest.raises(ValueError, match="num_games must be >= 1"):
        play_tournament(["counting", "random"], board=board, num_games=0)
    assert GAMES_PLAYED == {}


def test_run_checkpoints_and_outputs(tmp_path) -> None:
    for iteration in (2, 10, 4):
        write_tiny_run_checkpoint(tmp_path / "run", iteration, side=3, step=100 * iteration)
    found = run_checkpoints(tmp_path / "run")
    assert [(c.iteration, c.step, c.side) for c in found] == [
        (2, 200, 3),
        (4, 400, 3),
        (10, 1000, 3),
    ]
    assert [c.path.name for c in found] == ["ckpt_000002.pt", "ckpt_000004.pt", "ckpt_000010.pt"]

    specs = ["random", *(f"net:{c.path},device=cpu" for c in found)]
    result = play_tournament(specs, board=Board(3), num_games=4, seed=0)
    curve = [(spec, c.step) for spec, c in zip(specs[1:], found)]
    paths = write_tournament(result, tmp_path / "out", curve=curve, baselines=["random"])
    assert set(paths) == {
        "table",
        "csv",
        "json",
        "plot",
        "winrates",
        "winrates_csv",
        "winrate_plot",
    }
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths["winrate_plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths["json"].read_text())
    assert len(data["matches"]) == 6 and data["anchor"] == "random"
    assert len(paths["csv"].read_text().splitlines()) == 5
    # Random was agent a of those matches: the win-rate rows are from the checkpoint's side.
    random_wins = {m.agent_b: m.wins for m in result.matches if m.agent_a == "random"}
    rows = baseline_rows(result, curve, ["random"])
    assert [(row.step, row.baseline) for row in rows] == [
        (200, "random"),
        (400, "random"),
        (1000, "random"),
    ]
    assert [row.match.wins for row in rows] == [4 - random_wins[spec] for spec, _ in curve]
    assert all(row.match.agent_a == row.agent for row in rows)

    with pytest.raises(CheckpointError, match="no numbered checkpoints"):
        run_checkpoints(tmp_path / "out")
    with pytest.raises(CheckpointError, match="no such run folder"):
        run_checkpoints(tmp_path / "nowhere")
