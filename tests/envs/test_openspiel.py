"""The OpenSpiel game trap_y: OpenSpiel's own checks, random games against GameState, and the
bots both ways (the toolkit's agents as OpenSpiel bots, OpenSpiel's bots as agent specs)."""

import copy
import pickle

import numpy as np
import pytest
from env_helpers import reference_planes

pytest.importorskip("pyspiel")

import pyspiel
from open_spiel.python.algorithms import mcts
from open_spiel.python.observation import make_observation

from trapy_rl.agents import parse_agent
from trapy_rl.agents.openspiel import OpenSpielAgent
from trapy_rl.agents.openspiel_bot import AgentBot
from trapy_rl.eval.arena import play_match
from trapy_rl.eval.records import load_records, replay_record
from trapy_rl.game import BatchGame, Board, GameState
from trapy_rl.game.openspiel import TrapYGame, load_game
from trapy_rl.game.render import render_ascii

SIDES = (2, 3, 5, 10)


@pytest.mark.parametrize("side", SIDES)
def test_openspiel_random_sim_test(side):
    """OpenSpiel's C++ consistency checks: legal actions, strings, tensors, clones, serializing."""
    game = pyspiel.load_game(f"trap_y(side={side})")
    pyspiel.random_sim_test(game, num_sims=3 if side == 10 else 10, serialize=True, verbose=False)


def test_game_parameters_and_info():
    game = pyspiel.load_game("trap_y")
    assert str(game) == str(TrapYGame()) == str(load_game(10))
    assert str(game) == "trap_y(layout=chw,side=10,turn_plane=False)"
    assert game.num_distinct_actions() == 146 and game.max_game_length() == 146
    assert (game.num_players(), game.min_utility(), game.max_utility()) == (2, -1.0, 1.0)
    assert game.observation_tensor_shape() == [9, 10, 19]
    small = pyspiel.load_game("trap_y(side=3)")
    assert small.num_distinct_actions() == Board(3).num_actions == 13
    with pytest.raises(ValueError, match="side must be an integer from 2 to 40"):
        pyspiel.load_game("trap_y(side=41)")
    with pytest.raises(ValueError, match=r"layout must be one of \('chw', 'hwc'\), got 'whc'"):
        pyspiel.load_game("trap_y(layout=whc)")


def test_channels_last_and_turn_plane_hold_the_same_planes():
    """``layout=hwc`` is the [C, H, W] tensor's planes moved last; ``turn_plane`` adds one plane,
    the on-board cells while blue is to move; OpenSpiel's C++ checks pass on every variant."""
    side = 3
    games = {
        (layout, turn): load_game(side, layout=layout, turn_plane=turn)
        for layout in ("chw", "hwc")
        for turn in (False, True)
    }
    shape = [9, side, 2 * side - 1]
    assert games["hwc", False].observation_tensor_shape() == [side, 2 * side - 1, 9]
    assert games["chw", True].observation_tensor_shape() == [10, side, 2 * side - 1]
    assert games["hwc", True].observation_tensor_shape() == [side, 2 * side - 1, 10]
    for game in games.values():
        pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)
    rng = np.random.default_rng(0)
    for _ in range(5):
        ref = GameState(Board(side))
        while not ref.is_over:
            for player in (0, 1):
                planes = reference_planes(ref, player + 1)
                turn = planes[2] * (ref.to_move == 1)  # the on-board cells, or none
                with_turn = np.concatenate([planes, turn[None]])
                tensors = {}
                for (layout, turn_plane), game in games.items():
                    state = game.new_initial_state()
                    for action in ref.history:
                        state.apply_action(action)
                    tensors[layout, turn_plane] = np.asarray(state.observation_tensor(player))
                assert np.array_equal(tensors["chw", False], planes.ravel())
                assert np.array_equal(tensors["chw", True], with_turn.ravel())
                hwc = tensors["hwc", False].reshape(*shape[1:], 9)
                assert np.array_equal(np.moveaxis(hwc, -1, 0), planes)
                hwc_turn = tensors["hwc", True].reshape(*shape[1:], 10)
                assert np.array_equal(np.moveaxis(hwc_turn, -1, 0), with_turn)
            ref.play(int(rng.choice(ref.legal_actions())))


