"""Start positions for rating games: a seeded set of short openings that are near balance.

Two agents without randomness (nets that search without noise) play one game per start and
colour, so a match between them says only as much as it has distinct starts. A rating match
therefore starts each pair of games (colours exchanged) from its own position of this set.

How the set is made (`generate_starts`): draw a number of stones from ``stones`` (2 to 4 by
default), place that many on uniformly random distinct cells, blue and yellow alternating (no
swap), and keep the position when a rollout-MCTS search from it (``search`` with
``num_rollouts`` random playouts per leaf, no noise) values it within ``max_value`` of a draw
for the player to move, i.e. a win chance within ``max_value / 2`` of 1/2. A balanced start
keeps both games of a pair informative: from a lopsided one each side wins with the favoured
colour whatever its strength.

The set of side 10 ships with the package (``trapy_rl/eval/data/starts_side10.txt``, made by
``python -m trapy_rl.eval.starts``); `load_starts` reads it, and for other sides generates one
with small settings.

Shapes: S starts, each a tuple of actions (cell indices) in the order played.
"""

from __future__ import annotations

import argparse
import functools
import importlib.resources
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trapy_rl.agents.rollout import RolloutEvaluator
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.mcts.search import MCTS
from trapy_rl.mcts.settings import SearchSettings

__all__ = [
    "STARTS_SEARCH",
    "generate_starts",
    "load_starts",
    "read_starts",
    "start_batch",
    "write_starts",
]

# The search that judges balance: rollouts are noisy, so several per leaf.
STARTS_SEARCH = SearchSettings(num_simulations=800)
_FILE = "starts_side{side}.txt"


def generate_starts(
    board: Board,
    *,
    count: int,
    seed: int,
    stones: Sequence[int] = (2, 3, 4),
    search: SearchSettings = STARTS_SEARCH,
    num_rollouts: int = 4,
    max_value: float = 0.1,
    batch_size: int = 64,
) -> list[tuple[int, ...]]:
    """``count`` distinct balanced start positions (see the module docstring).

    Args:
        board: the board.
        count: S, the starts wanted.
        seed: seeds the stones and the playouts: the same arguments give the same set.
        stones: the numbers of stones a start may have (each equally likely).
        search: the judging search (no noise).
        num_rollouts: random playouts per leaf of that search.
        max_value: keep a start whose root value for the player to move is within this of 0.
        batch_size: candidates searched together.

    Returns:
        S tuples of actions, in the order they are found.
    """
    if count < 1 or not 0 < max_value <= 1 or not stones or min(stones) < 1:
        raise ValueError(f"bad start settings: count={count}, max_value={max_value}, {stones=}")
    if max(stones) >= board.num_cells - 1:
        raise ValueError(f"{max(stones)} stones leave no game on side {board.side}")
    rng = np.random.default_rng(seed)
    evaluator = RolloutEvaluator(num_rollouts, int(rng.integers(2**63)))
    found: dict[tuple[int, ...], None] = {}
    while len(found) < count:
        sizes = rng.choice(stones, size=batch_size)
        candidates = [
            tuple(int(c) for c in rng.choice(board.num_cells, size=int(k), replace=False))
            for k in sizes
        ]
        batch = start_batch(board, candidates, len(candidates), pairs=False)
        playable = np.flatnonzero(batch.winner == 0)
        tree = MCTS(evaluator, board, num_games=len(candidates), settings=search)
        values = tree.search(batch, games=playable).root_values  # [n] for the player to move
        for game, value in zip(playable, values):
            if abs(float(value)) <= max_value and len(found) < count:
                found[candidates[game]] = None
    return list(found)


def start_batch(
    board: Board,
    starts: Sequence[Sequence[int]],
    num_games: int,
    *,
    offset: int = 0,
    pairs: bool = True,
) -> BatchGame:
    """``num_games`` games set up from ``starts``.

    Args:
        board: the board.
        starts: S starts (actions in order).
        num_games: B.
        offset: the first start used.
        pairs: games 2i and 2i + 1 start from ``starts[(offset + i) % S]`` (a rating match's
            colour-exchanged pairs); False: game i from ``starts[(offset + i) % S]``.

    Returns:
        The games, stones placed, nobody's agent consulted.
    """
    if not starts:
        raise ValueError("no start positions")
    batch = BatchGame(int(num_games), board)
    index = (np.arange(num_games) // (2 if pairs else 1) + offset) % len(starts)  # [B]
    longest = max(len(start) for start in starts)
    for ply in range(longest):
        actions = np.zeros(num_games, dtype=np.int64)
        moving = np.zeros(num_games, dtype=bool)
        for game, i in enumerate(index):
            if ply < len(starts[i]):
                actions[game], moving[game] = starts[i][ply], True
        legal = batch.legal_mask()[np.flatnonzero(moving), actions[moving]]
        if not legal.all():
            raise ValueError(f"a start position plays an illegal move at ply {ply}")
        batch.step(actions, games=np.flatnonzero(moving))
    return batch


def write_starts(
    path: str | Path, starts: Sequence[Sequence[int]], board: Board, note: str
) -> Path:
    """One start a line, as cell names separated by spaces, after ``# `` comment lines."""
    lines = [f"# {line}" for line in note.splitlines()]
    lines += [" ".join(board.action_name(a) for a in start) for start in starts]
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_starts(path: str | Path, board: Board) -> list[tuple[int, ...]]:
    """The starts of a file `write_starts` wrote (a ValueError names a bad line)."""
    starts = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            starts.append(tuple(board.parse_action(name) for name in line.split()))
        except ValueError as error:
            raise ValueError(f"{path}:{number}: {error}") from None
    return starts


@functools.cache
def load_starts(board: Board, *, count: int = 64, seed: int = 0) -> tuple[tuple[int, ...], ...]:
    """The shipped start set of ``board``'s side, or a small generated one for other sides.

    Remembered per board and settings: a generated set costs a search, and a tournament, a
    pool rating and a training run each ask for it.
    """
    shipped = importlib.resources.files("trapy_rl.eval") / "data" / _FILE.format(side=board.side)
    if shipped.is_file():
        with importlib.resources.as_file(shipped) as path:
            return tuple(read_starts(path, board))
    quick = SearchSettings(num_simulations=100)
    return tuple(generate_starts(board, count=count, seed=seed, search=quick, max_value=0.2))


def main(argv: Sequence[str] | None = None) -> None:
    """Write the start set of a side: ``python -m trapy_rl.eval.starts --side 10``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=10)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    board = Board(args.side)
    starts = generate_starts(board, count=args.count, seed=args.seed)
    out = args.out or Path(__file__).parent / "data" / _FILE.format(side=args.side)
    out.parent.mkdir(parents=True, exist_ok=True)
    note = (
        f"Start positions of rating games, side {args.side}: {args.count} positions of 2-4\n"
        "random stones (blue and yellow alternating, no swap) whose rollout-MCTS value\n"
        f"({STARTS_SEARCH.num_simulations} simulations, 4 playouts a leaf) is within 0.1 of a\n"
        "draw for the player to move. Made by: python -m trapy_rl.eval.starts "
        f"--side {args.side} --count {args.count} --seed {args.seed}"
    )
    print(write_starts(out, starts, board, note))


if __name__ == "__main__":
    main()
