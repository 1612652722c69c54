"""OpenSpiel's own AlphaZero trained on Trap Y for a CPU budget: the peer that the toolkit's
training is measured against at equal CPU time.

    python benchmarks/peers/openspiel_alphazero.py --cpu-minutes 90 --out outputs/peers/az-s0
    python benchmarks/peers/openspiel_alphazero.py --cpu-minutes 3 --out /tmp/az-smoke \\
        --replay-buffer-size 1024                               # a smoke run: steps come sooner

Needs the ``alphazero`` extra (``pip install 'trapy-rl[alphazero]'``). The script runs
OpenSpiel's ``alpha_zero.alpha_zero`` (open_spiel 2.0.2) as it is, the learner in this process
and one actor in a process it spawns, on ``trap_y(side=10,layout=hwc,turn_plane=true)``, and
stops it at the end of the first learner step that finds the CPU budget spent (so a run
overshoots by at most one step; the figures count the overshoot).

Settings: OpenSpiel's documented ones, the flags of its example
``open_spiel/python/examples/alpha_zero.py`` (uct_c 1.41, 40 simulations a move, batch 128,
replay buffer 2^13 positions each learned from 4 times, learning rate 1e-3, weight decay 1e-4,
Dirichlet noise epsilon 0.25 and alpha 1, temperature 1, a resnet), except:

===================  ==============  =========================================================
setting              OpenSpiel       here, and why
===================  ==============  =========================================================
actors, evaluators   2, 2            1, 0: one CPU. The learner shares the actor's core as the
                                     toolkit's learner shares its self-play's; strength is
                                     measured afterwards, by the toolkit's arena, against the
                                     pool its own nets meet.
nn_width, nn_depth   256, 2          16, 2: the toolkit's tiny net (16 channels, 2 residual
                                     blocks), the one it trains on side 10 on a CPU. 256
                                     filters cost about 250 times the convolutions a position.
temperature_drop     2               12: OpenSpiel's 2 is for tic-tac-toe's short games (its
                                     example says so); side-10 games last 60 to 146 moves, and
                                     the toolkit samples its first 12 moves.
checkpoint_freq      25              1: a checkpoint kept at every learner step, the points of
                                     the strength curve (a few dozen steps in a CPU-hour).
max_steps            26              0 (no limit): the CPU budget ends the run.
observation          [C, H, W]       ``layout=hwc``: OpenSpiel's Flax models convolve the
                                     tensor as [H, W, C]; ``turn_plane=true``: its value is
                                     player 0's return, which the planes of the player to move
                                     do not determine without the turn (trapy_rl.game.openspiel).
nn_api_version       linen (flag)    nnx (``Config``'s default): the same model.
inference            eager           jitted, numpy out. OpenSpiel's ``Model.inference`` runs op
                                     by op and returns JAX arrays, which its MCTS evaluator
                                     indexes once per legal action (one JAX dispatch each):
                                     about 43 ms of CPU a position on side 10, against about
                                     1 ms for the same function jitted. Same weights, same
                                     outputs (`jitted_inference`).
===================  ==============  =========================================================

What it writes into ``--out`` (an absolute path is made of it: orbax wants one): OpenSpiel's
own files (``config.json``, ``checkpoint-N`` orbax folders, ``learner.jsonl``, the processes'
logs), and ``budget.jsonl``, one line a learner step: ``step``, ``positions`` (the positions
self-play sent the learner so far), ``cpu_seconds`` (this process and the actor's, all their
threads: user + system), ``wall_seconds``, ``positions_per_cpu_minute``. The actor's CPU time is
read from ``/proc``, so the script runs on Linux. OpenSpiel seeds nothing, so runs differ.
Importing this module imports OpenSpiel's ``alpha_zero``, which sets the process's
multiprocessing start method to ``spawn`` for good (and ignores later attempts to change it).

A checkpoint plays in the toolkit's arena as `agent` (OpenSpiel's MCTS on the net, as its own
evaluators search):

    from trapy_rl.agents import parse_agent
    from trapy_rl.eval.arena import play_match
    from trapy_rl.game import Board

    peer = agent(Path("outputs/peers/az-s0"), 30, simulations=200)
    board = Board(10)
    play_match(peer, parse_agent("uct:1000", board=board), num_games=40, board=board)

and ``benchmarks/peers/rate_openspiel.py`` rates one on the pool with ``trapy-eval``'s settings.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

try:  # the alphazero extra
    import flax.nnx as nnx
    import jax
    import jax.numpy as jnp
    import pyspiel
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.algorithms.alpha_zero import alpha_zero, model_nnx
    from open_spiel.python.algorithms.alpha_zero import evaluator as evaluator_lib
    from open_spiel.python.utils import data_logger

    import trapy_rl.game.openspiel  # noqa: F401 (registers "trap_y")
except ModuleNotFoundError as error:
    sys.exit(f"{error.name} is not installed: pip install 'trapy-rl[alphazero]'")

from trapy_rl.agents.openspiel import OpenSpielAgent

SETTINGS: dict[str, Any] = {
    # OpenSpiel's example, open_spiel/python/examples/alpha_zero.py.
    "uct_c": 1.41,
    "max_simulations": 40,
    "train_batch_size": 2**7,
    "replay_buffer_size": 2**13,
    "replay_buffer_reuse": 4,
    "learning_rate": 1e-3,
    "weight_decay": 1e-4,
    "decouple_weight_decay": False,
    "policy_epsilon": 0.25,
    "policy_alpha": 1.0,
    "temperature": 1.0,
    "nn_model": "resnet",
    "evaluation_window": 50,
    "eval_levels": 7,
    "quiet": True,
    "verbose": False,
    # The deviations of the module docstring's table.
    "actors": 1,
    "evaluators": 0,
    "nn_width": 16,
    "nn_depth": 2,
    "temperature_drop": 12,
    "checkpoint_freq": 1,
    "max_steps": 0,
    "nn_api_version": "nnx",
}


def game_string(side: int) -> str:
    return f"trap_y(side={side},layout=hwc,turn_plane=true)"


@jax.jit
def _policy_and_value(train_state: Any, observation: jax.Array, legals_mask: jax.Array):
    """OpenSpiel's ``model_nnx.Model.inference``, line for line, as one compiled function."""
    model = nnx.merge(train_state.graphdef, train_state.params, train_state.batch_stats)
    model.eval()
    policy_logits, value = model(observation.astype(jnp.float32))
    policy_logits = jnp.where(legals_mask, policy_logits, jnp.finfo(jnp.float32).min)
    return value, nnx.softmax(policy_logits)


