"""Input planes: contents from the mover's view, the grid embedding, and the mirror."""

import numpy as np
import pytest

from trapy_rl.game import (
    BatchGame,
    Board,
    GameState,
    encode_planes,
    encode_state_planes,
    mirror_planes,
    mirror_policy,
)
from trapy_rl.game.planes import NUM_PLANES, PLANE_NAMES, cells_to_grid
from trapy_rl.game.sampling import random_legal_actions


def slow_planes(state: GameState) -> np.ndarray:
    """The planes of one position, cell by cell."""
    board = state.board
    planes = np.zeros((NUM_PLANES, *board.grid_shape), dtype=np.float32)
    for cell, (q, r) in enumerate(board.coords.tolist()):
        at = (r, q + board.side - 1)
        planes[0][at] = state.stones[cell] == state.to_move
        planes[1][at] = state.stones[cell] == 3 - state.to_move
        planes[2][at] = 1
        planes[3][at] = state.swap_allowed
        for k in range(5):
            planes[4 + k][at] = board.region_masks[cell] >> k & 1
    return planes


@pytest.mark.parametrize("side", [2, 3, 5, 10])
def test_planes_equal_cell_by_cell_encoding(side):
    rng = np.random.default_rng(side)
    batch = BatchGame(24, side=side)
    for _ in range(3 * side):
        planes = encode_planes(batch)
        assert planes.shape == (24, NUM_PLANES, side, 2 * side - 1) and planes.dtype == np.float32
        for g in range(batch.num_games):
            assert (planes[g] == slow_planes(batch.to_state(g))).all()
        assert (encode_planes(batch, np.array([3, 1])) == planes[[3, 1]]).all()
        batch.step(random_legal_actions(batch.legal_mask(), rng))


def test_swap_plane_and_names():
    assert len(PLANE_NAMES) == NUM_PLANES == 9
    batch = BatchGame(1)
    batch.step(np.array([60]))
    planes = encode_planes(batch)[0]
    assert planes[3].sum() == 145 and planes[1].sum() == 1 and planes[0].sum() == 0


@pytest.mark.parametrize("side", [2, 4, 10])
def test_mirror_planes_encode_the_mirrored_position(side):
    board = Board(side)
    rng = np.random.default_rng(0)
    batch = BatchGame(16, board)
    for _ in range(2 * side):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    mirrored = BatchGame.from_states(
        [
            GameState.from_moves([int(board.mirror_actions[a]) for a in s.history], board)
            for s in (batch.to_state(g) for g in range(16))
        ]
    )
    assert (mirror_planes(encode_planes(batch), board) == encode_planes(mirrored)).all()
    assert (mirror_policy(batch.legal_mask(), board) == mirrored.legal_mask()).all()


def test_cells_to_grid():
    board = Board(3)
    grid = cells_to_grid(np.arange(board.num_cells, dtype=float), board, fill=-1)
    assert grid.shape == (3, 5)
    assert grid[0].tolist() == [0, 1, 2, 3, 4] and grid[2].tolist() == [9, 10, 11, -1, -1]


@pytest.mark.parametrize("side", [2, 5])
def test_state_planes_equal_the_batch_planes_from_either_view(side):
    rng = np.random.default_rng(side)
    batch = BatchGame(8, side=side)
    while not batch.is_over.all():
        planes = encode_planes(batch)
        for g in range(batch.num_games):
            state = batch.to_state(g)
            assert (encode_state_planes(state) == planes[g]).all()
            assert (encode_state_planes(state, state.to_move) == planes[g]).all()
            # The other player's view exchanges the two stone planes and nothing else.
            other_view = encode_state_planes(state, 3 - state.to_move)
            assert (other_view == planes[g][[1, 0, *range(2, NUM_PLANES)]]).all()
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    with pytest.raises(ValueError, match="view must be player 1"):
        encode_state_planes(GameState(Board(2)), 0)
