import os
import signal

import numpy as np
import pytest
import torch

from trapy_rl.errors import Terminated
from trapy_rl.train import load_checkpoint, load_network, train
from trapy_rl.train.checkpoint import CheckpointError

# Curriculum stages counted in iterations, or in minutes of training clock (whatever the
# default curriculum counts).
ITERATIONS = {"curriculum.until_minutes": []}
MINUTES = {"curriculum.until": []}


def test_smoke_run_writes_config_checkpoints_and_events(tmp_path, make_config):
    evaluation = {"every": 2, "num_games": 2, "final_games": 2, "num_simulations": 4}
    opponents = ["random", "uct:4"]
    cfg = make_config(tmp_path, **{f"eval.{k}": v for k, v in evaluation.items()})
    cfg = cfg.replace({"eval.opponents": opponents, "eval.final_opponents": opponents})
    result = train(cfg)
    assert result.iterations == 3
    assert (tmp_path / "config.yaml").read_text().startswith("side: 4")
    names = sorted(p.name for p in (tmp_path / "checkpoints").glob("*.pt"))
    assert names == ["ckpt_000001.pt", "ckpt_000002.pt", "ckpt_000003.pt", "latest.pt"]
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))
    assert list(result.final_matches) == opponents
    assert result.final_match is result.final_matches["random"]
    assert all(match.games == 2 for match in result.final_matches.values())
    assert result.final_matches["uct:4"].starts  # against a searching opponent: the start set
    evaluated = [row for row in result.history if "eval/win_rate_vs_random" in row]
    assert [row["iteration"] for row in evaluated] == [2]
    _, info = load_network(tmp_path)
    assert info["iteration"] == 3 and info["side"] == 4

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    for tag in (
        "loss/policy",
        "loss/value",
        "loss/total",
        "loss/entropy",
        "optim/lr",
        "selfplay/moves_per_s",
        "selfplay/simulations_per_s",
        "eval/win_rate_vs_random",
        "eval/win_rate_vs_uct_4",
    ):
        assert tag in tags, tag
    assert "eval/opening_values" in events.Tags()["images"]


def weights(path):
    return load_checkpoint(path)["model"]["state"]


def straight_and_resumed(tmp_path, make_config, *, iterations: int, split: int, **options):
    """A run of ``iterations`` straight through, and one stopped after ``split`` and resumed;
    asserts their final weights are equal and returns both results.

    The first part is a run of ``split`` iterations, so a learning rate over the run's length
    would differ from the straight run's: the learning rate is held constant here (a cosine
    run stopped by a signal resumes exactly: the signal test below).
    """
    options = {"optim.lr_schedule": "constant", **options}
    straight = train(make_config(tmp_path / "straight", iterations=iterations, **options))
    first = train(make_config(tmp_path / "split", iterations=split, **options))
    resumed = train(
        make_config(
            tmp_path / "resumed", iterations=iterations, resume=str(first.run_dir), **options
        )
    )
    a, b = weights(straight.checkpoint), weights(resumed.checkpoint)
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    return straight, first, resumed


def test_resume_continues_exactly_as_without_stopping(tmp_path, make_config):
    straight, first, resumed = straight_and_resumed(tmp_path, make_config, iterations=2, split=1)
    assert resumed.iterations == 2
    a = weights(straight.checkpoint)
    # and the learning actually changed the weights in the second iteration
    c = weights(first.checkpoint)
    assert any(not torch.equal(a[key], c[key]) for key in a if a[key].is_floating_point())
    sa = load_checkpoint(straight.checkpoint)
    sb = load_checkpoint(resumed.checkpoint)
    assert sa["counters"] == sb["counters"]
    np.testing.assert_array_equal(
        np.asarray(sa["selfplay"]["history"]), np.asarray(sb["selfplay"]["history"])
    )


GROWING_MIXED = {  # a window growing from 32 positions, a value target half root values
    "replay.capacity": 32,
    "replay.growth": 0.4,
    "replay.max_capacity": 400,
    "optim.value_q_share": 0.5,
}


