"""Compiled (numba) kernels of the engine: random playouts, full-board winners, path replay.

A search of one game calls the engine on a handful of positions at a time, where numpy spends
more time entering its functions than computing: per simulation a random playout cost about a
millisecond and replaying a path a few tenths (cProfile of ``uct:1000`` and
``mcts:pretrained:200`` on side 10, `benchmarks.profile_search`). These kernels do the same
work in plain loops, compiled once (`trapy_rl.game.compiled` keeps the machine code between
runs). The numpy functions stay the reference they are tested against:

- `random_fills` and `fill_winners`: random fillings and their winners (as
  `trapy_rl.game.fill.random_fill` then `full_board_winner`): the same distribution, from
  other draws of the caller's generator;
- `full_board_winners`: the winner of full boards, equal to `full_board_winner` exactly;
- `play_paths`: `BatchGame.step` along a path of actions in each game, equal to stepping the
  batch one action at a time, field for field (labels and region masks included).

Shapes: m boards or games, K cells, D actions a path at most. ``neighbors`` is
`Board.neighbors` with the padding mapped to the sentinel K ([K + 1, 6] intp, row K all K),
``region_masks`` [K + 1] uint8 with a 0 appended, ``win_table`` `Board.win_table` ([32] bool):
`engine_tables` makes them.
"""

from __future__ import annotations

import functools

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.compiled import njit
from trapy_rl.game.state import BLUE, EMPTY, YELLOW

__all__ = [
    "engine_tables",
    "fill_winners",
    "full_board_winners",
    "play_paths",
    "random_fills",
]

_jit = njit(nogil=True)


@functools.cache
def engine_tables(board: Board) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(neighbors [K + 1, 6] intp, region_masks [K + 1] uint8, win_table [32] bool)``, the
    board's tables with the sentinel cell K appended (no neighbours, no region)."""
    k = board.num_cells
    neighbors = np.full((k + 1, 6), k, dtype=np.intp)
    neighbors[:k] = np.where(board.neighbors < 0, k, board.neighbors)
    region_masks = np.zeros(k + 1, dtype=np.uint8)
    region_masks[:k] = board.region_masks
    tables = (neighbors, region_masks, np.ascontiguousarray(board.win_table, dtype=np.bool_))
    for table in tables:
        table.flags.writeable = False
    return tables


# ---------------------------------------------------------------------- full boards
@_jit
def _find(parent: np.ndarray, cell: int) -> int:
    """The root of ``cell``'s set, halving the path on the way."""
    while parent[cell] != cell:
        parent[cell] = parent[parent[cell]]
        cell = parent[cell]
    return cell


@_jit
def _board_winner(
    stones: np.ndarray,
    parent: np.ndarray,
    regions: np.ndarray,
    neighbors: np.ndarray,
    region_masks: np.ndarray,
    win_table: np.ndarray,
) -> np.int8:
    """The winner of one board of K stones (1 or 2; blue first should both win, 0 if none).

    Union-find of the same-coloured neighbours, each root ORing its group's region masks.
    ``parent`` and ``regions`` are [K] scratch arrays.
    """
    k = stones.shape[0]
    for cell in range(k):
        parent[cell] = cell
        regions[cell] = region_masks[cell]
    for cell in range(k):
        colour = stones[cell]
        if colour == EMPTY:
            continue
        for j in range(6):
            other = neighbors[cell, j]
            if other < cell and stones[other] == colour:  # each pair once; the sentinel K > cell
                a, b = _find(parent, cell), _find(parent, other)
                if a != b:
                    parent[b] = a
                    regions[a] |= regions[b]
    blue_wins, yellow_wins = False, False
    for cell in range(k):
        if parent[cell] == cell and win_table[regions[cell]]:
            if stones[cell] == BLUE:
                blue_wins = True
            elif stones[cell] == YELLOW:
                yellow_wins = True
    if blue_wins:
        return np.int8(BLUE)
    if yellow_wins:
        return np.int8(YELLOW)
    return np.int8(EMPTY)


@_jit
def _full_board_winners(stones, neighbors, region_masks, win_table):
    m, k = stones.shape
    winners = np.empty(m, dtype=np.int8)
    parent = np.empty(k, dtype=np.intp)
    regions = np.empty(k, dtype=np.uint8)
    for i in range(m):
        winners[i] = _board_winner(stones[i], parent, regions, neighbors, region_masks, win_table)
    return winners


def full_board_winners(stones: np.ndarray, board: Board) -> np.ndarray:
    """The winner of each board ([m, K] int8 stones, full): [m] int8, as `full_board_winner`.

    No checks: the caller passes full boards of 1s and 2s (`full_board_winner` checks).
    """
    neighbors, region_masks, win_table = engine_tables(board)
    stones = np.ascontiguousarray(stones, dtype=np.int8)
    return _full_board_winners(stones, neighbors, region_masks, win_table)


# ---------------------------------------------------------------------- random playouts
@_jit
def _fill_row(stones, mover, uniforms, board, empty) -> None:
    """Write into ``board`` [K] the stones [K] with every empty cell filled at random.

    A uniformly random order of the empty cells (Fisher-Yates, its j-th swap drawn from
    ``uniforms[j]``, [K] float64 in [0, 1)); the mover takes the cells of even rank, as in a
    game played on in that order. ``empty`` is scratch.
    """
    num_empty = 0
    for cell in range(stones.shape[0]):
        board[cell] = stones[cell]
        if stones[cell] == EMPTY:
            empty[num_empty] = cell
            num_empty += 1
    for j in range(num_empty - 1, 0, -1):
        swap = min(int(uniforms[j] * (j + 1)), j)  # uniform on 0..j (to 2**-53)
        empty[j], empty[swap] = empty[swap], empty[j]
    for j in range(num_empty):
        board[empty[j]] = mover if j % 2 == 0 else 3 - mover


