"""``trapy-solve``: the exact value of a small-board position and a winning move.

    trapy-solve --side 4                    # the empty board: the first player loses (swap)
    trapy-solve --side 4 b2                 # yellow to move, may swap
    trapy-solve --side 4 b2 swap c3         # moves as cell names, 'swap' for the swap
    trapy-solve --side 5 c3 --max-nodes 1e8
    trapy-solve --side 6 MOVES              # side 6: late positions, in well under a second

Prints one line: who is to move, whether they win with perfect play and a winning move, and
the proof's size. Bad input (an unknown cell, an illegal move, a side above `MAX_SIDE`, a node
budget that is no whole number from 1 to 10^12, a position not proven within it, an option it
does not know) is refused in one line.
"""

from __future__ import annotations

import sys

from trapy_rl.errors import ArgumentParser, reported
from trapy_rl.game.board import Board
from trapy_rl.game.state import PLAYER_NAMES, GameState
from trapy_rl.solve.solver import MAX_NODES, METHODS, Solver, check_node_budget

__all__ = ["MAX_SIDE", "describe", "main"]

MAX_SIDE = 6
"""The largest side accepted: H-search's carriers are one 64-bit word (side 6 has 51 cells).
Side-5 openings take minutes each; side 6's early positions need hours or more (about 300
microseconds a position), so there the node budget is what answers: "not proven within N"."""
DEFAULT_MAX_NODES = 50_000_000


def describe(state: GameState, solver: Solver, *, max_nodes: int | None) -> str:
    """The one-line answer for ``state`` (see the module docstring)."""
    board = state.board
    where = f"side {board.side}, " + (
        f"after {' '.join(state.move_names())}" if state.history else "empty board"
    )
    if state.is_over:
        return f"{where}: {PLAYER_NAMES[state.winner]} has won"
    answer = solver.solve(state, max_nodes=max_nodes)
    mover = PLAYER_NAMES[state.to_move]
    verdict = (
        f"{mover} to move wins with {board.action_name(answer.move)}"
        if answer.win
        else f"{mover} to move loses against perfect play"
    )
    size = f"{answer.nodes:,} position{'s' * (answer.nodes != 1)}"
    return f"{where}: {verdict} (proof: {size}, {answer.seconds:.2f} s)"


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(
        prog="trapy-solve",
        description="The exact value of a Trap Y position on a small board, and a winning move.",
    )
    parser.add_argument("moves", nargs="*", help="the moves from the empty board: a1, swap, ...")
    parser.add_argument("--side", type=int, default=4, help=f"board side, 2 to {MAX_SIDE}")
    parser.add_argument(
        "--max-nodes",
        default=str(DEFAULT_MAX_NODES),
        help=f"give up after this many positions, 1 to {MAX_NODES:.0e} "
        f"(default {DEFAULT_MAX_NODES:.0e})",
    )
    parser.add_argument("--method", choices=METHODS, default="dfpn")
    args = parser.parse_args(argv)
    with reported(parser.prog):
        if not 2 <= args.side <= MAX_SIDE:
            raise ValueError(
                f"side {args.side} is not solved here: trapy-solve takes sides 2 to {MAX_SIDE}"
            )
        max_nodes = check_node_budget(_number(args.max_nodes), "--max-nodes", given=args.max_nodes)
        board = Board(args.side)
        state = GameState(board)
        for number, move in enumerate(args.moves, start=1):
            try:
                state.play(move)
            except ValueError as error:
                raise ValueError(f"move {number}: {error}") from None
        bits = 20 if args.side <= 4 else 22  # 2**22 entries: ~100 MB
        solver = Solver(board, method=args.method, table_bits=bits)
        print(describe(state, solver, max_nodes=max_nodes))
    return 0


def _number(text: str) -> int | float | str:
    """``text`` as the number it writes (``50000000``, ``1e8``), or itself when it is none."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


if __name__ == "__main__":
    sys.exit(main())
