"""The agent kinds a spec can name, in one table, and `parse_agent`, which builds agents.

This module is the composition root of `trapy_rl.agents`: the kind modules define factories
``from_spec(spec, *, board, seed) -> Agent`` and know nothing of each other or of this table;
a new kind is one line of `BUILTIN_KINDS`. Other code may add kinds with `register_agent_kind`.

>>> from trapy_rl.game import Board
>>> parse_agent("uct:50,c_puct=2", board=Board(4)).name
'uct:50,c_puct=2'
>>> sorted(BUILTIN_KINDS)
['mcts', 'net', 'onnx', 'openspiel', 'random', 'solver', 'uct']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from trapy_rl.agents import network, openspiel, random, rollout, solver
from trapy_rl.agents.base import Agent, AgentSpec
from trapy_rl.game.board import Board

__all__ = ["BUILTIN_KINDS", "known_agent_kinds", "parse_agent", "register_agent_kind"]

AgentFactory = Callable[..., Agent]
"""``factory(spec: AgentSpec, *, board: Board, seed: int | None) -> Agent``."""


@dataclasses.dataclass(frozen=True)
class _Kind:
    factory: AgentFactory
    usage: str


_REGISTRY: dict[str, _Kind] = {}


def register_agent_kind(
    kind: str, factory: AgentFactory, *, usage: str, replace: bool = False
) -> None:
    """Make ``kind:...`` specs build agents with ``factory(spec, board=..., seed=...)``.

    Args:
        kind: the spec's first word, such as 'net' or 'mcts' (lower case, no ':' or ',').
        factory: builds the agent from the parsed `AgentSpec`; raises ValueError on bad args.
        usage: the spec's form, shown in error messages ('mcts:PATH:SIMULATIONS[,c_puct=X]').
        replace: allow registering a kind again (otherwise a ValueError).
    """
    if not kind or kind != kind.lower() or any(ch in kind for ch in ":,= "):
        raise ValueError(f"agent kind must be a lower-case word without ':,= ', got {kind!r}")
    if kind in _REGISTRY and not replace:
        raise ValueError(f"agent kind {kind!r} is already registered")
    _REGISTRY[kind] = _Kind(factory, usage)


def known_agent_kinds() -> dict[str, str]:
    """The registered kinds and their usage lines."""
    return {kind: entry.usage for kind, entry in sorted(_REGISTRY.items())}


def parse_agent(spec: str, *, board: Board, seed: int | None = None) -> Agent:
    """Build the agent a spec describes (see the module docstring for the grammar).

    Args:
        spec: such as 'random', 'uct:1000' or 'uct:200,c_puct=2'.
        board: the board the agent will play on.
        seed: seeds the agent's random generator (None: fresh entropy).

    Raises:
        ValueError: naming the spec, for an unknown kind (listing the known ones) or bad
            arguments.
    """
    parsed = AgentSpec.parse(spec)
    entry = _REGISTRY.get(parsed.kind)
    if entry is None:
        known = "; ".join(f"{kind} ({usage})" for kind, usage in known_agent_kinds().items())
        raise ValueError(f"unknown agent spec {spec!r}: known kinds are {known}")
    agent = entry.factory(parsed, board=board, seed=seed)
    return agent


# kind -> (factory, usage). The onnx and openspiel kinds import their libraries only when used.
BUILTIN_KINDS: dict[str, tuple[AgentFactory, str]] = {
    "random": (random.from_spec, random.USAGE),
    "uct": (rollout.from_spec, rollout.USAGE),
    "net": (network.net_from_spec, network.NET_USAGE),
    "mcts": (network.mcts_from_spec, network.MCTS_USAGE),
    "onnx": (network.onnx_from_spec, network.ONNX_USAGE),
    "openspiel": (openspiel.from_spec, openspiel.USAGE),
    "solver": (solver.from_spec, solver.USAGE),
}
for _kind, (_factory, _usage) in BUILTIN_KINDS.items():
    register_agent_kind(_kind, _factory, usage=_usage)