def test_a_growing_window_and_a_mixed_value_target_resume_exactly(tmp_path, make_config):
    """Stopped while its window grows, the run goes on as if it had not stopped: the same
    weights, window (slots, positions, root values) and games, iteration by iteration."""
    straight, first, resumed = straight_and_resumed(
        tmp_path, make_config, iterations=4, split=2, **GROWING_MIXED
    )
    windows = [row["replay/window"] for row in straight.history]
    assert windows[0] < 32 < windows[1] < windows[-1]  # filling, then grown past c
    assert windows[2:] == [row["replay/window"] for row in resumed.history]
    losses = [row["loss/value"] for row in straight.history[2:]]
    assert losses == [row["loss/value"] for row in resumed.history]
    saved = load_checkpoint(first.checkpoint)["replay"]
    assert saved["capacity"] > 32  # stopped after a growth step
    a, b = load_checkpoint(straight.checkpoint), load_checkpoint(resumed.checkpoint)
    for key, value in a["replay"].items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(b["replay"][key]), key)
    np.testing.assert_array_equal(a["selfplay"]["move_count"], b["selfplay"]["move_count"])
    for game, plies in enumerate(a["selfplay"]["move_count"]):  # the games' plies so far
        for key in ("history", "policies", "root_values"):
            x, y = (np.asarray(state["selfplay"][key])[game, :plies] for state in (a, b))
            np.testing.assert_array_equal(x, y, key)
    assert a["replay"]["capacity"] <= 400
    assert (a["replay"]["root_values"] != a["replay"]["values"]).any()  # q is not z


def test_a_checkpoint_from_before_root_values_and_growth_resumes(tmp_path, make_config):
    """A checkpoint without root values (window and games) or the new settings resumes: with
    the defaults exactly as the run would have gone on (q is not trained on), and with a
    growing window and a mixed target too (its older positions train on their outcomes)."""
    from trapy_rl.train.checkpoint import write_run_checkpoint

    constant = {"optim.lr_schedule": "constant"}  # a shorter first run: see straight_and_resumed
    straight = train(make_config(tmp_path / "straight", iterations=3, **constant))
    first = train(make_config(tmp_path / "first", iterations=2, **constant))
    payload = load_checkpoint(first.checkpoint)
    payload.pop("path", None)
    del payload["replay"]["root_values"], payload["selfplay"]["root_values"]
    del payload["config"]["replay"]["growth"], payload["config"]["replay"]["max_capacity"]
    del payload["config"]["optim"]["value_q_share"]
    old = tmp_path / "old"
    write_run_checkpoint(old / "checkpoints", 2, payload)
    resumed = train(make_config(tmp_path / "resumed", iterations=3, resume=str(old), **constant))
    a, b = weights(straight.checkpoint), weights(resumed.checkpoint)
    assert all(torch.equal(a[key], b[key]) for key in a)
    mixed = train(make_config(tmp_path / "mixed", iterations=3, resume=str(old), **GROWING_MIXED))
    assert mixed.iterations == 3 and "loss/value" in mixed.history[-1]


def test_bad_replay_and_value_target_settings_are_refused_in_one_line(tmp_path, make_config):
    bad = {
        "replay.growth": (1.5, r"^replay\.growth must be in \[0, 1\], got 1\.5$"),
        "replay.max_capacity": (0, r"^replay\.max_capacity must be between 1 and 100,000,000"),
        "optim.value_q_share": (1.5, r"^optim\.value_q_share must be in \[0, 1\], got 1\.5$"),
    }
    for key, (value, message) in bad.items():
        with pytest.raises(ValueError, match=message):
            make_config(tmp_path, **{key: value})
    with pytest.raises(ValueError, match=r"^replay\.max_capacity=16 is below capacity=32: a "):
        make_config(tmp_path, **{**GROWING_MIXED, "replay.max_capacity": 16})
    make_config(tmp_path, **{"replay.capacity": 32, "replay.max_capacity": 16})  # no growth


