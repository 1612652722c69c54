"""The map's games in seeded batches: workers and a stop change nothing in the result."""

from __future__ import annotations

import json

import numpy as np
import pytest

import trapy_rl.analysis.playout_jobs as playout_jobs
from trapy_rl.analysis import PlayoutJob, estimate_openings
from trapy_rl.game import Board

BOARD = Board(3)
KEY = {"what": "a test map"}


def job(agent: str = "uct:6", **options) -> PlayoutJob:
    return PlayoutJob(agent, "random", BOARD, seed=7, batch_size=10, **options)


def test_a_round_plays_the_games_asked_for_and_rounds_differ():
    first = job()
    wins, games = first(np.arange(BOARD.num_cells) % 4)  # 0 to 3 games a cell
    np.testing.assert_array_equal(games, np.arange(BOARD.num_cells) % 4)
    assert ((0 <= wins) & (wins <= games)).all()
    random_games = job("random")  # random play: wins vary from game to game
    rounds = [random_games(np.full(BOARD.num_cells, 6))[0] for _ in range(2)]
    assert not np.array_equal(*rounds)  # round 2 is not round 1 again
    np.testing.assert_array_equal(job()(np.arange(BOARD.num_cells) % 4)[0], wins)


def test_each_batch_has_its_own_seed(monkeypatch):
    seeds = []

    def record(agent, opponent, side, cells, seed):
        seeds.append(tuple(seed.generate_state(2)))
        return np.zeros(BOARD.num_cells, dtype=np.int64)

    monkeypatch.setattr(playout_jobs, "play_batch", record)
    play = job()
    play(5)  # 60 games: 6 batches of 10
    play(5)
    assert len(seeds) == 12 and len(set(seeds)) == 12
    later = job(sitting=1)  # more games for the same map, later: seeds of its own
    later(5)
    later(5)
    assert len(set(seeds)) == 24
    with pytest.raises(ValueError, match="sitting must be an integer >= 0"):
        job(sitting=-1)


def test_two_worker_processes_give_the_result_of_one():
    num_games = np.full(BOARD.num_cells, 5)
    one = job()(num_games)
    two = job(workers=2)(num_games)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])


def test_a_stopped_job_resumes_from_its_journal_with_the_same_result(tmp_path, monkeypatch):
    num_games = np.full(BOARD.num_cells, 5)  # 6 batches
    whole = job()(num_games)[0]

    journal = tmp_path / "map.journal.json"
    played = []
    play_batch = playout_jobs.play_batch

    def stop_after_two(*task):
        if len(played) == 2:
            raise KeyboardInterrupt
        played.append(task)
        return play_batch(*task)

    monkeypatch.setattr(playout_jobs, "play_batch", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        job(journal=journal, key=KEY)(num_games)
    kept = json.loads(journal.read_text())
    assert sorted(kept["batches"]) == ["0:0", "0:1"] and kept["key"] == KEY

    played.clear()
    monkeypatch.setattr(
        playout_jobs, "play_batch", lambda *task: played.append(1) or play_batch(*task)
    )
    again = job(journal=journal, key=KEY)
    assert again.games_kept == 20
    np.testing.assert_array_equal(again(num_games)[0], whole)
    assert len(played) == 4  # only the batches the journal lacked


def test_a_journal_of_other_settings_or_damaged_is_refused(tmp_path):
    journal = tmp_path / "map.journal.json"
    job(journal=journal, key=KEY)(1)
    with pytest.raises(ValueError, match="written for other settings; delete it"):
        job(journal=journal, key={"what": "another map"})
    other_plan = job(journal=journal, key=KEY)
    with pytest.raises(ValueError, match="batch 0:0 was played from other openings"):
        other_plan(2)
    journal.write_text('{"format": 1, "key": {}, "batches": {"0:0": {"wins": [1]}}}')
    with pytest.raises(ValueError, match="not a journal of played batches"):
        job(journal=journal, key=KEY)
    journal.write_text("{not json")
    with pytest.raises(ValueError, match="not a journal of played batches"):
        job(journal=journal, key=KEY)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        job(workers=0)
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        estimate_openings(side=3, estimator="rollout", workers=0, cache_dir=None)


def test_a_stopped_map_resumes_to_the_table_it_would_have_had(tmp_path, monkeypatch, capsys):
    settings = dict(
        side=3, estimator="playout", agent="uct:6", opponent="random", playouts=200,
        refine_fairest=0,
    )  # fmt: skip
    whole = estimate_openings(cache_dir=tmp_path / "whole", **settings)

    play_batch = playout_jobs.play_batch
    calls = []

    def stop_after_one(*task):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return play_batch(*task)

    monkeypatch.setattr(playout_jobs, "play_batch", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        estimate_openings(cache_dir=tmp_path / "stopped", **settings)
    (journal,) = (tmp_path / "stopped").glob("*.journal.json")
    assert "512 games are kept" in capsys.readouterr().out
    monkeypatch.setattr(playout_jobs, "play_batch", play_batch)
    resumed = estimate_openings(cache_dir=tmp_path / "stopped", **settings)
    assert "resuming: 512 games" in capsys.readouterr().out
    assert not journal.exists()  # the table holds it all now
    np.testing.assert_array_equal(resumed["v"], whole["v"])
    np.testing.assert_array_equal(resumed["games"], whole["games"])
