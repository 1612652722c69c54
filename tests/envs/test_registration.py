"""The package's public API and the registration of trapy_rl/TrapY-v0."""

import copy
import importlib
import os
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

import trapy_rl
from trapy_rl.envs import TrapYEnv, TrapYVectorEnv


def test_public_api():
    assert isinstance(trapy_rl.__version__, str)
    for name in ("Board", "GameState", "BatchGame", "IllegalMoveError", "find_winner"):
        assert hasattr(trapy_rl, name)
    assert trapy_rl.Board(3).num_cells == 12


def test_registered_with_both_entry_points():
    spec = gym.spec("trapy_rl/TrapY-v0")
    assert spec.entry_point == "trapy_rl.envs.trap_y_env:TrapYEnv"
    assert spec.vector_entry_point == "trapy_rl.envs.vector_env:TrapYVectorEnv"


def test_import_twice_registers_once():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium warns when an id is registered again
        importlib.reload(trapy_rl)
    assert gym.spec("trapy_rl/TrapY-v0").id == "trapy_rl/TrapY-v0"


def test_make_and_make_vec():
    env = gym.make("trapy_rl/TrapY-v0", side=5, opponent="random", agent_player=2)
    assert isinstance(env.unwrapped, TrapYEnv) and env.unwrapped.board.side == 5
    obs, info = env.reset(seed=0)
    assert obs.shape == (9, 5, 9) and info["move_count"] == 1
    env.step(env.action_space.sample())
    env.close()

    envs = gym.make_vec("trapy_rl/TrapY-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(envs, TrapYVectorEnv) and envs.board.side == 10
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (4, 9, 10, 19)
    envs.close()

    # The vector entry point is also make_vec's default; the generic sync mode works too.
    assert isinstance(gym.make_vec("trapy_rl/TrapY-v0", num_envs=2, side=3), TrapYVectorEnv)
    sync = gym.make_vec("trapy_rl/TrapY-v0", num_envs=2, vectorization_mode="sync", side=3)
    assert isinstance(sync, SyncVectorEnv)
    _, infos = sync.reset(seed=0)
    assert infos["action_mask"].shape == (2, 13)
    sync.step(infos["action_mask"].argmax(axis=1))
    sync.close()


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_make_vec_async_steps_games_in_worker_processes(context):
    """Gymnasium's async mode builds each env in a worker process (spawn: a fresh interpreter
    that finds the env through the registry) and steps exactly as the sync mode does. Gymnasium
    1.4 has no checker for vector envs; check_env holds the single env (test_trap_y_env.py)."""
    kwargs = {"num_envs": 2, "side": 3, "opponent": "random"}
    envs = gym.make_vec(
        "trapy_rl/TrapY-v0",
        vectorization_mode="async",
        vector_kwargs={"context": context},
        **kwargs,
    )
    sync = gym.make_vec("trapy_rl/TrapY-v0", vectorization_mode="sync", **kwargs)
    assert isinstance(envs, AsyncVectorEnv)
    assert all(process.pid != os.getpid() and process.is_alive() for process in envs.processes)
    (obs, infos), (sync_obs, sync_infos) = envs.reset(seed=7), sync.reset(seed=7)
    rng = np.random.default_rng(0)
    finished = np.zeros(2, dtype=int)
    while finished.min() < 2:  # each env finishes two games, autoreset between them
        assert np.array_equal(obs, sync_obs)
        assert np.array_equal(infos["action_mask"], sync_infos["action_mask"])
        # A finished game's mask is empty: its next step is the autoreset, which takes no move.
        actions = np.array(
            [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in infos["action_mask"]]
        )
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        sync_obs, sync_rewards, sync_terminations, _, sync_infos = sync.step(actions)
        assert np.array_equal(rewards, sync_rewards)
        assert np.array_equal(terminations, sync_terminations) and not truncations.any()
        assert set(rewards[terminations]) <= {-1.0, 1.0}
        finished += terminations
    envs.close()
    sync.close()


@pytest.mark.parametrize("copy_env", [lambda e: pickle.loads(pickle.dumps(e)), copy.deepcopy])
def test_a_copied_env_plays_on(copy_env):
    """The single env survives pickle and deep copy mid-game: the copy plays on as the original
    would (same moves, same results), and the original stays where it was."""
    env = TrapYEnv(side=3, opponent="random")
    _, info = env.reset(seed=3)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    copied = copy_env(env)
    moves = info["move_count"]
    for game in (copied, env):  # the copy first: the original must not have moved meanwhile
        mask, results = info["action_mask"], []
        while True:
            obs, reward, terminated, _, step_info = game.step(int(np.flatnonzero(mask)[-1]))
            results.append((obs, reward, terminated, step_info["move_count"]))
            mask = step_info["action_mask"]
            if terminated:
                break
        if game is copied:
            copied_results = results
            assert env.state.move_count == moves
    assert len(results) == len(copied_results)
    for ours, theirs in zip(results, copied_results):
        assert np.array_equal(ours[0], theirs[0]) and ours[1:] == theirs[1:]
