"""Random fillings of the board and the winner of a full board, for many boards at once.

In a Y-type game a random playout is a random filling of the board: once a player has a winning
group, further stones change nothing, and on a full board exactly one player has one
(docs/rules.md).
So instead of stepping a playout move by move, `random_fill` places all the remaining stones at
once (a uniformly random order of the remaining moves, the player to move first) and
`full_board_winner` finds the winner of the result with one connected-component labelling.
`playout_wins` puts the two together: R random playouts of each of n positions of a
`BatchGame`, the swap included, and how often the player to move wins them; with
``compiled=True`` the fills and winners come from `trapy_rl.game.kernels` (5x less CPU time
for the 16 positions of a step of one game's search; the same distribution, other draws).

Shapes: n boards, K cells, R playouts per position, H x W the grid embedding of `Board`.

>>> board = Board(3)
>>> rng = np.random.default_rng(0)
>>> full = random_fill(np.zeros((4, board.num_cells), np.int8), np.ones(4, np.int8), rng)
>>> bool((full != 0).all()), full_board_winner(full, board).shape
(True, (4,))
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import ndimage

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import HEX_DIRECTIONS, REGION_NAMES, Board
from trapy_rl.game.kernels import fill_winners
from trapy_rl.game.state import BLUE, EMPTY, YELLOW

__all__ = ["full_board_winner", "playout_wins", "random_fill", "winning_players"]


def random_fill(stones: np.ndarray, to_move: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Fill every empty cell, alternately, starting with the player to move.

    Equivalent to playing the remaining moves in a uniformly random order (no swap): of the e
    empty cells of a board the player to move gets a uniformly random ceil(e/2) of them and the
    opponent the rest.

    Args:
        stones: [n, K] int8, 0 empty, 1 blue, 2 yellow; not modified.
        to_move: [n] int, the player to move on each board (1 or 2).
        rng: the random generator to draw from.

    Returns:
        [n, K] int8, a new array with no empty cell.
    """
    stones = np.asarray(stones)
    to_move = np.asarray(to_move)
    if stones.ndim != 2:
        raise ValueError(f"stones must be [n, K], got shape {stones.shape}")
    if to_move.shape != (stones.shape[0],):
        raise ValueError(f"to_move must have shape ({stones.shape[0]},), got {to_move.shape}")
    if to_move.size and not ((to_move == BLUE) | (to_move == YELLOW)).all():
        raise ValueError(f"to_move must hold players 1 or 2, got {np.unique(to_move).tolist()}")
    empty = stones == EMPTY
    # Rank the empty cells of each row in a random order (occupied cells sort last); the mover
    # takes the empty cells of even rank, the opponent those of odd rank.
    noise = rng.random(stones.shape, dtype=np.float32)
    noise[~empty] = 2.0
    order = np.argsort(noise, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(stones.shape[1])[None, :], axis=1)
    mover = to_move.astype(np.int8)[:, None]
    fill = np.where(rank % 2 == 0, mover, (3 - mover).astype(np.int8))
    return np.where(empty, fill, stones).astype(np.int8)


def winning_players(stones: np.ndarray, board: Board) -> np.ndarray:
    """Which players have a winning group on each board (any position, full or not).

    Labels the groups of both colours in one call to `scipy.ndimage.label` on the grid
    embedding, with the boards stacked on an axis the hex structuring element does not connect.

    Args:
        stones: [n, K] int, 0 empty, 1 blue, 2 yellow.
        board: the geometry, with K = board.num_cells.

    Returns:
        [n, 2] bool: column 0 blue has a winning group, column 1 yellow has one.
    """
    stones = _check_stones(stones, board)
    n = stones.shape[0]
    height, width = board.grid_shape
    # One slab per (board, colour): slab 2i is board i's blue stones, slab 2i + 1 its yellow.
    grid = np.zeros((n, 2, height, width), dtype=bool)
    rows, cols = board.grid_rows, board.grid_cols
    grid[:, 0, rows, cols] = stones == BLUE
    grid[:, 1, rows, cols] = stones == YELLOW
    labels, num_labels = ndimage.label(grid.reshape(2 * n, height, width), _hex_structure())
    # Only perimeter cells touch regions, and every winning group has some.
    perimeter, perimeter_masks = _perimeter(board)
    edge_labels = labels[:, board.grid_rows[perimeter], board.grid_cols[perimeter]]  # [2n, P]
    group_regions = np.zeros(num_labels + 1, dtype=np.uint8)
    for region in range(len(REGION_NAMES)):
        touching = (perimeter_masks >> region & 1).astype(bool)
        hit = np.zeros(num_labels + 1, dtype=bool)
        hit[edge_labels[:, touching]] = True
        group_regions[hit] |= np.uint8(1 << region)
    winning = board.win_table[group_regions]
    winning[0] = False  # label 0 is the background
    return winning[edge_labels].any(axis=1).reshape(n, 2)


