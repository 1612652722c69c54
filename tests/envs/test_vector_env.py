"""TrapYVectorEnv: the vector API by hand, N games equal N single envs, autoreset, seeding."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

import trapy_rl  # noqa: F401  (registers the env)
from trapy_rl.envs import TrapYEnv, TrapYVectorEnv
from trapy_rl.game import BLUE, YELLOW, IllegalMoveError
from trapy_rl.game.sampling import random_legal_actions

INFO_KEYS = ("action_mask", "to_move", "winner", "move_count", "last_action")


def test_vector_api():
    n = 5
    envs = TrapYVectorEnv(n, side=3)
    single = TrapYEnv(side=3)
    assert isinstance(envs, VectorEnv) and envs.num_envs == n
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    assert envs.observation_space == batch_space(single.observation_space, n)
    assert envs.action_space == batch_space(single.action_space, n)

    result = envs.reset(seed=0)
    assert isinstance(result, tuple) and len(result) == 2
    obs, infos = result
    assert obs.shape == (n, 9, 3, 5) and obs.dtype == np.float32
    assert obs in envs.observation_space
    assert infos["action_mask"].shape == (n, 13) and infos["action_mask"].dtype == bool
    for key in INFO_KEYS[1:]:
        assert infos[key].shape == (n,)

    actions = envs.action_space.sample()
    assert actions in envs.action_space
    result = envs.step(actions)
    assert isinstance(result, tuple) and len(result) == 5
    obs, rewards, terminated, truncated, infos = result
    assert obs in envs.observation_space
    assert rewards.shape == (n,) and rewards.dtype == np.float64
    assert terminated.shape == truncated.shape == (n,)
    assert terminated.dtype == truncated.dtype == bool and not truncated.any()
    assert (infos["move_count"] == 1).all() and (infos["to_move"] == YELLOW).all()
    envs.close()


def test_step_before_reset_and_bad_actions():
    envs = TrapYVectorEnv(3, side=2)
    with pytest.raises(ResetNeeded):
        envs.step(np.zeros(3, dtype=np.int64))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        envs.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="integer"):
        envs.step(np.zeros(3))


def test_illegal_action_names_the_game_and_move_and_changes_nothing():
    envs = TrapYVectorEnv(4, side=3)
    board = envs.board
    envs.reset(seed=0)
    envs.step(np.arange(4))
    with pytest.raises(IllegalMoveError, match=r"game 2: c1 is occupied"):
        envs.step(np.array([5, 6, 2, 7]))
    with pytest.raises(IllegalMoveError, match=r"game 0: action -1 is out of range"):
        envs.step(np.array([-1, 6, 7, 8]))
    envs.step(np.array([board.swap_action, 6, 7, 8]))
    with pytest.raises(IllegalMoveError, match=r"game 0: swap is not allowed"):
        envs.step(np.array([board.swap_action, 9, 10, 11]))
    assert (envs.batch.move_count == 2).all()


def run_alongside(envs, singles, rng, steps):
    """Step the vector env and the single envs with the same actions, comparing everything.

    With NEXT_STEP autoreset, a game that ended is restarted by the vector env on the next
    step; the single env is reset there instead.
    """
    n = envs.num_envs
    obs, infos = envs.reset(seed=0)
    single_results = [env.reset(seed=0) for env in singles]
    done = np.zeros(n, dtype=bool)
    episodes = 0
    for _ in range(steps):
        for i, (single_obs, single_info) in enumerate(single_results):
            assert np.array_equal(obs[i], single_obs)
            for key in single_info:
                assert infos[key][i].tolist() == np.asarray(single_info[key]).tolist(), key
        actions = random_legal_actions(infos["action_mask"], rng)
        actions[done] = rng.integers(-5, 500, done.sum())  # ignored by the autoresetting games
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for i, env in enumerate(singles):
            if done[i]:
                single_results[i] = env.reset()
                assert rewards[i] == 0.0 and not terminated[i]
            else:
                single_obs, reward, term, trunc, info = env.step(int(actions[i]))
                single_results[i] = (single_obs, info)
                assert (rewards[i], terminated[i], truncated[i]) == (reward, term, trunc)
        episodes += terminated.sum()
        done = terminated
    return episodes


@pytest.mark.parametrize("side", [2, 3, 5])
def test_self_play_equals_single_envs(side):
    n = 6
    envs = TrapYVectorEnv(n, side=side)
    singles = [TrapYEnv(side=side) for _ in range(n)]
    rng = np.random.default_rng(side)
    steps = {2: 30, 3: 60, 5: 120}[side]
    assert run_alongside(envs, singles, rng, steps) >= n  # several autoresets


def first_legal_single(state, action_mask):
    return int(np.flatnonzero(action_mask)[-1])


def first_legal_batch(batch, action_mask):
    # The highest legal index, so the swap is taken whenever it is legal.
    return action_mask.shape[1] - 1 - action_mask[:, ::-1].argmax(axis=1)


@pytest.mark.parametrize("agent_player", [1, 2])
def test_opponent_mode_equals_single_envs(agent_player):
    n, side = 4, 3
    envs = TrapYVectorEnv(n, side=side, opponent=first_legal_batch, agent_player=agent_player)
    singles = [
        TrapYEnv(side=side, opponent=first_legal_single, agent_player=agent_player)
        for _ in range(n)
    ]
    rng = np.random.default_rng(agent_player)
    assert run_alongside(envs, singles, rng, 40) >= n


def test_autoreset_next_step():
    n = 8
    envs = TrapYVectorEnv(n, side=2)
    rng = np.random.default_rng(0)
    obs, infos = envs.reset(seed=0)
    seen_end = False
    for _ in range(40):
        actions = random_legal_actions(infos["action_mask"], rng)
        obs, rewards, terminated, _, infos = envs.step(actions)
        # The final observation and info stay in place on the step that ends a game.
        assert (infos["winner"][terminated] != 0).all()
        assert (rewards[terminated] == 1.0).all() and (rewards[~terminated] == 0.0).all()
        assert not infos["action_mask"][terminated].any()
        if terminated.any():
            seen_end = True
            ended = terminated.copy()
            garbage = np.where(ended, 10**6, random_legal_actions(infos["action_mask"], rng))
            obs, rewards, terminated, _, infos = envs.step(garbage)
            assert (infos["move_count"][ended] == 0).all() and (infos["winner"][ended] == 0).all()
            assert (rewards[ended] == 0.0).all() and not terminated[ended].any()
            assert (obs[ended, :2] == 0).all()  # empty boards
    assert seen_end


def test_random_opponent_batched():
    n = 400
    envs = TrapYVectorEnv(n, side=3, opponent="random", agent_player=1)
    board = envs.board
    _, infos = envs.reset(seed=3)
    assert (infos["move_count"] == 0).all() and (infos["agent_player"] == BLUE).all()
    _, _, _, _, infos = envs.step(np.full(n, board.parse_action("b2")))
    swaps = (infos["last_action"] == board.swap_action).mean()
    assert 0.4 <= swaps <= 0.6  # 1/2, +- 4 standard deviations
    assert (infos["to_move"] == BLUE).all()
    # Play on: the reward is +1 where the agent won, -1 where the opponent did, else 0.
    finished = np.zeros(n, dtype=bool)
    while not finished.all():
        live = ~finished
        _, rewards, terminated, _, infos = envs.step(envs.action_space.sample())
        assert (rewards[live & ~terminated] == 0).all()
        won = infos["winner"] == infos["agent_player"]
        assert (rewards[live & terminated] == np.where(won, 1.0, -1.0)[live & terminated]).all()
        finished |= terminated
    envs.close()


def test_random_agent_player_colours():
    n = 64
    envs = TrapYVectorEnv(n, side=3, opponent="random", agent_player="random")
    _, infos = envs.reset(seed=0)
    agents = infos["agent_player"]
    assert set(agents.tolist()) == {BLUE, YELLOW}
    assert (infos["move_count"] == (agents == YELLOW)).all()
    assert (infos["to_move"] == agents).all()


@pytest.mark.parametrize("opponent", [None, "random"])
def test_same_seed_same_games(opponent):
    def play(seed):
        kwargs = {} if opponent is None else {"opponent": opponent, "agent_player": "random"}
        envs = TrapYVectorEnv(6, side=3, **kwargs)
        envs.action_space.seed(5)
        obs, _ = envs.reset(seed=seed)
        trace = [obs]
        for _ in range(40):
            obs, rewards, terminated, _, infos = envs.step(envs.action_space.sample())
            trace += [obs, rewards, terminated, infos["last_action"]]
        return trace

    first, second = play(11), play(11)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    if opponent is not None:
        other = play(12)
        assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_reset_mask_restarts_only_those_games():
    envs = TrapYVectorEnv(3, side=3)
    envs.reset(seed=0)
    envs.step(np.array([0, 1, 2]))
    _, infos = envs.reset(options={"reset_mask": np.array([False, True, False])})
    assert infos["move_count"].tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [1, 0, 1]})
    with pytest.raises(ValueError, match="unknown reset options"):
        envs.reset(options={"moves": []})


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_envs"):
        TrapYVectorEnv(0)
    with pytest.raises(ValueError, match="opponent must be None"):
        TrapYVectorEnv(2, opponent="greedy")


def test_make_vec_and_render():
    envs = gym.make_vec(
        "trapy_rl/TrapY-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        side=3,
        render_mode="ansi",
    )
    assert isinstance(envs.unwrapped, TrapYVectorEnv) and envs.num_envs == 3
    envs.reset(seed=0)
    envs.step(np.array([0, 1, 2]))
    frames = envs.render()
    assert len(frames) == 3 and all(isinstance(f, str) for f in frames)
    assert frames[0] != frames[1]
    envs = TrapYVectorEnv(2, side=2, render_mode="rgb_array")
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.shape[2] == 3 for f in frames)


def test_numpy_integer_seeds():
    """A seed drawn from a numpy array seeds as the same Python int does; non-integers fail."""

    def draws(seed):
        envs = TrapYVectorEnv(4, side=3, opponent="random", agent_player="random")
        _, infos = envs.reset(seed=seed)
        return envs.np_random_seed, infos["agent_player"].tolist(), infos["last_action"].tolist()

    for seed in (np.int64(11), np.int32(11), np.uint8(11)):
        assert draws(seed) == draws(11)
    for seed in (11.0, True, [11, 12]):
        with pytest.raises(TypeError, match=r"seed must be an int or None \(one generator"):
            TrapYVectorEnv(2, side=2).reset(seed=seed)
