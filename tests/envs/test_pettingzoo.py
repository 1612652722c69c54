"""The PettingZoo AEC env: PettingZoo's own checks, and random games move by move against GameState.

PettingZoo's ``max_cycles_test`` does not apply: it needs a ``parallel_env`` with a
``max_cycles`` argument, and a Trap Y game ends by itself within K + 1 moves, as in
PettingZoo's classic board games, which skip it too.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from env_helpers import reference_planes

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

from trapy_rl.envs.pettingzoo import env, raw_env
from trapy_rl.game import PLAYER_NAMES, Board, GameState, IllegalMoveError
from trapy_rl.game.render import render_ascii
from trapy_rl.game.sampling import random_legal_actions

SIDES = (2, 3, 5, 10)

# What api_test says of every env outside its own list of classic games with dict observations,
# and of agents named by colour rather than 'player_0'; anything else it warns of is a failure.
EXPECTED_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
    "We recommend agents to be named in the format",
)


@pytest.mark.parametrize("side", SIDES)
def test_pettingzoo_api_test(side):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(side=side), num_cycles=1000)
    unexpected = [
        str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_WARNINGS)
    ]
    assert not unexpected


@pytest.mark.parametrize("side", SIDES)
def test_pettingzoo_seed_test(side):
    seed_test(lambda: env(side=side), num_cycles=500)


def test_pettingzoo_render_test(capsys):
    def ansi_board(text):
        return isinstance(text, str) and text.splitlines()[-1].split() == list("abcde")

    render_test(
        lambda render_mode=None: env(side=3, render_mode=render_mode),
        custom_tests={"ansi": ansi_board},
    )
    assert "a b c d e" in capsys.readouterr().out  # "human" printed the board


@pytest.mark.parametrize("side", [2, 3, 5])
def test_random_games_match_game_state(side):
    """Every move of random games (swaps included) against a GameState played alongside."""
    board = Board(side)
    rng = np.random.default_rng(side)
    game = env(side=side)
    swaps = 0
    for episode in range(30):
        game.reset(seed=episode)
        ref = GameState(board)
        while not ref.is_over:
            mover = PLAYER_NAMES[ref.to_move]
            assert game.agent_selection == mover
            for agent, player in (("blue", 1), ("yellow", 2)):
                observation = game.observe(agent)
                assert observation["observation"].dtype == np.float32
                assert np.array_equal(observation["observation"], reference_planes(ref, player))
                expected_mask = ref.legal_mask() if agent == mover else np.zeros(board.num_actions)
                assert observation["action_mask"].dtype == np.int8
                assert np.array_equal(observation["action_mask"], expected_mask)
                assert game.rewards[agent] == 0.0 and not game.terminations[agent]
            action = int(random_legal_actions(ref.legal_mask()[None], rng)[0])
            swaps += action == board.swap_action
            ref.play(action)
            game.step(action)
        assert game.unwrapped.game_state.history == ref.history
        # Both agents see the end with their reward, the winner's +1 and the loser's -1.
        winner = PLAYER_NAMES[ref.winner]
        for _ in range(2):
            agent = game.agent_selection
            _, reward, termination, truncation, _ = game.last()
            assert reward == (1.0 if agent == winner else -1.0)
            assert termination and not truncation
            game.step(None)
        assert game.agents == []
    assert swaps > 0


def test_illegal_actions(caplog):
    # The unwrapped env refuses an illegal action, naming it, and plays nothing.
    game = raw_env(side=3)
    board = game.board
    game.reset()
    game.step(board.parse_action("b1"))
    with pytest.raises(IllegalMoveError, match=r"by yellow at move 2: b1.*occupied by blue"):
        game.step(board.parse_action("b1"))
    game.step(board.swap_action)
    with pytest.raises(IllegalMoveError, match=r"swap.*not allowed"):
        game.step(board.swap_action)
    assert game.game_state.move_names() == ["b1", "swap"] and game.agent_selection == "blue"
    # With PettingZoo's wrappers, as in its classic games, an illegal action loses the game.
    wrapped = env(side=3)
    wrapped.reset()
    wrapped.step(board.parse_action("b1"))
    wrapped.step(board.parse_action("b1"))
    assert "Illegal move" in caplog.text
    assert all(wrapped.terminations.values())
    assert wrapped.rewards == {"blue": 0, "yellow": -1}


def test_render_modes_and_arguments():
    game = raw_env(side=2, render_mode="ansi")
    game.reset()
    for name in ("a1", "a2", "b1", "b2", "c1"):  # blue a1-b1-c1 touches four regions
        game.step(game.board.parse_action(name))
    stones = game.game_state.stones
    assert game.render() == render_ascii(
        stones, game.board, last_action="c1", winning_cells=["a1", "b1", "c1"]
    )
    image = raw_env(side=2, render_mode="rgb_array")
    image.reset()
    picture = image.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    with pytest.raises(ValueError, match="render_mode must be"):
        raw_env(render_mode="window")
    with pytest.raises(ValueError, match="side must be an integer from 2 to"):
        raw_env(side=1)


def test_pickles_by_its_arguments():
    game = pickle.loads(pickle.dumps(raw_env(side=4, render_mode="ansi")))
    assert game.board is Board(4) and game.render_mode == "ansi"
    observation = game.observation_space("blue")["observation"]
    assert observation.shape == (9, 4, 7) and observation.dtype == np.float32
    assert game.action_space("yellow").n == Board(4).num_actions


def play_out(game, rng) -> list[int]:
    """Play ``game`` (an AEC env) to its end with legal random moves; return its history."""
    for agent in game.agent_iter():
        _, _, termination, _, _ = game.last()
        if termination:
            game.step(None)
            continue
        action = game.action_space(agent).sample()  # the legal moves of this copy's position
        game.step(action)
    return game.unwrapped.game_state.history


@pytest.mark.parametrize("copy_env", [lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy])
@pytest.mark.parametrize("make", [raw_env, env])
def test_a_copy_plays_on_from_the_same_position(copy_env, make):
    """A copy made mid-game, with PettingZoo's wrappers or without, carries the position on: it
    plays to the end legally (its action spaces ask it, not the original, for the legal moves),
    and the original does not move."""
    board = Board(4)
    rng = np.random.default_rng(0)
    for moves in (["b1"], ["b1", "swap"], ["b1", "c2", "a1", "d3"]):
        game = make(side=4)
        game.reset(seed=0)
        for name in moves:
            game.step(board.parse_action(name))
        copied = copy_env(game)
        assert copied.agent_selection == game.agent_selection
        assert np.array_equal(
            copied.observe("blue")["action_mask"], game.observe("blue")["action_mask"]
        )
        history = play_out(copied, rng)
        assert history[: len(moves)] == [board.parse_action(name) for name in moves]
        replayed = GameState.from_moves(history, board)
        assert replayed.is_over and copied.agents == []
        assert game.unwrapped.game_state.move_names() == moves  # the original is where it was
        assert play_out(game, rng)[: len(moves)] == history[: len(moves)]
    # A copy of a finished game is finished; a copy before reset needs a reset, as the original.
    assert copy_env(game).unwrapped.game_state.is_over
    fresh = copy_env(make(side=4))
    fresh.reset(seed=1)
    assert len(play_out(fresh, rng)) > 0


def test_aec_to_parallel_is_refused_for_a_turn_based_game():
    """PettingZoo's aec_to_parallel steps all agents at once, which the metadata says is unsafe
    here (is_parallelizable False); it refuses with PettingZoo's message."""
    assert raw_env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="set the `is_parallelizable` key"):
        aec_to_parallel(env(side=3))