def test_resume_with_another_board_or_net_fails_clearly(tmp_path, make_config):
    first = train(make_config(tmp_path / "a", iterations=1))
    with pytest.raises(CheckpointError, match=r"side-4 board.*side 5"):
        train(make_config(tmp_path / "b", side=5, resume=str(first.run_dir)))
    bigger = {**make_config(tmp_path).model.to_dict(), "channels": 24}
    with pytest.raises(CheckpointError, match="another shape"):
        train(make_config(tmp_path / "c", model=bigger, resume=str(first.run_dir)))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_at_the_iteration_boundary_and_the_run_resumes_exactly(
    tmp_path, make_config, monkeypatch, signum
):
    from trapy_rl.train import learner

    options = {"checkpoint.every": 0}
    straight = train(make_config(tmp_path / "straight", iterations=4, **options))
    calls = {"n": 0}
    original = learner.Learner.train_step

    def signalled(self, samples):  # the signal arrives in the middle of learning
        calls["n"] += 1
        if calls["n"] == 2:
            os.kill(os.getpid(), signum)
        return original(self, samples)

    monkeypatch.setattr(learner.Learner, "train_step", signalled)
    stopped = train(make_config(tmp_path / "split", iterations=4, **options))
    monkeypatch.undo()
    assert stopped.stopped_by == signal.Signals(signum).name
    assert stopped.exit_code == 128 + signum
    assert 1 <= stopped.iterations < 4
    assert load_checkpoint(stopped.checkpoint)["counters"]["iteration"] == stopped.iterations
    assert signal.getsignal(signum) is not None  # the handlers are given back
    resumed = train(
        make_config(tmp_path / "resumed", iterations=4, resume=str(stopped.run_dir), **options)
    )
    a, b = load_checkpoint(straight.checkpoint), load_checkpoint(resumed.checkpoint)
    assert a["counters"] == b["counters"]
    for key in a["model"]["state"]:
        assert torch.equal(a["model"]["state"][key], b["model"]["state"][key]), key


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]
)
def test_a_signal_before_the_first_iteration_stops_at_once_saving_nothing(
    tmp_path, make_config, monkeypatch, signum, raised
):
    from trapy_rl.train import loop

    def signalled(board):  # the signal arrives while the run is being built
        os.kill(os.getpid(), signum)
        return ()

    monkeypatch.setattr(loop, "load_starts", signalled)
    with pytest.raises(raised):
        train(make_config(tmp_path, iterations=2, **{"eval.every": 1}))
    assert not list((tmp_path / "checkpoints").glob("*.pt"))
    assert signal.getsignal(signum) is not None  # the handlers are given back


def test_a_second_ctrl_c_stops_at_once_saving_nothing_half_done(tmp_path, make_config, monkeypatch):
    from trapy_rl.train import learner

    calls = {"n": 0}
    original = learner.Learner.train_step

    def interrupted(self, samples):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(self, samples)

    monkeypatch.setattr(learner.Learner, "train_step", interrupted)
    cfg = make_config(tmp_path, iterations=50, **{"checkpoint.every": 0})
    with pytest.raises(KeyboardInterrupt):
        train(cfg)
    assert not list((tmp_path / "checkpoints").glob("*.pt"))


def test_resuming_with_another_optimiser_is_refused(tmp_path, make_config):
    first = train(make_config(tmp_path / "a", iterations=1))
    with pytest.raises(CheckpointError, match=r"optim=adam, this one has optim=sgd"):
        train(make_config(tmp_path / "b", iterations=2, resume=str(first.run_dir),
                          **{"optim.name": "sgd"}))  # fmt: skip


def test_bad_configuration_is_named(tmp_path, make_config):
    with pytest.raises(ValueError, match=r"replay\.mirror"):
        train(make_config(tmp_path, **{"replay.mirror": "sideways"}))
    with pytest.raises(ValueError, match=r"selfplay\.num_games must be between 1 and"):
        train(make_config(tmp_path, **{"selfplay.num_games": 0}))
    with pytest.raises(ValueError, match="model: unknown setting 'chanels'"):
        train(make_config(tmp_path, model={"chanels": 8}))


def test_worker_processes_train_and_their_games_resume_only_with_workers(tmp_path, make_config):
    run = train(make_config(tmp_path / "workers", iterations=2, clock="wall",
                                 **{"selfplay.num_workers": 2}))  # fmt: skip
    saved = load_checkpoint(run.checkpoint)
    assert len(saved["selfplay"]["workers"]) == 2
    assert saved["counters"]["positions"] > 0 and saved["learner"]["step"] > 0
    with pytest.raises(ValueError, match="num_workers"):
        train(make_config(tmp_path / "local", iterations=3, resume=str(run.run_dir)))