def test_the_turn_plane_tells_apart_positions_the_planes_do_not():
    """After ``a1 swap b2`` yellow is to move with a1 against b2, as blue after ``a1 b2``: the same
    nine planes for the player to move, a different turn plane."""
    board = Board(10)
    game = load_game(10, turn_plane=True)
    tensors = []
    for moves in (["a1", "swap", "b2"], ["a1", "b2"]):
        state = game.new_initial_state()
        for name in moves:
            state.apply_action(board.parse_action(name))
        tensors.append(np.asarray(state.observation_tensor()).reshape(10, *board.grid_shape))
    assert np.array_equal(tensors[0][:9], tensors[1][:9])
    assert not tensors[0][9].any() and tensors[1][9].sum() == board.num_cells


@pytest.mark.parametrize("side", [2, 3, 5])
def test_random_games_match_game_state(side):
    """Every position of random games (swaps included) against a GameState played alongside."""
    board = Board(side)
    game = load_game(side)
    observation = make_observation(game)
    rng = np.random.default_rng(side)
    swaps = 0
    for _ in range(20):
        state, ref = game.new_initial_state(), GameState(board)
        while True:
            assert state.is_terminal() == ref.is_over
            assert str(state) == render_ascii(
                ref.stones,
                board,
                last_action=ref.last_action,
                winning_cells=ref.winning_group() or None,
            )
            for player in (0, 1):
                planes = reference_planes(ref, player + 1)
                assert np.array_equal(state.observation_tensor(player), planes.ravel())
                observation.set_from(state, player)
                assert np.array_equal(observation.dict["observation"], planes)
            if ref.is_over:
                break
            assert state.current_player() == ref.to_move - 1
            assert state.legal_actions() == ref.legal_actions()
            assert state.legal_actions(2 - ref.to_move) == []  # the other player has none
            action = int(rng.choice(ref.legal_actions()))
            assert state.action_to_string(action) == board.action_name(action)
            swaps += action == board.swap_action
            ref.play(action)
            state.apply_action(action)
        assert state.current_player() == pyspiel.PlayerId.TERMINAL
        assert state.history() == ref.history
        assert state.returns() == ([1.0, -1.0] if ref.winner == 1 else [-1.0, 1.0])
    assert swaps > 0


def test_clones_serialization_and_pickles():
    game = load_game(4)
    state = game.new_initial_state()
    for name in ("b1", "swap", "c2", "a3"):
        state.apply_action(game.board.parse_action(name))
    clone = state.clone()
    clone.apply_action(0)
    assert state.history() == [1, 22, 9, 13] and clone.history() == [1, 22, 9, 13, 0]
    assert state.game_state.move_count == 4  # the clone's move did not reach the original
    text = pyspiel.serialize_game_and_state(game, state)
    new_game, new_state = pyspiel.deserialize_game_and_state(text)
    assert str(new_game) == str(game) and str(new_state) == str(state)
    assert new_state.history() == state.history()
    assert new_state.legal_actions() == state.legal_actions()
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    assert pickle.loads(pickle.dumps(game.get_type())) == game.get_type()
    unpickled = pickle.loads(pickle.dumps(state))
    assert str(unpickled) == str(state) and unpickled.history() == state.history()
    assert state.information_state_string(0) == "1, 22, 9, 13"


@pytest.mark.parametrize("copy_game", [lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy])
def test_a_pickled_or_copied_game_plays_whole_games(copy_game):
    """OpenSpiel's AlphaZero pickles the game into each actor: the copy must play, not only
    print (a copy is made without running __init__)."""
    game = copy_game(pyspiel.load_game("trap_y(side=4)"))
    assert game.board.side == 4
    rng = np.random.default_rng(0)
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(int(rng.choice(state.legal_actions())))
        replayed = GameState.from_moves(state.history(), Board(4))
        assert replayed.is_over and state.returns()[replayed.winner - 1] == 1.0