def full_board_winner(stones: np.ndarray, board: Board) -> np.ndarray:
    """The winner of each completely filled board.

    On a full board exactly one player has a winning group (docs/rules.md), so this is also the
    winner of any game played to that position. Blue is reported should both have one (which
    cannot happen on a legal full board), as `trapy_rl.game.find_winner` does.

    Args:
        stones: [n, K] int8, no empty cell.
        board: the geometry, with K = board.num_cells.

    Returns:
        [n] int8, the winning player (1 or 2) of each board.

    Raises:
        ValueError: if some board has an empty cell or a value other than 1 and 2.
    """
    stones = _check_stones(stones, board)
    if stones.size and not (stones.min() >= BLUE and stones.max() <= YELLOW):
        bad = np.flatnonzero(((stones != BLUE) & (stones != YELLOW)).any(axis=1))
        raise ValueError(
            f"full_board_winner needs full boards of 1s and 2s; boards {bad[:10].tolist()} "
            f"({len(bad)} in all) have empty cells or other values"
        )
    wins = winning_players(stones, board)
    return np.where(wins[:, 0], BLUE, np.where(wins[:, 1], YELLOW, EMPTY)).astype(np.int8)


def playout_wins(
    batch: BatchGame,
    games: np.ndarray,
    rng: np.random.Generator,
    *,
    num_playouts: int,
    swap_probability: float = 0.5,
    chunk: int | None = None,
    compiled: bool = False,
) -> np.ndarray:
    """How often the player to move wins random playouts of unfinished games.

    A playout is a random game played on from the position: where the swap is legal (move
    two) it is taken with probability ``swap_probability``, blue's stone turning yellow and
    blue moving next; then the board is filled by `random_fill`, the player to move first,
    and `full_board_winner` decides. The playouts are done in rounds of r per game (all n
    games in each round), one call of each function per round.

    Args:
        batch: the positions; not modified.
        games: [n] int, the games of ``batch`` to play out (unfinished ones: a finished game
            counts for its winner, a resignation is not seen).
        rng: the random generator to draw from.
        num_playouts: R, playouts per game.
        swap_probability: the playouts' chance of taking a legal swap (1/2 by default, as
            the random agent does).
        chunk: about how many playouts a round fills (bounds the memory: r = max(1,
            chunk // n)); None fills all R in one round. The random stream, and so the
            result for a seed, depends on it.
        compiled: fill and decide with `trapy_rl.game.kernels.fill_winners` instead of
            `random_fill` and `full_board_winner` (the same distribution, other draws).

    Returns:
        [n] int64, the wins in R playouts of the player to move in each game at the start
        (the swap, when taken, does not change who that is).
    """
    if isinstance(num_playouts, bool) or not isinstance(num_playouts, (int, np.integer)):
        raise ValueError(f"num_playouts must be an integer >= 1, got {num_playouts!r}")
    if num_playouts < 1:
        raise ValueError(f"num_playouts must be >= 1, got {num_playouts}")
    if not 0.0 <= swap_probability <= 1.0:
        raise ValueError(f"swap_probability must be in [0, 1], got {swap_probability}")
    if chunk is not None and chunk < 1:
        raise ValueError(f"chunk must be >= 1 or None, got {chunk}")
    games = np.asarray(games, dtype=np.intp)
    n = len(games)
    player = batch.to_move[games]  # [n] int8
    swap_allowed = batch.swap_allowed[games]  # [n] bool
    first_move = batch.history[games, 0].astype(np.intp)  # [n] the cell a swap would turn
    per_round = num_playouts if chunk is None else max(1, chunk // max(n, 1))
    wins = np.zeros(n, dtype=np.int64)
    done = 0
    while done < num_playouts:
        r = min(per_round, num_playouts - done)
        stones = np.repeat(batch.stones[games], r, axis=0)  # [n r, K]
        to_move = np.repeat(player, r)  # [n r]
        swap_rows = np.repeat(swap_allowed, r)  # [n r]
        if swap_rows.any():
            rows = np.flatnonzero(swap_rows)
            rows = rows[rng.random(len(rows)) < swap_probability]
            stones[rows, np.repeat(first_move, r)[rows]] = YELLOW
            to_move[rows] = BLUE
        if compiled:
            winners = fill_winners(stones, to_move, rng, batch.board)
        else:
            winners = full_board_winner(random_fill(stones, to_move, rng), batch.board)
        wins += (winners.reshape(n, r) == player[:, None]).sum(axis=1)
        done += r
    return wins


def _check_stones(stones: np.ndarray, board: Board) -> np.ndarray:
    stones = np.asarray(stones)
    if stones.ndim != 2 or stones.shape[1] != board.num_cells:
        raise ValueError(
            f"stones must be [n, {board.num_cells}] for the side-{board.side} board, "
            f"got shape {stones.shape}"
        )
    return stones


@functools.lru_cache(maxsize=1)
def _hex_structure() -> np.ndarray:
    """[3, 3, 3] bool: the hex neighbourhood in grid (row, column), nothing across boards."""
    structure = np.zeros((3, 3, 3), dtype=bool)
    structure[1, 1, 1] = True
    for dq, dr in HEX_DIRECTIONS:  # grid row = r, grid column = q + side - 1
        structure[1, 1 + dr, 1 + dq] = True
    structure.flags.writeable = False
    return structure


@functools.cache
def _perimeter(board: Board) -> tuple[np.ndarray, np.ndarray]:
    """The cells with a region ([P] int) and their region masks ([P] uint8)."""
    cells = np.flatnonzero(board.region_masks)
    return cells, board.region_masks[cells]
