"""The hex-masked convolution, the masked batch norm and pooling against slow references."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trapy_rl.game.board import HEX_DIRECTIONS, Board
from trapy_rl.nn.layers import HEX_KERNEL_MASK, HexConv2d, MaskedBatchNorm2d, masked_pool


def on_board_mask(board: Board) -> torch.Tensor:
    """[1, 1, H, W] float32, 1 on the cells."""
    mask = torch.from_numpy((board.grid_to_cell >= 0).astype(np.float32))
    return mask[None, None]


def at_cells(x: torch.Tensor, board: Board) -> torch.Tensor:
    """[..., H, W] -> [..., K]: the values at the board's cells."""
    width = board.grid_shape[1]
    flat = board.grid_rows.astype(np.int64) * width + board.grid_cols.astype(np.int64)
    return x.flatten(-2)[..., torch.from_numpy(flat)]


@pytest.mark.parametrize("side", [2, 3, 5, 10])
def test_all_ones_kernel_lights_exactly_the_cell_and_its_neighbours(side):
    board = Board(side)
    conv = HexConv2d(1, 1)
    with torch.no_grad():
        conv.weight.fill_(1.0)
    mask = on_board_mask(board)
    height, width = board.grid_shape
    for cell in range(board.num_cells):
        x = torch.zeros(1, 1, height, width)
        x[0, 0, board.grid_rows[cell], board.grid_cols[cell]] = 1.0
        lit = (conv(x) * mask)[0, 0].detach().numpy() != 0
        lit_cells = set(board.grid_to_cell[lit].tolist())
        expected = {cell} | {int(c) for c in board.neighbors[cell] if c >= 0}
        assert lit_cells == expected, board.cell_name(cell)


def test_kernel_mask_drops_exactly_the_two_non_neighbour_taps():
    live = {(r - 1, c - 1) for r in range(3) for c in range(3) if HEX_KERNEL_MASK[r, c]}
    # Axial (dq, dr) is grid (dr, dc = dq).
    assert live == {(0, 0)} | {(dr, dq) for dq, dr in HEX_DIRECTIONS}


def reference_hex_conv(conv: HexConv2d, features: np.ndarray, board: Board) -> np.ndarray:
    """Slow hex convolution over the cells: features [n, Ci, K] -> [n, Co, K]."""
    weight = conv.weight.detach().numpy()  # [Co, Ci, 3, 3]
    n, _, k = features.shape
    out = np.zeros((n, weight.shape[0], k))
    for cell in range(k):
        q, r = board.coords[cell]
        out[:, :, cell] += features[:, :, cell] @ weight[:, :, 1, 1].T
        for dq, dr in HEX_DIRECTIONS:
            if 0 <= r + dr < board.side and -(board.side - 1) <= q + dq <= board.side - 1 - r - dr:
                other = board.cell_index(q + dq, r + dr)
                out[:, :, cell] += features[:, :, other] @ weight[:, :, 1 + dr, 1 + dq].T
    return out


@pytest.mark.parametrize("side", [2, 4, 6])
def test_hex_conv_equals_the_neighbour_sum_over_cells(side):
    board = Board(side)
    torch.manual_seed(side)
    conv = HexConv2d(3, 4)
    with torch.no_grad():
        conv.weight.normal_()  # also the dead taps: they must not count
    features = np.random.default_rng(side).normal(size=(2, 3, board.num_cells))
    grid = np.zeros((2, 3, *board.grid_shape), dtype=np.float32)
    grid[:, :, board.grid_rows, board.grid_cols] = features
    out = at_cells(conv(torch.from_numpy(grid)), board).detach().numpy()
    np.testing.assert_allclose(out, reference_hex_conv(conv, features, board), atol=1e-4)


def test_dead_taps_get_no_gradient():
    conv = HexConv2d(2, 2)
    conv(torch.randn(3, 2, 4, 7)).square().sum().backward()
    assert torch.all(conv.weight.grad[:, :, 0, 0] == 0)
    assert torch.all(conv.weight.grad[:, :, 2, 2] == 0)
    assert torch.all(conv.weight[:, :, 0, 0] == 0) and torch.all(conv.weight[:, :, 2, 2] == 0)


def test_masked_batch_norm_equals_batch_norm_over_the_cells():
    board = Board(4)
    torch.manual_seed(0)
    mask = on_board_mask(board).expand(5, 1, *board.grid_shape)
    x = torch.randn(5, 3, *board.grid_shape) * 2.0 + 1.0
    garbage = x + 100.0 * (1.0 - mask)  # off-board values must not count
    norm = MaskedBatchNorm2d(3)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
        norm.bias.copy_(torch.tensor([0.0, -1.0, 3.0]))
    reference = torch.nn.BatchNorm1d(3)
    reference.load_state_dict(norm.state_dict())
    out = norm(garbage, mask)
    cells = at_cells(x, board)  # [n, Ch, K]
    expected = reference(cells.permute(0, 2, 1).reshape(-1, 3)).reshape(5, -1, 3).permute(0, 2, 1)
    torch.testing.assert_close(at_cells(out, board), expected)
    torch.testing.assert_close(norm.running_mean, reference.running_mean)
    torch.testing.assert_close(norm.running_var, reference.running_var)
    norm.eval()
    reference.eval()
    expected = reference(cells.permute(0, 2, 1).reshape(-1, 3)).reshape(5, -1, 3).permute(0, 2, 1)
    out = at_cells(norm(x, mask), board)
    torch.testing.assert_close(out, expected)


def test_masked_pool_is_mean_and_max_over_the_cells():
    board = Board(5)
    mask = on_board_mask(board).expand(2, 1, *board.grid_shape)
    x = torch.relu(torch.randn(2, 4, *board.grid_shape)) * mask
    pooled = masked_pool(x, mask)
    cells = at_cells(x, board)
    torch.testing.assert_close(pooled, torch.cat([cells.mean(2), cells.amax(2)], dim=1))
