"""TrapYEnv: Gymnasium's checker, the GameState reference move by move, errors, opponents."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from env_helpers import reference_planes
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import trapy_rl  # noqa: F401  (registers the env)
from trapy_rl.envs import TrapYEnv
from trapy_rl.game import BLUE, YELLOW, Board, GameState, IllegalMoveError
from trapy_rl.game.render import render_ascii

SIDES = (2, 3, 5, 10)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("opponent", [None, "random"])
def test_check_env(side, opponent):
    # Made through the registry so that the checker also renders in every declared mode.
    env = gym.make("trapy_rl/TrapY-v0", side=side, opponent=opponent)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("side", [2, 3, 5])
def test_self_play_matches_game_state(side):
    """Every step against a GameState played alongside: obs, reward, end, info."""
    env = TrapYEnv(side=side)
    board = Board(side)
    rng = np.random.default_rng(side)
    for episode in range(20):
        obs, info = env.reset(seed=episode)
        ref = GameState(board)
        while True:
            assert np.array_equal(obs, reference_planes(ref, ref.to_move))
            assert np.array_equal(info["action_mask"], ref.legal_mask())
            assert info["action_mask"].dtype == bool
            assert info["action_mask"].shape == (board.num_actions,)
            assert (info["to_move"], info["winner"], info["move_count"]) == (
                ref.to_move,
                ref.winner,
                ref.move_count,
            )
            assert info["last_action"] == (-1 if ref.last_action is None else ref.last_action)
            if ref.is_over:
                break
            action = int(rng.choice(ref.legal_actions()))
            mover = ref.to_move
            ref.play(action)
            obs, reward, terminated, truncated, info = env.step(action)
            assert reward == (1.0 if ref.winner == mover else 0.0)
            assert terminated == ref.is_over and truncated is False
        assert not info["action_mask"].any()


def test_known_first_moves():
    env = TrapYEnv(side=10)
    board = env.board
    obs, info = env.reset(seed=0)
    assert obs.shape == (9, 10, 19) and obs.dtype == np.float32
    assert info["to_move"] == BLUE and not info["action_mask"][board.swap_action]
    obs, _, _, _, info = env.step(board.parse_action("j1"))
    assert info["to_move"] == YELLOW and info["action_mask"][board.swap_action]
    assert obs[1, 0, 9] == 1.0 and obs[3].max() == 1.0  # blue's j1 from yellow's view; swap on
    obs, _, _, _, info = env.step(board.swap_action)
    # The swap turns j1 yellow and gives the move back to blue; yellow's stone is the opponent's.
    assert info["to_move"] == BLUE and info["last_action"] == board.swap_action
    assert obs[1, 0, 9] == 1.0 and obs[0].sum() == 0.0 and obs[3].max() == 0.0


def test_illegal_actions_name_the_move_and_change_nothing():
    env = TrapYEnv(side=3)
    board = env.board
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match=r"swap.*not allowed"):
        env.step(board.swap_action)
    env.step(board.parse_action("b1"))
    with pytest.raises(IllegalMoveError, match=r"b1.*occupied by blue"):
        env.step(board.parse_action("b1"))
    with pytest.raises(IllegalMoveError, match=r"out of range"):
        env.step(board.num_actions)
    with pytest.raises(IllegalMoveError, match=r"out of range"):
        env.step(-1)
    assert env.state.move_count == 1 and env.state.to_move == YELLOW


def test_step_before_reset_and_after_the_end_raise():
    env = TrapYEnv(side=2)
    with pytest.raises(ResetNeeded, match="reset"):
        env.step(0)
    env.reset(seed=0)
    board = env.board
    for name in ("a1", "a2", "b1", "b2", "c1"):  # blue wins with c1: see the opponent test
        _, reward, terminated, _, _ = env.step(board.parse_action(name))
    assert terminated and reward == 1.0
    with pytest.raises(ResetNeeded, match=r"over \(blue won after 5 moves\)"):
        env.step(0)
    env.reset()
    env.step(0)  # a new game


def scripted(moves):
    """A callable opponent that plays ``moves`` in order, checking what it is given."""
    moves = list(moves)

    def opponent(state, action_mask):
        assert isinstance(state, GameState)
        assert np.array_equal(action_mask, state.legal_mask())
        return moves.pop(0)

    return opponent


def test_opponent_mode_agent_wins():
    # Side 2: a1 (bottom-left, left), b1 (bottom-left, bottom-right), c1 (bottom-right, right),
    # a2 (top, left), b2 (right, top). Blue a1-b1-c1 touches four regions and wins.
    env = TrapYEnv(side=2, opponent=scripted(["a2", "b2"]), agent_player=1)
    board = env.board
    _, info = env.reset(seed=0)
    assert info["agent_player"] == BLUE and info["move_count"] == 0
    rewards = []
    for name in ("a1", "b1", "c1"):
        _, reward, terminated, _, info = env.step(board.parse_action(name))
        rewards.append(reward)
    assert rewards == [0.0, 0.0, 1.0] and terminated
    assert info["winner"] == BLUE
    assert GameState.from_moves(["a1", "a2", "b1", "b2", "c1"], board).winner == BLUE


def test_opponent_mode_agent_loses_to_the_reply():
    # The same game with the agent yellow: the opponent's (blue's) last reply wins.
    env = TrapYEnv(side=2, opponent=scripted(["a1", "b1", "c1"]), agent_player=2)
    board = env.board
    obs, info = env.reset(seed=0)
    assert info["agent_player"] == YELLOW and info["move_count"] == 1
    assert info["to_move"] == YELLOW and info["action_mask"][board.swap_action]
    assert obs[1, 0, 0] == 1.0  # the opponent's a1, seen from the agent's side
    rewards = []
    for name in ("a2", "b2"):
        _, reward, terminated, _, info = env.step(board.parse_action(name))
        rewards.append(reward)
    assert rewards == [0.0, -1.0] and terminated
    assert info["winner"] == BLUE and info["last_action"] == board.parse_action("c1")


def test_opponent_mode_observation_is_the_agents_view_at_the_end():
    env = TrapYEnv(side=2, opponent=scripted(["a2", "b2"]), agent_player=1)
    board = env.board
    env.reset(seed=0)
    for name in ("a1", "b1", "c1"):
        obs, _, _, _, info = env.step(board.parse_action(name))
    # Yellow would move next, yet plane 0 still holds the agent's (blue's) stones.
    assert info["to_move"] == YELLOW
    assert np.array_equal(obs, reference_planes(env.state, BLUE))


def test_illegal_opponent_move_is_reported():
    env = TrapYEnv(side=2, opponent=scripted(["a1"]), agent_player=1)
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match=r"opponent.*a1.*occupied"):
        env.step(env.board.parse_action("a1"))


def test_random_opponent_swaps_about_half_the_time():
    env = TrapYEnv(side=3, opponent="random", agent_player=1)
    swaps = 0
    for seed in range(200):
        env.reset(seed=seed)
        _, _, _, _, info = env.step(env.board.parse_action("b2"))
        swaps += info["last_action"] == env.board.swap_action
    assert 70 <= swaps <= 130  # 1/2 of 200, +- 4.2 standard deviations


def test_random_agent_player_and_reward_signs():
    env = TrapYEnv(side=3, opponent="random", agent_player="random")
    colours, outcomes = set(), set()
    for seed in range(40):
        _, info = env.reset(seed=seed)
        agent = info["agent_player"]
        colours.add(agent)
        assert info["move_count"] == (1 if agent == YELLOW else 0)
        terminated = False
        while not terminated:
            _, reward, terminated, _, info = env.step(env.action_space.sample())
            if not terminated:
                assert reward == 0.0 and info["to_move"] == agent
        assert reward == (1.0 if info["winner"] == agent else -1.0)
        outcomes.add(reward)
    assert colours == {BLUE, YELLOW} and outcomes == {1.0, -1.0}


@pytest.mark.parametrize("agent_player", [1, 2, "random"])
def test_same_seed_same_games(agent_player):
    def play(seed):
        env = TrapYEnv(side=5, opponent="random", agent_player=agent_player)
        env.action_space.seed(123)
        obs, info = env.reset(seed=seed)
        trace = [obs]
        for _ in range(3):  # three episodes: the generator carries over between resets
            terminated = False
            while not terminated:
                obs, reward, terminated, _, info = env.step(env.action_space.sample())
                trace += [obs, reward, info["last_action"]]
            obs, info = env.reset()
            trace.append(obs)
        return trace

    first, second, other = play(7), play(7), play(8)
    assert len(first) == len(second)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert len(first) != len(other) or not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_render_modes():
    env = TrapYEnv(side=3, render_mode="ansi")
    env.reset(seed=0)
    env.step(env.board.parse_action("b1"))
    text = env.render()
    state = env.state
    assert text == render_ascii(state.stones, state.board, last_action=state.last_action)
    env = TrapYEnv(side=3, render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8
    env = TrapYEnv(side=3)
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert env.render() is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"side": 1}, "side must be an integer from 2 to"),
        ({"opponent": "greedy"}, "opponent must be None"),
        ({"opponent": "random", "agent_player": 3}, "agent_player must be 1"),
        ({"agent_player": 2}, "needs an opponent"),
        ({"render_mode": "human"}, "render_mode must be"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrapYEnv(**kwargs)


def test_reset_rejects_unknown_options():
    with pytest.raises(ValueError, match="no options"):
        TrapYEnv(side=2).reset(options={"start": "a1"})


def test_numpy_integer_seeds():
    """A seed drawn from a numpy array seeds as the same Python int does; non-integers fail."""

    def draws(seed):
        env = TrapYEnv(side=3, opponent="random", agent_player="random")
        env.reset(seed=seed)
        return env.np_random_seed, env.np_random.integers(1 << 30, size=4).tolist()

    for seed in (np.int64(7), np.int32(7), np.uint64(7)):
        assert draws(seed) == draws(7)
    for seed in (7.0, True, "7", [7]):
        with pytest.raises(TypeError, match="seed must be an int or None, got"):
            TrapYEnv(side=2).reset(seed=seed)
