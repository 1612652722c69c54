"""Gymnasium environments: one game (`TrapYEnv`) and N games on one `BatchGame` (`TrapYVectorEnv`).

Both are registered as ``trapy_rl/TrapY-v0`` when ``trapy_rl`` is imported::

    env = gymnasium.make("trapy_rl/TrapY-v0", side=5, opponent="random")
    envs = gymnasium.make_vec("trapy_rl/TrapY-v0", num_envs=64,
                              vectorization_mode="vector_entry_point")

Two more interfaces are imported by name, each with its extra: `trapy_rl.envs.pettingzoo` (a
PettingZoo AEC environment) and `trapy_rl.game.openspiel` (the OpenSpiel game ``trap_y``: the
rules in OpenSpiel's API, so it lives with the rules; its bots as agents and the agents as its
bots are `trapy_rl.agents.openspiel` and `trapy_rl.agents.openspiel_bot`).
"""

from trapy_rl.envs.spaces import BatchedLegalActions, LegalActions
from trapy_rl.envs.trap_y_env import Opponent, TrapYEnv
from trapy_rl.envs.vector_env import BatchOpponent, TrapYVectorEnv

__all__ = [
    "BatchOpponent",
    "BatchedLegalActions",
    "LegalActions",
    "Opponent",
    "TrapYEnv",
    "TrapYVectorEnv",
]
