"""Layers for features on the grid embedding of the hex board: masked convolution, norm, pooling.

Shapes: n positions, Ch feature channels, H x W grid. ``mask`` is always [n, 1, H, W] float,
1 on the board's cells and 0 on the off-board points (input plane ``on_board``).

In the grid embedding (see `trapy_rl.game.planes`) the six hex neighbours of ``[r, c]`` are
``[r, c±1]``, ``[r±1, c]``, ``[r-1, c+1]`` and ``[r+1, c-1]``: the 3x3 neighbourhood less the
taps (-1, -1) and (+1, +1). `HexConv2d` zeroes those two taps, so one layer sees a cell and its
six neighbours, exactly as on the board.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["HEX_KERNEL_MASK", "HexConv2d", "MaskedBatchNorm2d", "masked_pool"]

# [3, 3] float32: the taps of a 3x3 kernel that reach a hex neighbour (or the centre).
# Row index = dr + 1, column index = dc + 1; the corners (-1, -1) and (+1, +1) are not neighbours.
HEX_KERNEL_MASK = torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])


class HexConv2d(nn.Conv2d):
    """A 3x3 convolution (padding 1) whose kernel is masked to the centre and six hex neighbours.

    The mask is applied to the weight in every forward pass, so the two dead taps stay out of
    the function whatever an optimizer does to the stored weight (their gradient is zero).
    """

    def __init__(self, in_channels: int, out_channels: int, *, bias: bool = False):
        super().__init__(in_channels, out_channels, kernel_size=3, padding=1, bias=bias)
        self.register_buffer("kernel_mask", HEX_KERNEL_MASK.clone(), persistent=False)
        with torch.no_grad():
            self.weight.mul_(self.kernel_mask)
            # Keep the fan-in of the live taps comparable to a plain 3x3 kernel (7 of 9 taps).
            self.weight.mul_((9.0 / 7.0) ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [n, Ci, H, W] -> [n, Co, H, W]."""
        return self._conv_forward(x, self.weight * self.kernel_mask, self.bias)


class MaskedBatchNorm2d(nn.BatchNorm2d):
    """Batch norm whose batch statistics count only the on-board points.

    Off-board points are zeros that would otherwise pull the mean and variance towards 0 by an
    amount that depends on the board side (45 of 190 grid points at side 10, 1 of 3 at side 2),
    so the same weights would see different statistics on different boards. In eval mode it is
    the plain per-channel affine map of the running statistics. The output is not masked: the
    caller masks after the activation.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """x: [n, Ch, H, W], mask: [n, 1, H, W] -> [n, Ch, H, W]."""
        if not self.training:
            return F.batch_norm(
                x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps
            )
        count = mask.sum().clamp_min(1.0)
        mean = (x * mask).sum(dim=(0, 2, 3)) / count  # [Ch]
        centred = (x - mean[None, :, None, None]) * mask
        var = centred.square().sum(dim=(0, 2, 3)) / count  # [Ch], biased, as BatchNorm2d
        with torch.no_grad():
            self.num_batches_tracked.add_(1)
            momentum = self.momentum if self.momentum is not None else 0.1
            unbiased = var * (count / (count - 1.0).clamp_min(1.0))
            self.running_mean.lerp_(mean.detach(), momentum)
            self.running_var.lerp_(unbiased.detach(), momentum)
        scale = self.weight * torch.rsqrt(var + self.eps)  # [Ch]
        return centred * scale[None, :, None, None] + self.bias[None, :, None, None]


def masked_pool(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean and max of each channel over the on-board points.

    Args:
        x: [n, Ch, H, W], zero off the board and >= 0 on it (after ReLU and the mask), so the
            plain max over the grid equals the max over the board.
        mask: [n, 1, H, W].

    Returns:
        [n, 2 * Ch]: the means, then the maxima.
    """
    count = mask.sum(dim=(2, 3)).clamp_min(1.0)  # [n, 1]
    mean = x.sum(dim=(2, 3)) / count
    return torch.cat([mean, x.amax(dim=(2, 3))], dim=1)
