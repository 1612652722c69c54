"""Agents that play Trap Y: random, rollout MCTS (UCT), trained nets with or without search,
and more registered by spec kind.

>>> from trapy_rl.game import Board
>>> parse_agent("uct:50", board=Board(4)).name
'uct:50'
"""

from trapy_rl.agents.base import Agent, AgentSpec, reset_agent
from trapy_rl.agents.kinds import known_agent_kinds, parse_agent, register_agent_kind
from trapy_rl.agents.network import NetworkMCTSAgent, NetworkPolicyAgent
from trapy_rl.agents.random import RandomAgent
from trapy_rl.agents.rollout import RolloutEvaluator, RolloutMCTSAgent
from trapy_rl.agents.search import SearchAgent

__all__ = [
    "Agent",
    "AgentSpec",
    "NetworkMCTSAgent",
    "NetworkPolicyAgent",
    "RandomAgent",
    "RolloutEvaluator",
    "RolloutMCTSAgent",
    "SearchAgent",
    "known_agent_kinds",
    "parse_agent",
    "register_agent_kind",
    "reset_agent",
]