@pytest.mark.parametrize("side", SIDES)
def test_turn_based_aec_to_parallel(side):
    """PettingZoo's conversion for turn-based games passes its parallel API test, and its games
    are the engine's: the mover's action is played, the other agent's ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(turn_based_aec_to_parallel(env(side=side)), num_cycles=1000)
    board = Board(side)
    parallel = turn_based_aec_to_parallel(env(side=side))
    rng = np.random.default_rng(side)
    for episode in range(3):
        observations, _ = parallel.reset(seed=episode)
        ref = GameState(board)
        while parallel.agents:
            mover = PLAYER_NAMES[ref.to_move]
            mask = observations[mover]["action_mask"]
            action = int(random_legal_actions(mask[None].astype(bool), rng)[0])
            actions = {agent: action if agent == mover else 0 for agent in parallel.agents}
            observations, rewards, terminations, _, infos = parallel.step(actions)
            ref.play(action)
            if ref.is_over:
                winner = PLAYER_NAMES[ref.winner]
                assert all(terminations.values())
                assert rewards == {agent: 1.0 if agent == winner else -1.0 for agent in rewards}
                assert set(rewards) == {"blue", "yellow"}
            else:
                assert infos["blue"]["active_agent"] == PLAYER_NAMES[ref.to_move]
        assert parallel.unwrapped.game_state.history == ref.history