@pytest.mark.slow
def test_worker_processes_resume_exactly(tmp_path, make_config):
    options = {"selfplay.num_workers": 2, "clock": "wall"}
    straight_and_resumed(tmp_path, make_config, iterations=2, split=1, **options)


def test_a_run_rates_itself_on_a_pools_fixed_scale(tmp_path, make_config):
    import json

    from trapy_rl.eval.pool import calibrate_pool
    from trapy_rl.game import Board

    pool, _ = calibrate_pool(["random", "uct:4"], board=Board(4), num_games=4)
    pool_file = tmp_path / "pool.json"
    pool_file.write_text(json.dumps(pool.to_dict()))
    evaluation = {"every": 1, "num_games": 2, "num_simulations": 4, "pool": str(pool_file)}
    cfg = make_config(
        tmp_path / "run", iterations=1, **{f"eval.{k}": v for k, v in evaluation.items()}
    )
    cfg = cfg.replace({"eval.opponents": ["random", "uct:4"], "logger.name": "none"})
    (row,) = train(cfg).history
    assert row["eval/pool_elo_low"] <= row["eval/pool_elo"] <= row["eval/pool_elo_high"]
    with pytest.raises(ValueError, match="not in the side-4 pool"):
        train(cfg.replace({"eval.opponents": ["random", "uct:9"]}))


def test_calibrated_resignation_is_logged_and_resumes_exactly(tmp_path, make_config):
    options = {"selfplay.resign_false_rate": 0.05, "selfplay.resign_playout_fraction": 0.5}
    straight, _, resumed = straight_and_resumed(
        tmp_path, make_config, iterations=2, split=1, **options
    )
    assert all("selfplay/resign_threshold" in row for row in straight.history)
    a, b = load_checkpoint(straight.checkpoint), load_checkpoint(resumed.checkpoint)
    assert a["resign"]["threshold"] == b["resign"]["threshold"]
    np.testing.assert_array_equal(a["resign"]["winner_mins"], b["resign"]["winner_mins"])
    with pytest.raises(ValueError, match="needs played-out games"):
        make_config(
            tmp_path,
            **{"selfplay.resign_false_rate": 0.05, "selfplay.resign_playout_fraction": 0.0},
        )


def test_a_gumbel_run_trains(tmp_path, make_config):
    cfg = make_config(tmp_path, iterations=2, **{"mcts.search": "gumbel", "mcts.max_considered": 4})
    result = train(cfg)
    assert result.iterations == 2 and any("loss/policy" in row for row in result.history)


def test_an_ownership_run_logs_its_loss_and_a_config_without_the_head_is_refused(
    tmp_path, make_config
):
    head = {**make_config(tmp_path).model.to_dict(), "ownership_head": True}
    cfg = make_config(tmp_path / "run", iterations=2, model=head, **{"optim.ownership_weight": 1.0})
    result = train(cfg)
    assert any("loss/ownership" in row for row in result.history)
    with pytest.raises(ValueError, match=r"needs a net with model\.ownership_head"):
        make_config(tmp_path, **{"optim.ownership_weight": 1.0})


def test_a_board_size_curriculum_moves_the_net_to_larger_boards_and_resumes_exactly(
    tmp_path, make_config
):
    options = {"curriculum.sides": [3], "curriculum.until": [2], **ITERATIONS}
    straight_and_resumed(tmp_path, make_config, iterations=3, split=2, **options)
    sides = {
        name: load_checkpoint(tmp_path / "straight" / "checkpoints" / name)["side"]
        for name in ("ckpt_000001.pt", "ckpt_000002.pt", "ckpt_000003.pt")
    }
    assert sides == {"ckpt_000001.pt": 3, "ckpt_000002.pt": 3, "ckpt_000003.pt": 4}
    with pytest.raises(ValueError, match=r"curriculum\.until"):
        make_config(tmp_path, **{"curriculum.sides": [3, 4], "curriculum.until": [5], **ITERATIONS})


