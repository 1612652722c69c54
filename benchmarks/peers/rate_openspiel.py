"""``trapy-eval`` with OpenSpiel's AlphaZero checkpoints as agents: the peer on the pool.

    python -m benchmarks.peers.rate_openspiel \\
        'agents=[openspiel-az:outputs/peers/az-s0:27:200]' mode=benchmark
    python -m benchmarks.peers.rate_openspiel mode=benchmark head_to_head=true \\
        'agents=[openspiel-az:outputs/peers/az-s0:27:200,mcts:benchmarks/long_runs/side10-tiny-s0/net_it000900.pt:200]'

Every ``trapy-eval`` setting works as it does there; this adds one agent kind,

    openspiel-az:RUN:STEP[:SIMULATIONS]

the checkpoint of learner step ``STEP`` in the run folder ``RUN`` of
``benchmarks/peers/openspiel_alphazero.py``, searching as OpenSpiel's own evaluators do
(`openspiel_alphazero.agent`; ``SIMULATIONS`` defaults to the run's 40). The match cache keys
these agents by their spec alone (it hashes the toolkit's checkpoint files only): a run folder's
checkpoints are never rewritten, as the training script wants a new, empty folder for each run.
Needs the ``alphazero`` extra.
"""

from __future__ import annotations

import logging
from pathlib import Path

from benchmarks.peers import openspiel_alphazero as peer
from trapy_rl.agents import register_agent_kind
from trapy_rl.agents.base import AgentSpec
from trapy_rl.agents.openspiel import OpenSpielAgent
from trapy_rl.eval.cli import main
from trapy_rl.game.board import Board

USAGE = "openspiel-az:RUN:STEP[:SIMULATIONS]"


def from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> OpenSpielAgent:
    """The agent of an ``openspiel-az`` spec (deterministic: ``seed`` is not used)."""
    spec.check_args(2, 3, USAGE)
    run = Path(spec.args[0])
    if not (run / "config.json").is_file():
        raise ValueError(f"agent spec {spec.text!r}: {run} is not a run folder (no config.json)")
    try:
        step = int(spec.args[1])
        simulations = int(spec.args[2]) if len(spec.args) > 2 else None
    except ValueError:
        raise ValueError(f"agent spec {spec.text!r}: STEP and SIMULATIONS are integers") from None
    if not (run / f"checkpoint-{step}").is_dir():
        raise ValueError(f"agent spec {spec.text!r}: {run} has no checkpoint of step {step}")
    if simulations is not None and simulations < 1:
        raise ValueError(f"agent spec {spec.text!r}: simulations must be >= 1")
    # Orbax logs every checkpoint read at INFO, the level of trapy-eval's own log.
    logging.getLogger("absl").setLevel(logging.WARNING)
    agent = peer.agent(run, step, simulations=simulations)
    if agent.board.side != board.side:
        raise ValueError(
            f"agent spec {spec.text!r}: the run plays side {agent.board.side}, not {board.side}"
        )
    agent.name = spec.text
    return agent


register_agent_kind("openspiel-az", from_spec, usage=USAGE)

if __name__ == "__main__":
    main()