def jitted_inference(
    self: model_nnx.Model, observation: np.ndarray, legals_mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(value [] float32, policy [A] float32) of one observation, as numpy arrays."""
    value, policy = _policy_and_value(self._state, observation, legals_mask.astype(bool))
    return np.asarray(value).reshape(()), np.asarray(policy)


# At import: the actor process, which spawn starts by importing this file, plays with it too.
model_nnx.Model.inference = jitted_inference


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid``, all its threads (from /proc, Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Budget:
    """Counts CPU time and positions after each learner step; stops the run once spent.

    Args:
        out: the run folder, where ``budget.jsonl`` goes.
        cpu_seconds: the budget, this process and its actor together.
    """

    def __init__(self, out: Path, cpu_seconds: float) -> None:
        self.path = out / "budget.jsonl"
        self.cpu_seconds = cpu_seconds
        self.start_wall = time.time()
        self.actor_cpu: dict[int, float] = {}  # last reading of each actor, kept once it ends
        self.last: dict[str, Any] = {}

    def spent(self) -> float:
        for child in multiprocessing.active_children():
            try:
                self.actor_cpu[child.pid] = process_cpu_seconds(child.pid)
            except (FileNotFoundError, ProcessLookupError):
                pass  # it ended between the listing and the reading: its last reading stands
        # This process's CPU time from its start, imports included, as the actor's from /proc.
        return time.process_time() + sum(self.actor_cpu.values())

    def after_step(self, record: dict[str, Any]) -> None:
        """Called with each line OpenSpiel's learner logs; KeyboardInterrupt once spent, which
        ``alpha_zero`` catches to stop its actor and return (the step's checkpoint is saved)."""
        cpu = self.spent()
        self.last = {
            "step": record["step"],
            "positions": record["total_states"],
            "cpu_seconds": round(cpu, 1),
            "wall_seconds": round(time.time() - self.start_wall, 1),
            "positions_per_cpu_minute": round(record["total_states"] / (cpu / 60), 1),
        }
        with self.path.open("a") as file:
            file.write(json.dumps(self.last) + "\n")
        print("budget:", json.dumps(self.last), flush=True)
        if cpu >= self.cpu_seconds:
            raise KeyboardInterrupt


def train(out: Path, *, cpu_minutes: float, side: int = 10, **overrides: Any) -> dict[str, Any]:
    """Train OpenSpiel's AlphaZero on ``trap_y`` of ``side`` into ``out`` for ``cpu_minutes``.

    ``overrides`` replace entries of `SETTINGS`. Returns the last line of ``budget.jsonl``.
    """
    unknown = set(overrides) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}: expected some of {sorted(SETTINGS)}")
    out = out.resolve()  # orbax writes checkpoints to absolute paths only
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty: pick a new folder for the run")
    out.mkdir(parents=True, exist_ok=True)
    config = alpha_zero.Config(
        game=game_string(side),
        path=str(out),
        observation_shape=None,  # alpha_zero fills both in from the game
        output_size=None,
        **{**SETTINGS, **overrides},
    )
    budget = Budget(out, cpu_minutes * 60)
    write = data_logger.DataLoggerJsonLines.write

    def write_and_count(self: data_logger.DataLoggerJsonLines, data: dict[str, Any]) -> None:
        write(self, data)
        budget.after_step(data)

    # The learner runs in this process and logs one line a step: the budget's hook.
    data_logger.DataLoggerJsonLines.write = write_and_count
    try:
        alpha_zero.alpha_zero(config)
    finally:
        data_logger.DataLoggerJsonLines.write = write
    return budget.last


def agent(run: Path, step: int, *, simulations: int | None = None) -> OpenSpielAgent:
    """The checkpoint of learner ``step`` in ``run`` as one of the toolkit's agents.

    It searches as OpenSpiel's own evaluators do: OpenSpiel's MCTS with PUCT on the net's priors
    and values, ``simulations`` a move (default the run's ``max_simulations``), no noise, the
    most visited move; for the toolkit's arena (`trapy_rl.eval.arena.play_match`).
    """
    config = json.loads((run / "config.json").read_text())
    model = model_nnx.Model.build_model(
        config["nn_model"],
        config["observation_shape"],
        config["output_size"],
        config["nn_width"],
        config["nn_depth"],
        config["weight_decay"],
        config["learning_rate"],
        str(run.resolve()),
    )
    model.load_checkpoint(step)
    game = pyspiel.load_game(config["game"])
    search = mcts.MCTSBot(
        game,
        config["uct_c"],
        simulations or config["max_simulations"],
        evaluator_lib.AlphaZeroEvaluator(game, model),
        solve=False,
        child_selection_fn=mcts.SearchNode.puct_value,
    )
    name = f"openspiel-az:{run.name}:{step}:{simulations or config['max_simulations']}"
    return OpenSpielAgent(game, [search, search], name=name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="a new folder for the run")
    parser.add_argument("--cpu-minutes", type=float, required=True, help="the CPU budget")
    parser.add_argument("--side", type=int, default=10)
    parser.add_argument(
        "--replay-buffer-size",
        type=int,
        default=SETTINGS["replay_buffer_size"],
        help="positions kept; a quarter of it is self-played between learner steps",
    )
    args = parser.parse_args(argv)
    if args.cpu_minutes <= 0:
        parser.error("--cpu-minutes must be positive")
    try:
        last = train(
            args.out,
            cpu_minutes=args.cpu_minutes,
            side=args.side,
            replay_buffer_size=args.replay_buffer_size,
        )
    except ValueError as error:
        parser.error(str(error))
    print(
        f"{last.get('step', 0)} learner steps, {last.get('positions', 0)} positions in "
        f"{last.get('cpu_seconds', 0) / 60:.1f} CPU-minutes: "
        f"{last.get('positions_per_cpu_minute', 0)} positions per CPU-minute"
    )


if __name__ == "__main__":
    main()
