"""The rating pool: calibrated once, then agents rated on its fixed scale."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from tiny import write_tiny_checkpoint

from trapy_rl.eval.pool import (
    Pool,
    PoolMember,
    _summed,
    calibrate_pool,
    load_pool,
    pool_rating,
    rate_against_pool,
    rating_from_cache,
)
from trapy_rl.game import Board

BOARD = Board(3)
MEMBERS = ["random", "uct:4", "uct:40"]


@pytest.fixture(scope="module")
def pool() -> Pool:
    pool, result = calibrate_pool(MEMBERS, board=BOARD, num_games=12, seed=0)
    assert result.ratings.names[result.ratings.anchor] == "random"
    return pool


def test_calibration_rates_the_members_weakest_first_random_at_zero(pool) -> None:
    assert pool.members[0].spec == "random" and pool.members[0].elo == 0.0
    assert [m.elo for m in pool.members] == sorted(m.elo for m in pool.members)
    assert all(m.low <= m.elo <= m.high for m in pool.members)


def test_an_agent_is_rated_with_the_pool_held(pool, tmp_path) -> None:
    checkpoint = write_tiny_checkpoint(tmp_path / "net.pt", side=3)
    spec = f"mcts:{checkpoint}:8,device=cpu"
    cache = tmp_path / "cache.jsonl"
    result = rate_against_pool([spec], pool, board=BOARD, num_games=4, cache_path=cache)
    fitted = dict(zip(result.ratings.names, result.ratings.ratings))
    for member in pool.members:
        assert fitted[member.spec] == pytest.approx(member.elo)  # held, not refitted
    assert {(m.agent_a, m.agent_b) for m in result.matches} == {(spec, s) for s in MEMBERS}
    assert all(m.starts > 0 and 1 <= m.distinct_games <= m.games for m in result.matches)
    again = rate_against_pool([spec], pool, board=BOARD, num_games=4, cache_path=cache)
    assert again.played == 0 and np.allclose(again.ratings.ratings, result.ratings.ratings)
    with pytest.raises(ValueError, match="pool members"):
        rate_against_pool(["uct:4"], pool, board=BOARD, num_games=2)


def test_a_rating_is_refitted_from_the_cache_alone(pool, tmp_path) -> None:
    """Steps of two seeds sum into one match per member, matches with non-members are left
    out, and a checkpoint rewritten since the games has no cached rating."""
    checkpoint = write_tiny_checkpoint(tmp_path / "net.pt", side=3)
    spec, cache = f"mcts:{checkpoint}:8,device=cpu", tmp_path / "cache.jsonl"
    played = [
        rate_against_pool(
            [spec], pool.select(members), board=BOARD, num_games=4, seed=seed, cache_path=cache
        ).matches
        for members, seed in ((["uct:4"], 0), (["uct:4", "uct:40"], 1))
    ]
    stranger = dataclasses.replace(pool, members=(PoolMember("uct:9", 100.0, 50.0, 150.0),))
    rate_against_pool([spec], stranger, board=BOARD, num_games=2, cache_path=cache)
    (a,), (b, c) = played
    expected = pool_rating({"uct:4": _summed(a, b), "uct:40": c}, pool)
    refitted = rating_from_cache(spec, pool, cache)
    assert refitted.names == expected.names
    assert np.allclose(refitted.ratings, expected.ratings)
    assert np.allclose(refitted.upper, expected.upper)
    assert rating_from_cache("uct:9", pool, cache) is None
    write_tiny_checkpoint(checkpoint, side=3, seed=1)  # another net under the same name
    assert rating_from_cache(spec, pool, cache) is None


def test_pool_files_round_trip_and_bad_ones_are_named(pool, tmp_path) -> None:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(pool.to_dict()))
    assert load_pool(path, side=3) == pool
    assert pool.select(["random", "uct:40"]).ratings.keys() == {"random", "uct:40"}
    with pytest.raises(ValueError, match="not in the side-3 pool"):
        pool.select(["uct:9"])
    with pytest.raises(ValueError, match="pool of side 3, not 4"):
        load_pool(path, side=4)
    path.write_text('{"side": 3}')
    with pytest.raises(ValueError, match=r"pool\.json: not a rating pool"):
        load_pool(path, side=3)
    with pytest.raises(ValueError, match="no rating pool ships for side 7"):
        load_pool("default", side=7)


def test_the_shipped_side_10_pool_loads_weakest_first_from_random_at_zero() -> None:
    from trapy_rl.agents import parse_agent
    from trapy_rl.agents.base import AgentSpec

    pool = load_pool("default", side=10)
    elos = [member.elo for member in pool.members]
    assert pool.members[0].spec == "random" and elos[0] == 0.0 and elos == sorted(elos)
    assert pool.games >= 40 and "python -m trapy_rl.eval.pool" in pool.note
    for member in pool.members:
        parse_agent(member.spec, board=Board(10))  # every member is a valid agent spec
    # Its nets are the pool's own, shipped under names that never move: new shipped nets do
    # not change the scale.
    specs = [AgentSpec.parse(member.spec) for member in pool.members]
    nets = [spec.args[0] for spec in specs if spec.kind in ("net", "mcts")]
    assert nets and all(name.startswith("pool_") for name in nets)
    # Every gap of the ladder is measured: neighbours met, and neither swept the other.
    for weaker, stronger, score in pool.neighbour_scores():
        assert score is not None and 0.15 <= score <= 0.85, (weaker, stronger, score)


def test_neighbour_scores_are_the_stronger_members_measured_share(pool) -> None:
    assert len(pool.matches) == 3  # the round robin of three members
    scores = pool.neighbour_scores()
    assert [(a, b) for a, b, _ in scores] == [
        (x.spec, y.spec) for x, y in zip(pool.members, pool.members[1:], strict=False)
    ]
    for weaker, stronger, score in scores:
        (match,) = [m for m in pool.matches if {m.a, m.b} == {weaker, stronger}]
        wins = match.wins if match.a == stronger else match.games - match.wins
        assert score == wins / match.games
    unmet = dataclasses.replace(pool, matches=pool.matches[:0])
    assert [score for _, _, score in unmet.neighbour_scores()] == [None, None]


def test_a_pool_as_one_fit_holds_its_members_and_games(pool) -> None:
    ratings = pool.as_ratings()  # what the ladder's picture draws
    assert ratings.names == tuple(m.spec for m in pool.members)
    assert list(ratings.ratings) == [m.elo for m in pool.members]
    assert list(ratings.lower) == [m.low for m in pool.members]
    for match in pool.matches:
        a, b = ratings.names.index(match.a), ratings.names.index(match.b)
        assert ratings.wins[a, b] == match.wins
        assert ratings.wins[b, a] == match.games - match.wins
    assert int(ratings.games.sum()) == 2 * sum(m.games for m in pool.matches)


def _ladder(elos: list[float]) -> Pool:
    members = [
        {"spec": spec, "elo": elo, "low": elo, "high": elo}
        for spec, elo in zip(["random", "uct:2", "uct:8", "uct:40"], elos)
    ]
    return Pool.from_dict({"side": 3, "members": members, "games": 12, "seed": 0})


def test_an_adaptive_rating_climbs_to_the_members_near_the_agent() -> None:
    """uct:200 beats random and weak searches on side 3 nearly always: the steps climb from
    the middle member to the top one, where its games say the most."""
    from trapy_rl.eval.pool import AdaptiveSettings, rate_adaptively

    ladder = _ladder([0.0, 150.0, 400.0, 700.0])
    settings = AdaptiveSettings(target=1.0, games_per_step=8, max_games=24)
    rating = rate_adaptively("uct:200", ladder, board=BOARD, settings=settings)
    assert not rating.converged and rating.games == 24  # a target of 1 Elo is never reached
    assert rating.steps[0][0] == "uct:8"  # the middle member first
    assert rating.steps[-1][0] == "uct:40"  # then up the ladder
    assert rating.elo > 400.0
    assert rating.ratings.names[-1] == "agent"
    assert sum(m.games for m in rating.matches.values()) == 24


def test_an_adaptive_rating_stops_at_its_target_and_refuses_bad_input() -> None:
    from trapy_rl.eval.pool import AdaptiveSettings, rate_adaptively

    ladder = _ladder([0.0, 150.0, 400.0, 700.0])
    settings = AdaptiveSettings(target=1000.0, games_per_step=4)
    rating = rate_adaptively("uct:4", ladder, board=BOARD, settings=settings)
    assert rating.converged and rating.games == 4 and rating.half_width <= 1000.0
    assert rating.fresh == {"uct:8"}  # played now, not read from a cache
    started = dataclasses.replace(settings, start=650.0)
    rating = rate_adaptively("uct:4", ladder, board=BOARD, settings=started)
    assert rating.steps[0][0] == "uct:40"  # the member nearest the start, not the middle one
    with pytest.raises(ValueError, match="pool member"):
        rate_adaptively("uct:8", ladder, board=BOARD)
    with pytest.raises(ValueError, match="even"):
        AdaptiveSettings(games_per_step=3)
    with pytest.raises(ValueError, match="target"):
        AdaptiveSettings(target=0.0)
    with pytest.raises(ValueError, match="max_games"):
        AdaptiveSettings(games_per_step=20, max_games=10)
    with pytest.raises(ValueError, match="start"):
        AdaptiveSettings(start=float("nan"))
    with pytest.raises(ValueError, match="side 3"):
        rate_adaptively("uct:4", ladder, board=Board(4))


def test_a_ladder_calibration_plays_each_member_against_the_next_two() -> None:
    members = ["random", "uct:2", "uct:8", "uct:40"]
    ladder, result = calibrate_pool(members, board=BOARD, num_games=4, seed=0, mode="ladder")
    assert {(m.agent_a, m.agent_b) for m in result.matches} == {
        ("random", "uct:2"),
        ("random", "uct:8"),
        ("uct:2", "uct:8"),
        ("uct:2", "uct:40"),
        ("uct:8", "uct:40"),
    }
    assert ladder.ratings["random"] == 0.0 and set(ladder.ratings) == set(members)


def test_an_extended_pool_keeps_the_held_ratings(pool, tmp_path) -> None:
    """The new member plays the top held one only; the held members keep rating and interval."""
    from trapy_rl.eval.report import plot_ladder

    extended, result = calibrate_pool(
        ["uct:40", "uct:200"], board=BOARD, num_games=8, seed=0, mode="ladder", held=pool
    )
    assert {(m.agent_a, m.agent_b) for m in result.matches} == {("uct:40", "uct:200")}
    assert [m.spec for m in extended.members][: len(pool.members)] == MEMBERS
    assert set(pool.members) <= set(extended.members)  # every held member as it was
    (new,) = [m for m in extended.members if m.spec == "uct:200"]
    assert new.low < new.elo < new.high  # fitted on the held scale, with its interval
    (top,) = [m for m in pool.members if m.spec == "uct:40"]
    assert new.high - new.low > top.high - top.low  # no surer than the member it hangs from
    assert extended.note.startswith(pool.note)
    picture = plot_ladder(result.ratings, tmp_path / "ladder.png")
    assert picture.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="none of"):
        calibrate_pool(["uct:3", "uct:5"], board=BOARD, num_games=2, held=pool)