def test_a_curriculum_in_minutes_moves_on_with_the_training_clock(tmp_path, make_config, capsys):
    """``until_minutes``: an iteration plays the stage of the training clock at its start, so
    a bound the first iteration passes moves the second to the run's side; a resumed run
    keeps the side it was saved on until the clock moves it on."""
    passed = {"curriculum.sides": [3], "curriculum.until_minutes": [1e-9], **MINUTES}
    result = train(make_config(tmp_path / "passed", iterations=3, **passed))
    sides = [load_checkpoint(tmp_path / "passed" / "checkpoints" / f"ckpt_00000{i}.pt")["side"]
             for i in (1, 2, 3)]  # fmt: skip
    assert sides == [3, 4, 4] and result.iterations == 3
    assert "curriculum: side 4 from iteration 1" in capsys.readouterr().out

    # Side 3 for a moment, then side 4 until minute 1000, then the run's side 5.
    waiting = {
        "side": 5,
        "curriculum.sides": [3, 4],
        "curriculum.until_minutes": [1e-9, 1000],
        **MINUTES,
    }
    train(make_config(tmp_path / "waiting", iterations=3, **waiting))
    assert "ended on side 4, before its side-5 stage" in capsys.readouterr().out
    # From the side-4 checkpoint of iteration 2: side 4 on, with its games and replay window.
    saved = tmp_path / "waiting" / "checkpoints" / "ckpt_000002.pt"
    more = make_config(tmp_path / "more", iterations=4, resume=str(saved), **waiting)
    assert train(more).iterations == 4
    out = capsys.readouterr().out
    assert "resumed from" in out and "curriculum: side 3" not in out
    assert load_checkpoint(tmp_path / "more" / "checkpoints" / "ckpt_000003.pt")["side"] == 4
    with pytest.raises(ValueError, match=r"curriculum\.until_minutes must be empty when until"):
        make_config(tmp_path, **{"curriculum.sides": [3], "curriculum.until": [2],
                                 "curriculum.until_minutes": [1]})  # fmt: skip
    with pytest.raises(ValueError, match=r"curriculum\.until_minutes must be increasing"):
        make_config(tmp_path, **{"curriculum.sides": [3, 5], "curriculum.until_minutes": [2, 1],
                                 **MINUTES})  # fmt: skip


def test_a_change_of_board_restarts_the_resignation_calibration(tmp_path, make_config):
    """Winners' values on side 3 say nothing about side 4: the calibrator's window holds only
    the games of the new board once the curriculum moves on, and its threshold starts over."""
    options = {
        "curriculum.sides": [3],
        "curriculum.until": [2],
        **ITERATIONS,
        "selfplay.resign_false_rate": 0.05,
        "selfplay.resign_playout_fraction": 1.0,  # every game played out: every winner kept
        "selfplay.resign_threshold": -0.8,
    }
    train(make_config(tmp_path, iterations=4, **options))
    saved = [load_checkpoint(tmp_path / "checkpoints" / f"ckpt_00000{i}.pt") for i in (2, 4)]
    assert [payload["side"] for payload in saved] == [3, 4]
    games = [payload["counters"]["games"] for payload in saved]
    windows = [len(payload["resign"]["winner_mins"]) for payload in saved]
    assert windows[0] == games[0] > 0  # side 3: every game's winner so far
    assert windows[1] == games[1] - games[0] > 0  # side 4: only its own games
    assert saved[1]["resign"]["threshold"] == -0.8  # fewer than min_games: the first threshold


def test_a_run_that_ends_inside_its_curriculum_saves_and_plays_on_its_own_side(
    tmp_path, make_config, monkeypatch, capsys
):
    """Out of iterations (or minutes) on a smaller board: the last checkpoint and the closing
    match are on the run's side, and resuming goes back to the curriculum's stage."""
    from trapy_rl.train import loop

    sides = []
    real_evaluate = loop.evaluate

    def evaluate(agent, board, **kwargs):
        sides.append(board.side)
        return real_evaluate(agent, board, **kwargs)

    monkeypatch.setattr(loop, "evaluate", evaluate)
    options = {"curriculum.sides": [3], "curriculum.until": [5], **ITERATIONS}
    cfg = make_config(
        tmp_path / "run",
        iterations=2,
        **options,
        **{"eval.final_games": 2, "eval.final_opponents": ["random"]},
    )
    result = train(cfg)
    assert "ended on side 3, before its side-4 stage" in capsys.readouterr().out
    assert load_checkpoint(result.checkpoint)["side"] == 4 and sides == [4]
    more = make_config(tmp_path / "run", iterations=3, resume=str(tmp_path / "run"), **options)
    assert train(more).iterations == 3
    out = capsys.readouterr().out
    assert "resumed from" in out and "curriculum: side 3 from iteration 2" in out  # back to 3
    assert load_checkpoint(tmp_path / "run" / "checkpoints" / "latest.pt")["side"] == 4


