"""The legal-move action spaces: plain Discrete/MultiDiscrete, except that sample() is legal."""

import numpy as np
from gymnasium.spaces import Discrete, MultiDiscrete

from trapy_rl.envs import BatchedLegalActions, LegalActions, TrapYEnv, TrapYVectorEnv


def test_legal_actions_is_a_discrete_space():
    space = LegalActions(6, lambda: None)
    assert space == Discrete(6) and space.n == 6
    space.seed(0)
    assert {int(space.sample()) for _ in range(200)} == set(range(6))  # no position: all


def test_legal_actions_samples_only_legal_moves():
    legal = np.array([False, True, False, False, True, False])
    space = LegalActions(6, lambda: legal, seed=0)
    draws = [int(space.sample()) for _ in range(200)]
    assert set(draws) == {1, 4}
    # An explicit mask still wins over the position's.
    only_zero = np.array([1, 0, 0, 0, 0, 0], dtype=np.int8)
    assert space.sample(mask=only_zero) == 0
    finished = LegalActions(6, lambda: np.zeros(6, dtype=bool))
    assert finished.sample() == 0


def test_batched_legal_actions():
    legal = np.array([[True, False, True], [False, False, False], [False, True, False]])
    space = BatchedLegalActions(3, 3, lambda: legal, seed=1)
    assert space == MultiDiscrete([3, 3, 3])
    draws = np.stack([space.sample() for _ in range(100)])
    assert draws.dtype == space.dtype
    assert set(draws[:, 0].tolist()) == {0, 2}
    assert (draws[:, 1] == 0).all() and (draws[:, 2] == 1).all()
    unseeded = BatchedLegalActions(3, 2, lambda: None, seed=2)
    assert unseeded.sample() in unseeded


def test_env_action_spaces_follow_the_game():
    env = TrapYEnv(side=3)
    env.reset(seed=0)
    env.action_space.seed(0)
    terminated = False
    while not terminated:  # a whole game of env.action_space.sample(), never illegal
        _, _, terminated, _, _ = env.step(env.action_space.sample())
    envs = TrapYVectorEnv(4, side=3)
    envs.reset(seed=0)
    for _ in range(30):
        envs.step(envs.action_space.sample())
