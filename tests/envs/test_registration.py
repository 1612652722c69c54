"""The package's public API and the registration of trapy_rl/TrapY-v0."""

import importlib
import warnings

import gymnasium as gym
from gymnasium.vector import SyncVectorEnv

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