def play_checked(game, bots):
    """Play one game between OpenSpiel bots (blue's, yellow's), then replay it in GameState.

    Returns the final GameState; raises if a move is illegal in either engine or the two
    disagree on the winner.
    """
    state = game.new_initial_state()
    while not state.is_terminal():
        action = bots[state.current_player()].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    ref = GameState(game.board)
    for action in state.history():
        assert not ref.is_over
        ref.play(ref.check_move(action))  # IllegalMoveError for a move the rules forbid
    assert ref.is_over and state.returns()[ref.winner - 1] == 1.0
    return ref


def test_openspiel_mcts_against_our_uct():
    """OpenSpiel's MCTSBot against the uct agent as an AgentBot, each game checked by GameState."""
    game = load_game(4)
    for seed in range(4):
        evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
        theirs = mcts.MCTSBot(game, 2.0, 30, evaluator, random_state=np.random.RandomState(seed))
        ours = AgentBot("uct:30", game, seed=seed)
        play_checked(game, (theirs, ours) if seed % 2 == 0 else (ours, theirs))  # both colours


def test_agent_bot_arguments():
    game = load_game(3)
    bot = AgentBot("random", game, seed=0)
    assert bot.board is Board(3) and not bot.provides_policy()
    state = game.new_initial_state()
    state.apply_action(bot.step(state))
    assert bot.step(state) in state.legal_actions()  # yellow's move, the swap among them
    with pytest.raises(ValueError, match="unknown agent spec"):
        AgentBot("nobody", game)
    with pytest.raises(ValueError, match="expected a 'trap_y' game"):
        AgentBot("random", pyspiel.load_game("tic_tac_toe"))


def test_openspiel_agent_specs_play_matches(tmp_path):
    """``openspiel:...`` specs in the toolkit's arena; the recorded games replay in GameState."""
    board = Board(4)
    searcher = parse_agent("openspiel:mcts:20", board=board, seed=1)
    assert isinstance(searcher, OpenSpielAgent) and searcher.name == "openspiel:mcts:20"
    result = play_match(
        searcher, parse_agent("uct:20", board=board, seed=2), num_games=4, board=board, seed=3,
        record_path=tmp_path / "mcts.jsonl",
    )  # fmt: skip
    assert result.games == 4
    random_bot = parse_agent("openspiel:random", board=board, seed=4)
    play_match(random_bot, parse_agent("random", board=board, seed=5), num_games=4, board=board,
               seed=6, record_path=tmp_path / "random.jsonl")  # fmt: skip
    records = load_records(tmp_path / "mcts.jsonl") + load_records(tmp_path / "random.jsonl")
    assert len(records) == 8
    for record in records:
        assert replay_record(record, board).winner == record["winner"]
    # The same seeds play the same games.
    again = play_match(
        parse_agent("openspiel:mcts:20", board=board, seed=1),
        parse_agent("uct:20", board=board, seed=2), num_games=4, board=board, seed=3,
    )  # fmt: skip
    assert (again.wins, again.total_moves) == (result.wins, result.total_moves)


def test_openspiel_spec_options_and_errors():
    board = Board(3)
    tuned = parse_agent("openspiel:mcts:5,uct_c=1.5,num_rollouts=2,solve=false", board=board)
    search = tuned.bots[0]
    assert tuned.bots[1] is search
    assert (search.max_simulations, search.uct_c, search.solve) == (5, 1.5, False)
    assert search.evaluator.n_rollouts == 2
    assert parse_agent("openspiel:mcts", board=board).bots[0].max_simulations == 1000
    for spec, message in [
        ("openspiel", "expected openspiel:mcts"),
        ("openspiel:alphazero", "unknown OpenSpiel bot 'alphazero'"),
        ("openspiel:mcts:many", "simulations 'many' is not an integer"),
        ("openspiel:mcts:0", "must be >= 1"),
        ("openspiel:mcts:5,c_puct=1", "unknown option 'c_puct'"),
        ("openspiel:random:5", "no further arguments"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_agent(spec, board=board)
    with pytest.raises(ValueError, match="plays on the side-3 board"):
        parse_agent("openspiel:random", board=board).act(BatchGame(1, side=4), np.array([0]))
