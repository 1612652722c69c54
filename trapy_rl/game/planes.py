"""Input planes: positions as float32 images on the rectangular embedding of the hex grid.

The grid has H = n rows (r) and W = 2n - 1 columns (q + n - 1); cell (q, r) sits at
``[r, q + n - 1]`` and the points right of each row's last cell are off the board. In this
embedding the six hex neighbours of a point are the 3x3 neighbourhood less the corners
(-1, -1) and (+1, +1), so a 3x3 convolution masked that way respects hex adjacency.

Planes, from the view of the player to move (C = 9; `encode_state_planes` can take either
player's view, where plane 0 is that player's stones and plane 1 the other's):

====  =========================================================
 0    stones of the player to move
 1    stones of the opponent
 2    on the board (1 on every cell, 0 off the board)
 3    the swap is legal now (the whole board 1, else 0)
 4-8  adjacent to region k = 0..4 (bottom-left, bottom-right, right, top, left)
====  =========================================================

Shapes: B games, C planes, H x W grid, K cells, A actions.
"""

from __future__ import annotations

import functools

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import NUM_REGIONS, Board
from trapy_rl.game.state import GameState

__all__ = [
    "NUM_PLANES",
    "PLANE_NAMES",
    "cells_to_grid",
    "encode_planes",
    "encode_state_planes",
    "mirror_planes",
    "mirror_policy",
]

PLANE_NAMES: tuple[str, ...] = (
    "own",
    "opponent",
    "on_board",
    "swap_allowed",
    "region_bottom_left",
    "region_bottom_right",
    "region_right",
    "region_top",
    "region_left",
)
NUM_PLANES = len(PLANE_NAMES)
_REGION0 = PLANE_NAMES.index("region_bottom_left")
# The mirror swaps bottom-left with bottom-right and left with right, and keeps top.
_MIRROR_REGION = (1, 0, 4, 3, 2)


@functools.cache
def _layout(board: Board) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(flat grid index of each cell [K], static planes [C, H*W], mirror of grid points [H*W])."""
    height, width = board.grid_shape
    flat = (board.grid_rows.astype(np.intp) * width + board.grid_cols).astype(np.intp)
    static = np.zeros((NUM_PLANES, height * width), dtype=np.float32)
    static[PLANE_NAMES.index("on_board"), flat] = 1.0
    # The swap plane starts as the on-board mask; `encode_planes` scales it by the swap flag.
    static[PLANE_NAMES.index("swap_allowed"), flat] = 1.0
    for k in range(NUM_REGIONS):
        static[_REGION0 + k, flat] = (board.region_masks >> k & 1).astype(np.float32)
    mirror = np.arange(height * width)
    mirror[flat] = flat[board.mirror_cells]
    for array in (flat, static, mirror):
        array.flags.writeable = False
    return flat, static, mirror


def encode_planes(batch: BatchGame, games: np.ndarray | None = None) -> np.ndarray:
    """Planes of ``games`` (indices, default all) from the view of each game's player to move.

    Returns:
        [n, C, H, W] float32.
    """
    stones = batch.stones if games is None else batch.stones[games]
    to_move = batch.to_move if games is None else batch.to_move[games]
    swap = batch.swap_allowed if games is None else batch.swap_allowed[games]
    return _encode(stones, to_move, swap, batch.board)


def encode_state_planes(state: GameState, view: int | None = None) -> np.ndarray:
    """Planes of one game from the view of player ``view`` (1 or 2; default the player to move).

    Plane 0 holds ``view``'s stones and plane 1 the other player's; the rest do not depend on
    the view. Multi-agent interfaces show each player the position from its own side.

    Returns:
        [C, H, W] float32.
    """
    view = state.to_move if view is None else view
    if view not in (1, 2):
        raise ValueError(f"view must be player 1 (blue) or 2 (yellow), got {view!r}")
    return _encode(
        state.stones[None], np.array([view]), np.array([state.swap_allowed]), state.board
    )[0]


def _encode(stones: np.ndarray, view: np.ndarray, swap: np.ndarray, board: Board) -> np.ndarray:
    """[n, C, H, W] float32 from stones [n, K] int8, viewing players [n] and swap flags [n]."""
    flat, static, _ = _layout(board)
    n = len(stones)
    planes = np.empty((n, NUM_PLANES, static.shape[1]), dtype=np.float32)
    planes[:] = static
    planes[:, 0, flat] = stones == view[:, None]
    planes[:, 1, flat] = stones == (3 - view)[:, None]
    planes[:, 3] *= swap[:, None]
    return planes.reshape(n, NUM_PLANES, *board.grid_shape)


def mirror_planes(planes: np.ndarray, board: Board) -> np.ndarray:
    """The planes of the mirrored position: ``(q, r) -> (-q - r, r)``.

    Args:
        planes: [..., C, H, W] float32.

    Returns:
        [..., C, H, W], a new array.
    """
    _, _, mirror = _layout(board)
    shape = planes.shape
    flat = planes.reshape(*shape[:-2], shape[-2] * shape[-1])[..., mirror]
    order = list(range(NUM_PLANES))
    for k in range(NUM_REGIONS):
        order[_REGION0 + k] = _REGION0 + _MIRROR_REGION[k]
    return flat[..., order, :].reshape(shape)


def mirror_policy(policy: np.ndarray, board: Board) -> np.ndarray:
    """The policy of the mirrored position. policy: [..., A] -> [..., A]."""
    return policy[..., board.mirror_actions]


def cells_to_grid(values: np.ndarray, board: Board, *, fill: float = 0.0) -> np.ndarray:
    """Scatter per-cell values [..., K] onto the grid [..., H, W] (off-board points = fill)."""
    flat, _, _ = _layout(board)
    height, width = board.grid_shape
    grid = np.full((*values.shape[:-1], height * width), fill, dtype=values.dtype)
    grid[..., flat] = values
    return grid.reshape(*values.shape[:-1], height, width)
