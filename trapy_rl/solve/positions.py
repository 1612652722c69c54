"""Test sets of solved positions: random positions of a small board, each with its exact value
and every winning move, shipped as package data so that any agent can be scored against the
truth without a solver at hand (`trapy_rl.eval.truth`).

A position is drawn by uniformly random play from the empty board (the swap taken with
probability 1/2 where it is legal) until ``empty`` cells are left; finished games and repeats
are drawn again. Each position is solved whole: its value for the player to move, and for every
legal action whether it keeps the position won (``winning``, empty when the position is lost).

``trapy_rl/solve/data/positions_side{n}.json`` holds the positions (moves from the empty board,
by name) and how they were made: the command, seed, solver settings, nodes and seconds.
``python -m trapy_rl.solve.positions --side 5 --count 200 --empty 22 --seed 0`` writes one.

>>> test_set = load_test_set(4)
>>> position = test_set.positions[0]
>>> position.win == bool(position.winning)
True
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.game.state import GameState
from trapy_rl.provenance import machine
from trapy_rl.solve.solver import Solver

__all__ = [
    "FORMAT",
    "SolvedPosition",
    "TestSet",
    "draw_positions",
    "load_test_set",
    "make_test_set",
    "read_test_set",
    "solve_moves",
    "write_test_set",
]

FORMAT = 1
"""The version of the file layout."""


@dataclass(frozen=True)
class SolvedPosition:
    """One position and its exact answer.

    Attributes:
        moves: the actions from the empty board (cells, or the board's swap action).
        win: whether the player to move wins with best play.
        winning: every action that keeps the position won, ascending (empty when lost).
    """

    moves: tuple[int, ...]
    win: bool
    winning: tuple[int, ...]

    def state(self, board: Board) -> GameState:
        """The position as a game."""
        return GameState.from_moves(self.moves, board)


@dataclass(frozen=True)
class TestSet:
    """Solved positions of one board and where they came from (``provenance``: the command,
    seed, solver, nodes, seconds, machine, date); ``source`` names the file it was read from
    (``shipped positions_sideN.json`` for the shipped sets; empty for one not read)."""

    side: int
    positions: tuple[SolvedPosition, ...]
    provenance: dict
    source: str = ""

    __test__ = False  # a data class, not a test for pytest to collect

    @property
    def board(self) -> Board:
        return Board(self.side)

    def states(self) -> list[GameState]:
        board = self.board
        return [position.state(board) for position in self.positions]


def draw_positions(board: Board, count: int, empty: int, seed: int) -> list[GameState]:
    """``count`` distinct unfinished positions with ``empty`` empty cells, by random play.

    Raises:
        ValueError: for an ``empty`` the board cannot have with a move still to make.
    """
    if not 1 <= empty < board.num_cells:
        raise ValueError(f"empty must be from 1 to {board.num_cells - 1}, got {empty}")
    rng = np.random.default_rng(seed)
    found: dict[tuple, GameState] = {}
    for _ in range(100 * count):
        state = GameState(board)
        while not state.is_over and int((state.stones == 0).sum()) > empty:
            action = random_legal_actions(state.legal_mask()[None], rng)[0]
            state.play(int(action))
        key = (state.stones.tobytes(), state.to_move, state.swap_allowed)
        if not state.is_over and key not in found:
            found[key] = state
            if len(found) == count:
                return list(found.values())
    raise ValueError(f"fewer than {count} distinct positions with {empty} empty cells were drawn")


def solve_moves(solver: Solver, state: GameState) -> SolvedPosition:
    """The value of ``state`` and every action that keeps it won, each child solved."""
    winning = []
    for action in state.legal_actions():
        child = state.copy().play(action)
        if child.is_over:
            kept = child.winner == state.to_move
        else:
            kept = not solver.solve(child).win
        if kept:
            winning.append(action)
    moves = tuple(int(a) for a in state.history)
    return SolvedPosition(moves=moves, win=bool(winning), winning=tuple(winning))


def make_test_set(
    side: int, count: int, empty: int, seed: int, *, progress: bool = False
) -> TestSet:
    """Draw and solve a test set (`draw_positions`, `solve_moves`)."""
    board = Board(side)
    solver = Solver(board)
    states = draw_positions(board, count, empty, seed)
    started, cpu = time.perf_counter(), time.process_time()
    positions = []
    for i, state in enumerate(states):
        positions.append(solve_moves(solver, state))
        if progress:
            done = i + 1
            rate = done / max(time.perf_counter() - started, 1e-9)
            print(f"\r{done}/{count} positions, {rate:.2f}/s, eta {(count - done) / rate:.0f} s",
                  end="", file=sys.stderr, flush=True)  # fmt: skip
    if progress:
        print(file=sys.stderr)
    provenance = {
        "command": f"python -m trapy_rl.solve.positions --side {side} --count {count} "
        f"--empty {empty} --seed {seed}",
        "drawn": "uniformly random play from the empty board (swap with probability 1/2 where "
        f"legal) to {empty} empty cells; finished games and repeats drawn again",
        "solver": {
            "method": solver.method,
            "eps": solver.eps,
            "deep": solver.deep,
            "connections": solver.connections,
        },
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "machine": machine(),
        "date": datetime.date.today().isoformat(),
        "won": sum(p.win for p in positions),
    }
    return TestSet(side=side, positions=tuple(positions), provenance=provenance)


def write_test_set(test_set: TestSet, path: str | Path) -> None:
    """Write ``test_set`` as JSON, atomically; moves by name, so a reader can replay them."""
    board = test_set.board
    data = {
        "format": FORMAT,
        "side": test_set.side,
        "provenance": test_set.provenance,
        "positions": [
            {
                "moves": [board.action_name(a) for a in p.moves],
                "win": p.win,
                "winning": [board.action_name(a) for a in p.winning],
            }
            for p in test_set.positions
        ],
    }
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, path)


def read_test_set(path: str | Path) -> TestSet:
    """A test set written by `write_test_set`, each position replayed and checked.

    Raises:
        ValueError: naming the file, for another format, an illegal move or an answer that
            does not fit its position (a winning action that is not legal, ``win`` without one).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a solved-positions file of format {FORMAT}")
        board = Board(data["side"])
        positions = tuple(_position(board, item) for item in data["positions"])
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a JSON file ({error.msg}, line {error.lineno})") from None
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    provenance = data.get("provenance", {})
    return TestSet(side=board.side, positions=positions, provenance=provenance, source=str(path))


def _position(board: Board, item: dict) -> SolvedPosition:
    state = GameState.from_moves(item["moves"], board)
    winning = tuple(sorted(board.parse_action(name) for name in item["winning"]))
    legal = state.legal_mask()
    if state.is_over or not all(legal[a] for a in winning) or bool(item["win"]) != bool(winning):
        raise ValueError(f"position {' '.join(item['moves'])}: its answer does not fit it")
    return SolvedPosition(tuple(int(a) for a in state.history), bool(item["win"]), winning)


def load_test_set(side: int) -> TestSet:
    """The test set shipped for ``side``.

    Raises:
        ValueError: when none ships for that side.
    """
    source = resources.files("trapy_rl.solve").joinpath("data", f"positions_side{side}.json")
    if not source.is_file():
        raise ValueError(f"no solved positions are shipped for side {side}")
    with resources.as_file(source) as path:
        shipped = read_test_set(path)
    return replace(shipped, source=f"shipped {source.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw and solve a test set of positions.")
    parser.add_argument("--side", type=int, required=True)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--empty", type=int, required=True, help="empty cells a position has")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="default: the package's data")
    args = parser.parse_args(argv)
    test_set = make_test_set(args.side, args.count, args.empty, args.seed, progress=True)
    out = args.out or Path(__file__).with_name("data") / f"positions_side{args.side}.json"
    write_test_set(test_set, out)
    print(f"{out}: {len(test_set.positions)} positions, {test_set.provenance['won']} won, "
          f"{test_set.provenance['cpu_seconds']} CPU-seconds")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
