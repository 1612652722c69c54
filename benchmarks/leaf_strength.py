"""Strength at equal simulations: the leaf-parallel search against the sequential one.

    python -m benchmarks.leaf_strength --simulations 200 --games 400
    python -m benchmarks.leaf_strength --spec uct --simulations 1000 --leaves 16

Plays ``SPEC:SIMULATIONS,leaves=L`` against ``SPEC:SIMULATIONS,leaves=1`` (the sequential
search, whose trees equal the numpy search's) with the arena (`trapy_rl.eval.play_match`): the
side-10 start set, each start played twice with the colours exchanged, a different start per
pair. Prints the match and the leaf-parallel agent's win rate with its 95% Wilson interval;
within noise of 50% means batching the leaves costs no strength at equal simulations.
"""

from __future__ import annotations

import argparse
import time

from trapy_rl.agents.kinds import parse_agent
from trapy_rl.eval import play_match
from trapy_rl.eval.starts import load_starts
from trapy_rl.game import Board


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="mcts:pretrained", help="the agent, without simulations")
    parser.add_argument("--simulations", type=int, default=200, help="simulations a move")
    parser.add_argument("--leaves", type=int, default=16, help="leaves a net call, batched side")
    parser.add_argument("--games", type=int, default=400, help="games (pairs of colours)")
    parser.add_argument("--seed", type=int, default=0, help="the agents' and the starts' seed")
    args = parser.parse_args(argv)
    board = Board(10)
    batched = f"{args.spec}:{args.simulations},leaves={args.leaves}"
    sequential = f"{args.spec}:{args.simulations},leaves=1"
    start = time.perf_counter()
    result = play_match(
        parse_agent(batched, board=board, seed=args.seed),
        parse_agent(sequential, board=board, seed=args.seed + 1),
        num_games=args.games,
        board=board,
        seed=args.seed,
        starts=load_starts(board),
    )
    low, high = result.interval
    print(result)
    print(
        f"{batched} against {sequential}: {result.wins}/{result.games} = "
        f"{result.win_rate:.1%}, 95% interval [{low:.1%}, {high:.1%}], "
        f"{result.distinct_games} distinct games, {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