def test_a_wall_clock_budget_stops_the_run_and_is_recorded(tmp_path, make_config):
    result = train(make_config(tmp_path, iterations=1000, minutes=1e-9))
    assert result.iterations == 1  # the budget is checked between iterations
    saved = load_checkpoint(result.checkpoint)["clock"]
    clock = saved["seconds"]
    assert clock > 0
    # One thread: the CPU time is there, and no more than the wall-clock allows.
    assert 0 < saved["cpu_seconds"] <= 1.5 * clock + 0.05
    from trapy_rl.eval.tournament import run_checkpoints

    (checkpoint,) = run_checkpoints(tmp_path)
    assert checkpoint.minutes == pytest.approx(clock / 60)


@pytest.mark.parametrize("clock", ["cpu", "wall"])
def test_the_budget_counts_the_configured_clock(tmp_path, make_config, monkeypatch, clock):
    """A machine slowed by other jobs: each iteration's wall clock jumps a minute while its
    CPU time stays a fraction of a second. A 30-second budget on the CPU clock (the default)
    lets all three iterations run; on the wall clock it ends the run after the first."""
    import time as real_time

    from trapy_rl.train import loop

    class Slowed:
        now = 0.0

        @classmethod
        def perf_counter(cls) -> float:
            cls.now += 30.0  # read four times an iteration: 90 s of wall clock each
            return cls.now

        process_time = staticmethod(real_time.process_time)

    monkeypatch.setattr(loop, "time", Slowed)
    result = train(make_config(tmp_path, iterations=3, minutes=0.5, clock=clock))
    assert result.iterations == (3 if clock == "cpu" else 1)
    saved = load_checkpoint(result.checkpoint)["clock"]
    assert saved["cpu_seconds"] < 30.0 < saved["seconds"]


def test_a_clock_the_run_cannot_read_is_refused(make_config, tmp_path):
    with pytest.raises(ValueError, match="clock must be cpu or wall, got 'sun'"):
        make_config(tmp_path, clock="sun")
    with pytest.raises(ValueError, match=r"set clock=wall with selfplay\.num_workers"):
        make_config(tmp_path, minutes=1.0, **{"selfplay.num_workers": 2})
    make_config(tmp_path, minutes=1.0, clock="wall", **{"selfplay.num_workers": 2})
    untimed = {"curriculum.sides": [], "curriculum.until_minutes": [], "selfplay.num_workers": 2}
    make_config(tmp_path, minutes=0.0, **untimed)  # no budget: no clock to read


