"""OpenSpiel's algorithms for two-player zero-sum perfect-information games, run on trap_y.

Side 2 (5 cells, 507 histories) is small enough to solve outright, so the solvers are held to a
plain negamax over `GameState` written here (yellow wins it: the swap takes over any winning
first stone). OpenSpiel's MCTS bot against the toolkit's agents is in test_openspiel.py, and
its AlphaZero in test_openspiel_alphazero.py.
"""

import numpy as np
import pytest

pytest.importorskip("pyspiel")

from open_spiel.python import policy, rl_environment
from open_spiel.python.algorithms import (
    evaluate_bots,
    exploitability,
    get_all_states,
    mcts,
    minimax,
    random_agent,
    tabular_qlearner,
)

from trapy_rl.agents.openspiel_bot import AgentBot
from trapy_rl.game import Board, GameState
from trapy_rl.game.openspiel import load_game


def negamax(state: GameState, memo: dict) -> int:
    """+1 if the player to move in ``state`` wins with best play, else -1 (no draws)."""
    if state.is_over:
        return -1  # the last mover won
    key = (state.stones.tobytes(), state.to_move, state.swap_allowed)
    if key not in memo:
        values = []
        for action in state.legal_actions():
            child = state.copy()
            child.play(action)
            values.append(-negamax(child, memo))
        memo[key] = max(values)
    return memo[key]


@pytest.fixture(scope="module")
def side2():
    """The side-2 game, its non-terminal states and their values for the player to move, both
    keyed by their history (``get_all_states``' keys)."""
    game = load_game(2)
    states = get_all_states.get_all_states(game, include_terminals=False)
    memo: dict = {}
    values = {
        key: negamax(GameState.from_moves(state.history(), Board(2)), memo)
        for key, state in states.items()
    }
    return game, states, values


def test_get_all_states_and_the_solution(side2):
    game, states, values = side2
    assert len(states) == 291
    assert len(get_all_states.get_all_states(game)) == 507  # with the finished games
    assert values[game.new_initial_state().history_str()] == -1  # blue, to move first, loses


def test_alpha_beta_and_expectiminimax_solve_every_position(side2):
    game, states, values = side2
    for key, state in states.items():
        player = state.current_player()
        value, action = minimax.alpha_beta_search(game, state=state.clone(), maximum_depth=10)
        assert value == values[key]
        child = state.child(action)  # the action it returns reaches that value
        assert child.is_terminal() or -values[child.history_str()] == value
        assert minimax.expectiminimax(state.clone(), 10, None, player)[0] == values[key]


def test_mcts_solver_proves_the_value():
    game = load_game(2)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = mcts.MCTSBot(
        game, 2.0, 3000, evaluator, solve=True, random_state=np.random.RandomState(0)
    )
    root = bot.mcts_search(game.new_initial_state())
    assert root.outcome == [-1.0, 1.0]  # solved: yellow wins


def test_a_solved_policy_is_a_nash_equilibrium(side2):
    """OpenSpiel's best responses find nothing to gain against best play, and much against
    uniform play."""
    game, states, values = side2
    solved = policy.TabularPolicy(game)
    for state in states.values():
        best = [
            a for a in state.legal_actions() if -values.get(state.child(a).history_str(), -1) == 1
        ]
        row = solved.policy_for_key(state.information_state_string())
        row[:] = 0.0
        row[best[0] if best else state.legal_actions()[0]] = 1.0
    assert exploitability.nash_conv(game, solved) == pytest.approx(0.0)
    assert exploitability.nash_conv(game, policy.UniformRandomPolicy(game)) > 1.0


def test_evaluate_bots_plays_agent_bots_and_openspiel_bots():
    game = load_game(4)
    rng = np.random.RandomState(0)
    for seed in range(4):
        searcher = mcts.MCTSBot(
            game,
            2.0,
            30,
            mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed)),
            random_state=np.random.RandomState(seed),
        )
        ours = AgentBot("uct:30", game, seed=seed)
        bots = [searcher, ours] if seed % 2 == 0 else [ours, searcher]
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rng)
        replayed = GameState.from_moves(state.history(), Board(4))
        assert replayed.is_over and returns[replayed.winner - 1] == 1.0 and sum(returns) == 0


@pytest.fixture
def seeded_numpy():
    """OpenSpiel's tabular learners draw from numpy's global generator: seeded, then restored."""
    saved = np.random.get_state()  # noqa: NPY002 (the generator OpenSpiel's learners use)
    np.random.seed(0)  # noqa: NPY002
    yield
    np.random.set_state(saved)  # noqa: NPY002


def test_tabular_q_learning_learns_to_win_as_yellow(seeded_numpy):
    """OpenSpiel's RL environment and tabular Q-learning in self-play: yellow learns to beat a
    random blue (random yellow wins about a third of the time)."""
    env = rl_environment.Environment(load_game(2), seed=0)
    num_actions = env.action_spec()["num_actions"]
    learners = [tabular_qlearner.QLearner(player_id=p, num_actions=num_actions) for p in (0, 1)]
    for _ in range(1500):
        time_step = env.reset()
        while not time_step.last():
            mover = learners[time_step.observations["current_player"]]
            time_step = env.step([mover.step(time_step).action])
        for learner in learners:
            learner.step(time_step)
    players = [random_agent.RandomAgent(player_id=0, num_actions=num_actions), learners[1]]
    wins = 0
    for _ in range(100):
        time_step = env.reset()
        while not time_step.last():
            mover = players[time_step.observations["current_player"]]
            time_step = env.step([mover.step(time_step, is_evaluation=True).action])
        wins += time_step.rewards[1] == 1.0
    assert wins >= 95
