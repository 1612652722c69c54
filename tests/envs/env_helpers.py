"""Helpers shared by the environment tests: the input planes written out cell by cell."""

import numpy as np

from trapy_rl.game import GameState


def reference_planes(state: GameState, view: int) -> np.ndarray:
    """[C, H, W] planes from player ``view``'s side, cell by cell, as the planes module says."""
    board = state.board
    planes = np.zeros((9, *board.grid_shape), dtype=np.float32)
    for cell, (q, r) in enumerate(board.coords):
        x = q + board.side - 1
        planes[0, r, x] = state.stones[cell] == view
        planes[1, r, x] = state.stones[cell] == 3 - view
        planes[2, r, x] = 1.0
        planes[3, r, x] = state.swap_allowed
        for k in range(5):
            planes[4 + k, r, x] = board.region_masks[cell] >> k & 1
    return planes