def test_a_worker_whose_learner_is_gone_leaves_quietly():
    """A worker reads EOF when the learner process dies: it must return, not print a
    traceback (run in its own process: the worker ignores SIGINT and SIGTERM)."""
    import subprocess
    import sys

    code = """
import multiprocessing
from trapy_rl.mcts import SearchSettings
from trapy_rl.nn import NetConfig
from trapy_rl.train.settings import SelfPlaySettings
from trapy_rl.train.workers import _worker_main
learner, worker = multiprocessing.Pipe()
learner.close()  # the learner is gone
net = NetConfig(channels=8, blocks=1, policy_channels=8, value_hidden=8, swap_hidden=8)
_worker_main(worker, net, 4, SearchSettings(num_simulations=4), SelfPlaySettings(), [0], 1)
print("returned")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "returned", done.stderr
    assert "Traceback" not in done.stderr


def test_collapse_warnings_wait_until_new_games_can_have_ended(tmp_path, make_config, monkeypatch):
    """Just after self-play starts new games (the run's start, a change of side) only short
    games have ended: the collapse check waits `games_settle_iterations` iterations."""
    import trapy_rl.train.loop as loop
    from trapy_rl.train.report import Reporter

    monkeypatch.setattr(loop, "collapse_warnings", lambda metrics, board: {"game_length": "x"})
    warned = []
    monkeypatch.setattr(Reporter, "warn", lambda self, warnings, it: warned.append(it))
    options = {"curriculum.sides": [3], "curriculum.until": [4], **ITERATIONS}
    train(make_config(tmp_path, iterations=9, **options))
    # moves_per_iteration 10: side 3 (12 cells) settles after 2 iterations, side 4 (22) after 3;
    # side 3 plays iterations 1-4, side 4 from the 5th (its games begin at 4).
    assert warned == [3, 4, 8, 9]


def test_onnxruntime_runs_train_in_process_and_in_workers_across_a_change_of_board(
    tmp_path, make_config
):
    pytest.importorskip("onnxruntime")
    options = {"onnxruntime": True, "curriculum.sides": [3], "curriculum.until": [1], **ITERATIONS}
    for name, more in (("local", {}), ("workers", {"selfplay.num_workers": 2, "clock": "wall"})):
        run = train(make_config(tmp_path / name, iterations=2, **options, **more))
        saved = load_checkpoint(run.checkpoint)
        assert saved["side"] == 4 and saved["learner"]["step"] > 0


def test_a_run_on_a_solved_side_logs_its_scores_against_the_truth(tmp_path, make_config):
    cfg = make_config(tmp_path, iterations=2, **{"eval.every": 2, "eval.num_games": 2})
    cfg = cfg.replace({"eval.num_simulations": 4, "eval.opponents": ["random"]})
    evaluated = [row for row in train(cfg).history if "eval/win_rate_vs_random" in row]
    expected = {f"truth/{who}_{what}" for who in ("search", "net") for what in
                ("won_kept", "value_sign", "swaps")}  # fmt: skip
    assert expected <= set(evaluated[0])
    assert all(0.0 <= evaluated[0][tag] <= 1.0 for tag in expected)
    off = train(cfg.replace({"eval.truth": False, "run_dir": str(tmp_path / "off")}))
    assert not any(k.startswith("truth/") for row in off.history for k in row)


def test_a_bad_opponent_is_refused_before_the_run_even_without_matches(tmp_path, make_config):
    cfg = make_config(tmp_path / "run", **{"eval.every": 0, "eval.final_games": 0})
    with pytest.raises(ValueError, match=r"eval\.opponents: unknown agent spec 'bogus:1'"):
        train(cfg.replace({"eval.opponents": ["bogus:1"]}))
    assert not (tmp_path / "run").exists()  # nothing made


def test_a_cosine_schedule_spans_the_minutes_of_a_run_bounded_by_its_clock(
    tmp_path, make_config, monkeypatch
):
    """A run of ``minutes`` has no length in steps: its cosine decays over the clock. Each
    iteration here takes 90 s of wall clock, so a 6-minute run on the wall clock learns at 0,
    1/4, 1/2 and 3/4 of its cosine."""
    import time as real_time

    from trapy_rl.train import loop

    class Slowed:
        now = 0.0

        @classmethod
        def perf_counter(cls) -> float:
            cls.now += 30.0
            return cls.now

        process_time = staticmethod(real_time.process_time)

    monkeypatch.setattr(loop, "time", Slowed)
    overrides = {"optim.lr_schedule": "cosine", "optim.lr": 0.01, "replay.min_size": 16}
    result = train(make_config(tmp_path, iterations=10**6, minutes=6, clock="wall", **overrides))
    clock = np.cumsum([0.0] + [m["perf/iteration_s"] for m in result.history[:-1]])
    assert clock.tolist() == [0.0, 90.0, 180.0, 270.0]
    expected = 0.01 * 0.5 * (1 + np.cos(np.pi * clock / 360.0))
    trained = [i for i, m in enumerate(result.history) if "optim/lr" in m]
    assert trained[-3:] == [1, 2, 3]  # the replay holds a batch after the first iteration
    got = [result.history[i]["optim/lr"] for i in trained]
    assert got == pytest.approx(expected[trained], rel=1e-4)
