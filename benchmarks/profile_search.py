"""Where one move of a one-game search spends its time: cProfile of an agent's move.

    python -m benchmarks.profile_search mcts:pretrained:200
    python -m benchmarks.profile_search uct:1000 --top 30

The position is side 10, ``--plies`` random moves into a game; the agent moves once to warm
up (loading, compiling), then once under the profiler. torch runs on one thread.

What it found at commit 5c9f303 (the numpy search, one leaf per net call; 2 shared cores):

``mcts:pretrained:200`` (0.68 s profiled, 3.4 ms a simulation):
    the net 42% (`NetEvaluator.evaluate_planes`, 0.29 s: conv2d 0.10 s, the folded forward's
    Python 0.05 s, planes and tensors the rest) at batch 1, one call per simulation;
    replaying paths with `BatchGame.step` 22% (641 calls, 0.15 s); the search's own numpy
    calls 25% (`_simulate` 0.08 s, `_backup` 0.05 s, `select_puct` 0.03 s, the engine's move
    checks 0.03 s). Every one of these is numpy entering a function for one row.
``uct:1000`` (4.7 s profiled, 4.7 ms a simulation):
    replaying paths 36% (`BatchGame.step`, 5,201 calls, 1.67 s, its checks 0.34 s of it); the
    search's own numpy calls 30% (`_simulate` 0.61 s, `_backup` 0.52 s, `select_puct`
    0.29 s); the random playout 21% (1.0 s: `winning_players` 0.49 s with scipy's labelling
    0.2 s, `random_fill` 0.29 s).

So the search and the engine, not the arithmetic, set the pace of one game: compiling the
tree's descent and backup, the replay and the playouts (`trapy_rl.mcts.kernels`,
`trapy_rl.game.kernels`) removes most of it, and evaluating many leaves per net call
(``SearchSettings.leaves``) spreads the net's fixed cost per call, which ONNX Runtime lowers
again (`benchmarks.onegame` measures the result).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from trapy_rl.agents.kinds import parse_agent
from trapy_rl.game import BatchGame, Board
from trapy_rl.game.sampling import random_legal_actions


def position(side: int = 10, plies: int = 10, seed: int = 0) -> BatchGame:
    """One game, ``plies`` uniformly random moves in (not over)."""
    rng = np.random.default_rng(seed)
    while True:
        batch = BatchGame(1, Board(side))
        for _ in range(plies):
            batch.step(random_legal_actions(batch.legal_mask(), rng))
        if not batch.is_over.any():
            return batch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", help="an agent spec, such as mcts:pretrained:200 or uct:1000")
    parser.add_argument("--plies", type=int, default=10, help="random moves into the game")
    parser.add_argument("--top", type=int, default=20, help="functions to list")
    args = parser.parse_args(argv)
    import torch  # only to set its threads; the uct agent does not need it

    torch.set_num_threads(1)
    batch = position(plies=args.plies)
    agent = parse_agent(args.spec, board=batch.board, seed=0)
    games = np.array([0])
    agent.act(batch, games)  # warm-up: loading, compiling, first allocations
    start = time.perf_counter()
    agent.act(batch, games)
    print(f"{args.spec}: {time.perf_counter() - start:.3f} s a move (unprofiled)")
    profile = cProfile.Profile()
    profile.enable()
    agent.act(batch, games)
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
