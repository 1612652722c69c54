"""Does a net reply well after a swap? Games from a few first moves, after the swap or at the
decision, with the owner of the first stone and the player to move played by given agents.

    python scripts/after_swap.py NET                         # NET against itself after the swap
    python scripts/after_swap.py NET --mover OTHER           # OTHER replies to NET's stone
    python scripts/after_swap.py NET --decision              # at the decision instead

After ``c, swap`` (the opening map's position, `trapy_rl.analysis.estimators.swapped_openings`)
the first stone is yellow's and blue moves; at the decision (``--decision``) the stone is
blue's and yellow moves, the swap still allowed. In the mover's view the two positions differ
only in the ``swap_allowed`` plane, so a net that plays both alike is read the same in both;
one whose self-play rarely met the position after a swap may reply there far worse. Each agent
is ``mcts:NET:SIMULATIONS,noise=true,temperature_moves=12``, the opening map's; the score is the
wins of the first stone's owner (at the decision, of blue, who placed it, whether or not yellow
then swaps) with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse

import numpy as np

from trapy_rl.analysis.estimators import play_from
from trapy_rl.analysis.playout_jobs import play_batch, seeded_agents
from trapy_rl.errors import reported
from trapy_rl.eval import wilson_interval
from trapy_rl.game import BLUE, Board
from trapy_rl.game.batch import BatchGame


def owner_wins(
    owner: str, mover: str, board: Board, cells: np.ndarray, *, decision: bool, seed: int
) -> np.ndarray:
    """[K] int64: the first stone's owner's wins per cell (at the decision: blue's, who placed
    it), a game from each of ``cells`` (ascending), after the swap or at the decision."""
    if not decision:
        return play_batch(owner, mover, board.side, cells, seed)
    owner_agent, mover_agent = seeded_agents(owner, mover, board, seed)
    games = BatchGame(len(cells), board)
    games.step(cells)  # a lone blue stone, yellow to move and free to swap
    winners = play_from(games, mover_agent, owner_agent)
    return np.bincount(cells, weights=winners == BLUE, minlength=board.num_cells).astype(np.int64)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("owner", help="the net owning the first stone (a checkpoint or name)")
    parser.add_argument("--mover", help="the net replying (default: the owner's)")
    parser.add_argument("--cells", nargs="+", default=["b2", "d1", "c2", "p3"])
    parser.add_argument("--games", type=int, default=16, help="games a cell")
    parser.add_argument("--simulations", type=int, default=64)
    parser.add_argument("--side", type=int, default=10)
    parser.add_argument("--decision", action="store_true", help="at the decision, not after")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    with reported("after_swap"):
        board = Board(args.side)
        unknown = [name for name in args.cells if name not in board.names]
        if unknown:
            raise ValueError(f"no cell {unknown[0]!r} on the side-{args.side} board")
        spec = "mcts:{}:" + f"{args.simulations},noise=true,temperature_moves=12"
        owner, mover = spec.format(args.owner), spec.format(args.mover or args.owner)
        index = [board.names.index(name) for name in args.cells]
        cells = np.sort(np.repeat(index, args.games))
        wins = owner_wins(owner, mover, board, cells, decision=args.decision, seed=args.seed)
        where = "at the decision" if args.decision else "after the swap"
        print(f"owner {owner}\nmover {mover}\n{where}, {args.games} games a cell:")
        for name, cell in zip(args.cells, index):
            print(f"  {name}: {wins[cell]}/{args.games}")
        total, games = int(wins[index].sum()), len(cells)
        low, high = wilson_interval(total, games)
        print(f"the owner won {total}/{games} = {total / games:.2f} [{low:.2f}, {high:.2f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