@_jit
def _random_fills(stones, to_move, uniforms):
    m, k = stones.shape
    boards = np.empty((m, k), dtype=np.int8)
    empty = np.empty(k, dtype=np.intp)
    for i in range(m):
        _fill_row(stones[i], to_move[i], uniforms[i], boards[i], empty)
    return boards


@_jit
def _fill_winners(stones, to_move, uniforms, neighbors, region_masks, win_table):
    m, k = stones.shape
    winners = np.empty(m, dtype=np.int8)
    board = np.empty(k, dtype=np.int8)
    empty = np.empty(k, dtype=np.intp)
    parent = np.empty(k, dtype=np.intp)
    regions = np.empty(k, dtype=np.uint8)
    for i in range(m):
        _fill_row(stones[i], to_move[i], uniforms[i], board, empty)
        winners[i] = _board_winner(board, parent, regions, neighbors, region_masks, win_table)
    return winners


def random_fills(stones: np.ndarray, to_move: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The boards `fill_winners` fills from the same state of ``rng``: [m, K] int8, full.

    The distribution of `trapy_rl.game.fill.random_fill`, from other draws of ``rng``.
    """
    stones = np.ascontiguousarray(stones, dtype=np.int8)
    uniforms = rng.random(stones.shape)  # [m, K] float64: one draw per cell, in one call
    return _random_fills(stones, np.ascontiguousarray(to_move, dtype=np.int8), uniforms)


def fill_winners(
    stones: np.ndarray, to_move: np.ndarray, rng: np.random.Generator, board: Board
) -> np.ndarray:
    """Fill each board at random, the player to move first, and return its winner.

    Equal to ``full_board_winners(random_fills(stones, to_move, rng), board)`` without
    keeping the boards; the distribution of ``full_board_winner(random_fill(...))``, each
    order of the empty cells equally likely (to 2**-53), from other draws of ``rng``: one
    uniform per cell, drawn by numpy in one call, the shuffle compiled.

    Args:
        stones: [m, K] int8, 0 empty, 1 blue, 2 yellow; not modified.
        to_move: [m] int, the player to move on each board (1 or 2).
        rng: the random generator to draw from.
        board: the geometry.

    Returns:
        [m] int8, the winner (1 or 2) of each filled board.
    """
    neighbors, region_masks, win_table = engine_tables(board)
    stones = np.ascontiguousarray(stones, dtype=np.int8)
    to_move = np.ascontiguousarray(to_move, dtype=np.int8)
    uniforms = rng.random(stones.shape)  # [m, K] float64: one draw per cell, in one call
    return _fill_winners(stones, to_move, uniforms, neighbors, region_masks, win_table)


# ---------------------------------------------------------------------- path replay
@_jit
def _play_paths(
    stones,
    labels,
    group_regions,
    legal,
    to_move,
    winner,
    move_count,
    history,
    paths,
    lengths,
    neighbors,
    region_masks,
    win_table,
):
    """`BatchGame.step`, one game and one action at a time (see `play_paths`)."""
    m = paths.shape[0]
    k = stones.shape[1] - 1  # the sentinel column K
    ended = np.zeros(m, dtype=np.bool_)
    for g in range(m):
        for d in range(lengths[g]):
            if winner[g] != 0:
                break
            action = paths[g, d]
            mover = to_move[g]
            if action == k:  # the swap: blue's stone turns yellow, keeping its group
                stones[g, history[g, 0]] = YELLOW
            else:
                stones[g, action] = mover
                legal[g, action] = False
                regions = region_masks[action]
                target = k
                for j in range(6):
                    cell = neighbors[action, j]
                    if stones[g, cell] == mover:
                        label = labels[g, cell]
                        regions |= group_regions[g, label]
                        target = min(target, label)
                if target == k:
                    target = action
                labels[g, action] = target
                group_regions[g, target] = regions
                # Join the neighbour groups under the smallest label, as `BatchGame._merge`.
                for j in range(6):
                    cell = neighbors[action, j]
                    if stones[g, cell] != mover:
                        continue
                    old = labels[g, cell]
                    if old != target:
                        for c in range(k):
                            if labels[g, c] == old:
                                labels[g, c] = target
                if win_table[regions]:
                    winner[g] = mover
                    legal[g, :] = False
                    ended[g] = True
            history[g, move_count[g]] = action
            move_count[g] += 1
            to_move[g] = 3 - mover
            legal[g, k] = move_count[g] == 1
    return ended


def play_paths(batch: BatchGame, paths: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Play the first ``lengths[g]`` actions of ``paths[g]`` in each game g of ``batch``.

    The same positions as ``batch.step`` called once per column, the games past their length
    (or over) standing still, but without checking the actions: they must be legal, as the
    paths of a search tree are. A game that ends stops there.

    Args:
        batch: m games; mutated.
        paths: [m, D] int, the actions.
        lengths: [m] int, how many of each row to play (0..D).

    Returns:
        [m] bool, the games that these actions ended (the mover won).
    """
    if paths.shape[0] != batch.num_games or lengths.shape != (batch.num_games,):
        raise ValueError(
            f"paths [{batch.num_games}, D] and lengths [{batch.num_games}] must match the "
            f"batch, got shapes {paths.shape} and {lengths.shape}"
        )
    neighbors, region_masks, win_table = engine_tables(batch.board)
    return _play_paths(
        batch._stones,
        batch._labels,
        batch._group_regions,
        batch._legal,
        batch.to_move,
        batch.winner,
        batch.move_count,
        batch.history,
        np.ascontiguousarray(paths, dtype=np.intp),
        np.ascontiguousarray(lengths, dtype=np.intp),
        neighbors,
        region_masks,
        win_table,
    )
