"""`Solver`: the exact value of a Trap Y position for the player to move, and a winning move.

A position is a `GameState`, or stones, the player to move and whether the swap rule still
applies (`Solver.solve_position`). Trap Y never draws, so the value is a win or a loss; a win
comes with a move that keeps it won (the swap included, where it is legal: only as the second
move of the game), and every answer with its proof size, the positions the search expanded.

The search is compiled with numba (`trapy_rl.solve.search`: df-pn by default, alpha-beta on
request, on the position analysis of `trapy_rl.solve.analysis`, the virtual connections of
`trapy_rl.solve.hsearch` (or, on request and above 64 cells, `trapy_rl.solve.connections`) and
the table of `trapy_rl.solve.table`) and keeps its transposition table between calls, so
positions solved before, and their mirror images, cost nothing again.
`trapy_rl.solve.reference` is its slow plain-Python twin.

>>> from trapy_rl.game import Board, GameState
>>> board = Board(3)
>>> solver = Solver(board)
>>> solver.solve(GameState(board)).win  # with the swap, every first move loses
False
>>> answer = solver.solve(GameState.from_moves(["b2"], board))  # yellow to move, may swap
>>> answer.win, board.action_name(answer.move)  # b2 wins for its owner: take it over
(True, 'swap')
>>> solver.solve_position(GameState.from_moves(["b2"], board).stones, 2, swap=False).win
False
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, EMPTY, YELLOW, GameState, find_winner
from trapy_rl.solve import search
from trapy_rl.solve.analysis import GREEDY, HSEARCH, SWAP_LEGAL, SWAP_NONE, SWAP_RULE
from trapy_rl.solve.table import empty_table, lookup

__all__ = [
    "CONNECTIONS",
    "MAX_NODES",
    "METHODS",
    "Policy",
    "Solution",
    "SolveBudgetError",
    "Solver",
    "board_tables",
    "check_node_budget",
    "load_compiled",
    "swap_state",
]

METHODS = ("dfpn", "alphabeta")
CONNECTIONS = {"hsearch": HSEARCH, "greedy": GREEDY}
"""The virtual connections a search may use (`Solver`'s ``connections``)."""
CHUNK_NODES = 1 << 18
"""df-pn's slice between two checks for Ctrl-C (about a second of search)."""
MAX_NODES = 10**12
"""The largest node budget: weeks of search, and well inside the int64 the search counts in."""

Policy = Callable[[np.ndarray, int], np.ndarray]
"""``policy(stones [K] int8, to_move) -> [A] float``: higher scores are tried first at the root
(a net's policy logits, say); only the order of the scores matters."""


def check_node_budget(max_nodes: object, name: str = "max_nodes", given: str | None = None) -> int:
    """``max_nodes`` as an int from 1 to `MAX_NODES`: an integer, or a float with an integer
    value (``1e8``); ``name`` names it in the error, and ``given`` shows it (default: its
    value).

    Raises:
        ValueError: for anything else (inf, nan, 1e400, 2**63, 2.5, a bool), naming ``name``.
    """
    value = max_nodes
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or not (1 <= value <= MAX_NODES)
    ):
        shown = max_nodes if given is None else given
        raise ValueError(f"{name} must be a whole number from 1 to {MAX_NODES:,}, got {shown}")
    return int(value)


class SolveBudgetError(ValueError):
    """The search spent its node budget before proving the position; the message says how much."""


@dataclass(frozen=True)
class Solution:
    """The exact value of a position for the player to move.

    Attributes:
        win: True when the player to move wins with best play.
        move: a winning action (a cell index, or the board's swap action) when ``win``; None
            when the player to move loses or the game is already over.
        nodes: positions the search expanded for this answer (0 when the table knew it).
        seconds: wall-clock time of the search.
    """

    win: bool
    move: int | None
    nodes: int
    seconds: float


class Solver:
    """Solves positions of one board, keeping one transposition table for all of them.

    Args:
        board: the board (any side; the time grows fast with the empty cells: see the docs'
            solved openings for what sides 4 and 5 cost).
        method: ``"dfpn"`` (proof-number search; the default: all side-4 first moves in 38k
            positions where alpha-beta takes 245k, and side 5's a1 in 0.4M where alpha-beta
            has not finished at 3M) or ``"alphabeta"`` (depth-first win/loss search with a
            history table).
        table_bits: the table holds ``2**table_bits`` positions (about 38 bytes each).
        eps: df-pn's threshold growth, ``1 + eps`` (Pawlewicz and Lew); 0 is Nagai's df-pn.
        policy: orders the root's moves (see `Policy`); None tries them in cell order.
        deep: with greedy connections, also look for virtual wins one move ahead
            (`trapy_rl.solve.analysis`, step 7): slower per position, 3.5 times fewer
            positions on side 4 and 14 times fewer on side 5's a1 (5 times less time).
            H-search's semi wins and must-play region do this job where H-search runs.
        connections: ``"hsearch"`` (`trapy_rl.solve.hsearch`: H-search's virtual
            connections, virtual and semi wins, and the must-play region they prove, on
            boards of at most 64 cells, sides 2 to 6; larger boards use the greedy ones) or
            ``"greedy"`` (`trapy_rl.solve.connections`: two-cell carriers taken greedily, the
            solver that made the shipped tables).
        proof_sets: df-pn drops the siblings of a child proven lost that lie outside its
            proof set (`trapy_rl.solve.search`; H-search's connections, boards of at most
            64 cells).
    """

    def __init__(
        self,
        board: Board,
        *,
        method: str = "dfpn",
        table_bits: int = 20,
        eps: float = 0.25,
        policy: Policy | None = None,
        deep: bool = True,
        connections: str = "hsearch",
        proof_sets: bool = True,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        if connections not in CONNECTIONS:
            raise ValueError(
                f"connections must be one of {', '.join(CONNECTIONS)}, got {connections!r}"
            )
        if isinstance(table_bits, bool) or not isinstance(table_bits, int):
            raise ValueError(f"table_bits must be an integer from 4 to 30, got {table_bits!r}")
        if not 4 <= table_bits <= 30:
            raise ValueError(f"table_bits must be an integer from 4 to 30, got {table_bits}")
        if not eps >= 0.0:
            raise ValueError(f"eps must be >= 0, got {eps}")
        self.board = board
        self.method = method
        self.eps = float(eps)
        self.policy = policy
        self.deep = bool(deep)
        self.connections = connections
        self.proof_sets = bool(proof_sets)
        self.table_bits = table_bits
        self._tables = board_tables(board)
        self._table = empty_table(table_bits)  # see trapy_rl.solve.table
        self._history = np.zeros(board.num_actions, dtype=np.int64)

    def clear(self) -> None:
        """Forget every position solved so far (to time a solve from scratch)."""
        for array in (*self._table[:2], self._history):
            array.fill(0)
        self._table[2].fill(-1)
        self._table[3].fill(np.uint64(0xFFFFFFFFFFFFFFFF))

    # ------------------------------------------------------------------ entry points
    def solve(self, state: GameState, *, max_nodes: int | None = None) -> Solution:
        """The value of ``state`` for its player to move, the swap as the rules allow it.

        Raises:
            ValueError: the state is of another board.
            SolveBudgetError: not proven within ``max_nodes`` expanded positions.
        """
        if state.board is not self.board:
            raise ValueError(
                f"a side-{state.board.side} game given to a side-{self.board.side} solver"
            )
        if state.is_over:
            return Solution(win=state.winner == state.to_move, move=None, nodes=0, seconds=0.0)
        swap = swap_state(state.stones, state.to_move, state.move_count == 0 or state.swap_allowed)
        return self._solve(state.stones, state.to_move, swap, max_nodes)

    def solve_position(
        self,
        stones: np.ndarray,
        to_move: int,
        *,
        swap: bool = True,
        max_nodes: int | None = None,
    ) -> Solution:
        """The value of a position given by its stones, for ``to_move``.

        Args:
            stones: [K] int, 0 empty, 1 blue, 2 yellow.
            to_move: the player to move, 1 or 2.
            swap: whether the swap rule still applies: with one stone, the opponent's, the
                swap is then legal now (the second move); on an empty board it will be legal
                after the first move. False plays on without it. Ignored with two stones or more.
            max_nodes: the node budget (None: no limit).

        Raises:
            ValueError: naming the problem, for stones of the wrong shape or values, or a
                player other than 1 or 2.
            SolveBudgetError: not proven within ``max_nodes``.
        """
        stones = np.asarray(stones)
        if stones.shape != (self.board.num_cells,):
            raise ValueError(
                f"stones must have shape ({self.board.num_cells},) for the side-"
                f"{self.board.side} board, got {stones.shape}"
            )
        if not np.isin(stones, (EMPTY, BLUE, YELLOW)).all():
            raise ValueError("stones must hold 0 (empty), 1 (blue) or 2 (yellow)")
        if to_move not in (BLUE, YELLOW):
            raise ValueError(f"to_move must be 1 (blue) or 2 (yellow), got {to_move!r}")
        winner = find_winner(stones, self.board)
        if winner:
            return Solution(win=winner == to_move, move=None, nodes=0, seconds=0.0)
        return self._solve(stones, int(to_move), swap_state(stones, to_move, swap), max_nodes)

    def known(self, stones: np.ndarray, to_move: int, *, swap: bool = True) -> tuple[bool, int]:
        """(proven, work) of a position in the table: work is the expanded positions stored
        for it (0 when absent). Reads only; for choosing among lost moves."""
        stones8 = np.ascontiguousarray(stones, dtype=np.int8)
        mir, zob = self._tables[3], self._tables[4]
        swap_now = swap_state(stones8, to_move, swap)
        pn, dn, work, _, _ = lookup(stones8, int(to_move), swap_now, mir, zob, self._table)
        return (pn == 0 or dn == 0), int(work)

    def proof_set(self, stones: np.ndarray, to_move: int) -> list[int] | None:
        """The cells the table's proof of a position (the swap spent) rests on: its winner
        still wins with every other empty cell given to the loser. None when the position is
        not proven or its set is unknown (no proof sets on this board or from this path)."""
        stones8 = np.ascontiguousarray(stones, dtype=np.int8)
        mir, zob = self._tables[3], self._tables[4]
        pn, dn, _, _, cells = lookup(stones8, int(to_move), SWAP_NONE, mir, zob, self._table)
        if (pn != 0 and dn != 0) or cells == np.uint64(0xFFFFFFFFFFFFFFFF):
            return None
        return [x for x in range(self.board.num_cells) if (int(cells) >> x) & 1]

    # ------------------------------------------------------------------ the search
    def _solve(
        self, stones: np.ndarray, to_move: int, swap: int, max_nodes: int | None
    ) -> Solution:
        load_compiled()
        stones8 = np.array(stones, dtype=np.int8)
        budget = MAX_NODES if max_nodes is None else check_node_budget(max_nodes)
        stats = np.array([0, budget, 0, 0], dtype=np.int64)
        bias = self._root_bias(stones8, to_move)
        method = search.DFPN if self.method == "dfpn" else search.ALPHABETA
        started = time.perf_counter()
        while True:
            # df-pn runs in slices of CHUNK_NODES, resuming from the table, so that Ctrl-C
            # (seen only between compiled calls) stops a long search within a second or so;
            # alpha-beta would redo its unfinished path, so it runs in one call.
            chunked = method == search.DFPN and budget - stats[0] > CHUNK_NODES
            stats[1] = stats[0] + CHUNK_NODES if chunked else budget
            value = search.solve_root(
                stones8, to_move, swap, method, self.eps, self.deep,
                CONNECTIONS[self.connections], self.proof_sets, self._tables, bias,
                self._history, self._table, stats,
            )  # fmt: skip
            if value >= 0 or stats[3] or not chunked:
                break
        seconds = time.perf_counter() - started
        nodes = int(stats[0])
        if stats[3]:
            raise AssertionError("the search met a position with no move and no winner")
        if value < 0:
            raise SolveBudgetError(
                f"not proven within {budget:,} positions ({seconds:.1f} s); "
                "a larger budget or a smaller board is needed"
            )
        move = self._winning_move(stones8, to_move, swap) if value == 1 else None
        return Solution(win=value == 1, move=move, nodes=nodes, seconds=seconds)

    def _root_bias(self, stones: np.ndarray, to_move: int) -> np.ndarray:
        """[A] int64: the root children's initial disproof numbers, 1 + their policy rank."""
        bias = np.ones(self.board.num_actions, dtype=np.int64)
        if self.policy is not None:
            scores = np.asarray(self.policy(stones.copy(), to_move), dtype=float)
            if scores.shape != (self.board.num_actions,):
                raise ValueError(
                    f"the policy returned shape {scores.shape}, not ({self.board.num_actions},)"
                )
            order = np.argsort(-scores, kind="stable")
            bias[order] = 1 + np.arange(len(order))
        return bias

    def _winning_move(self, stones: np.ndarray, to_move: int, swap: int) -> int:
        """A winning action of a proven win: the table's, checked, else found by solving."""
        mir, zob = self._tables[3], self._tables[4]
        _, _, _, best, _ = lookup(stones, to_move, swap, mir, zob, self._table)
        candidates = [int(best)] if best >= 0 else []
        candidates += [a for a in self._actions(stones, swap) if a != best]
        for action in candidates:
            child, child_mover, child_swap = self._child(stones, to_move, swap, action)
            winner = find_winner(child, self.board)
            if winner == to_move:
                return action
            if winner == 0 and not self._solve(child, child_mover, child_swap, None).win:
                return action
        raise AssertionError("a won position without a winning move")

    def _actions(self, stones: np.ndarray, swap: int) -> list[int]:
        actions = np.flatnonzero(stones == EMPTY).tolist()
        return [*actions, self.board.swap_action] if swap == SWAP_LEGAL else actions

    def _child(
        self, stones: np.ndarray, to_move: int, swap: int, action: int
    ) -> tuple[np.ndarray, int, int]:
        """(stones, mover, swap state) after ``action``."""
        child = stones.copy()
        if action == self.board.swap_action:
            child[child != EMPTY] = to_move
            return child, 3 - to_move, SWAP_NONE
        child[action] = to_move
        return child, 3 - to_move, SWAP_LEGAL if swap == SWAP_RULE else SWAP_NONE


def swap_state(stones: np.ndarray, to_move: int, swap: bool) -> int:
    """The search's swap state of a position whose swap rule still applies (``swap``): legal
    now (`SWAP_LEGAL`: the only stone is the opponent's), offered after the first move
    (`SWAP_RULE`: an empty board), or `SWAP_NONE`."""
    if not swap:
        return SWAP_NONE
    occupied = np.flatnonzero(stones)
    if len(occupied) == 0:
        return SWAP_RULE
    if len(occupied) == 1 and stones[occupied[0]] == 3 - to_move:
        return SWAP_LEGAL
    return SWAP_NONE


@functools.cache
def load_compiled() -> None:
    """Load (or compile) the search's machine code once, before any clock starts."""
    board = Board(2)
    table = empty_table(4)
    stats = np.array([0, 1 << 20, 0, 0], dtype=np.int64)
    bias = np.ones(board.num_actions, dtype=np.int64)
    for method in (search.DFPN, search.ALPHABETA):
        for connections in CONNECTIONS.values():
            search.solve_root(
                np.zeros(board.num_cells, np.int8), BLUE, SWAP_NONE, method, 0.25, True,
                connections, True, board_tables(board), bias, bias.copy(), table, stats,
            )  # fmt: skip


@functools.cache
def board_tables(board: Board) -> tuple[np.ndarray, ...]:
    """The search's copies of the board's tables, and Zobrist codes, cached per board:
    neighbours [K, 6] int32, region masks [K] int32, win table [32] bool, mirrored actions
    [A] int32, Zobrist codes [4, K] uint64 (fixed: seeded by the side), and [32] int64 with
    bit m of entry a set when the masks a and m win together."""
    rng = np.random.default_rng(0x7A7A + board.side)
    zobrist = rng.integers(0, 2**64 - 1, size=(4, board.num_cells), dtype=np.uint64, endpoint=True)
    win = board.win_table.copy()
    masks = np.arange(len(win))
    wins_with = np.array([(win[a | masks].astype(np.int64) << masks).sum() for a in masks])
    return (
        board.neighbors.astype(np.int32),
        board.region_masks.astype(np.int32),
        win,
        board.mirror_actions.astype(np.int32),
        zobrist,
        wins_with,
    )
