"""The net's eval-mode forward pass with batch norm folded into the convolutions.

Shapes: n positions, C input planes, H x W grid, A actions, Ch channels.

In eval mode a batch norm is a per-channel affine map, so ``norm(conv(x, w))`` equals
``conv(x, w * s) + b`` with ``s = gamma / sqrt(var + eps)`` and ``b = beta - mean * s``; the
hex kernel mask can be multiplied into ``w`` once as well. `FoldedNet` computes those weights
when the net's weights change, not on every call, and runs the forward pass as plain
functional calls. With the tiny net on one CPU thread, module dispatch, the per-call kernel
masking, the norms and the eval/train switch took more of the evaluation than the
convolutions; folded, side-10 self-play is 1.2x faster (BENCHMARKS.md). `NetEvaluator` uses this
path by default.

The net's weights are read, never written: the running statistics are not updated and the
net's training flag is left as it is, so the learner may hold the same net.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from trapy_rl.nn.layers import MaskedBatchNorm2d, masked_pool
from trapy_rl.nn.network import ON_BOARD_PLANE, PolicyValueNet

__all__ = ["FoldedNet"]

_Conv = tuple[torch.Tensor, torch.Tensor]  # (weight [Co, Ci, k, k], bias [Co])


def _fold(weight: torch.Tensor, norm: MaskedBatchNorm2d) -> _Conv:
    """A bias-free convolution's ``weight`` followed by ``norm`` in eval mode, as one conv."""
    scale = norm.weight * torch.rsqrt(norm.running_var + norm.eps)  # [Co]
    return weight * scale[:, None, None, None], norm.bias - norm.running_mean * scale


class FoldedNet:
    """``net``'s eval-mode ``forward`` (logits and values) from folded weights.

    Args:
        net: the network; its weights are read at each call, and the convolutions and norms
            are folded again when one of their tensors changed since the last fold (an
            optimizer step, a ``load_state_dict``, a move to another device).
        memory_format: the memory format of the folded convolution weights, that of the input.
    """

    def __init__(
        self, net: PolicyValueNet, *, memory_format: torch.memory_format = torch.contiguous_format
    ):
        self.net = net
        self.memory_format = memory_format
        # (convolution, its norm) pairs, in the order stem, tower, policy: what gets folded.
        self._pairs: list[tuple[torch.nn.Conv2d, MaskedBatchNorm2d]] = [
            (net.stem_conv, net.stem_norm),
            *(
                pair
                for block in net.tower
                for pair in ((block.conv1, block.norm1), (block.conv2, block.norm2))
            ),
            (net.policy_conv, net.policy_norm),
        ]
        self._key: tuple | None = None
        self._stem: _Conv | None = None
        self._tower: list[tuple[_Conv, _Conv]] = []
        self._policy: _Conv | None = None

    def __call__(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """planes [n, C, H, W] float -> logits [n, A] (no legal mask), values [n] in [-1, 1].

        Call it under ``torch.inference_mode()`` or ``torch.no_grad()``.
        """
        # The layers of `PolicyValueNet._heads`, written out as functional calls because module
        # calls are what this path saves; tests/nn/test_folded.py holds the two equal.
        net = self.net
        side = net._check_planes(planes)
        self._refold()
        n = planes.shape[0]
        mask = planes[:, ON_BOARD_PLANE : ON_BOARD_PLANE + 1]  # [n, 1, H, W]
        weight, bias = self._stem
        x = torch.relu(F.conv2d(planes * mask, weight, bias, padding=1)) * mask
        for (weight1, bias1), (weight2, bias2) in self._tower:
            y = torch.relu(F.conv2d(x, weight1, bias1, padding=1)) * mask
            x = torch.relu(x + F.conv2d(y, weight2, bias2, padding=1)) * mask
        pooled = masked_pool(x, mask)  # [n, 2 Ch]
        weight, bias = self._policy
        p = torch.relu(F.conv2d(x, weight, bias))
        point_logits = F.conv2d(p, net.policy_out.weight, net.policy_out.bias).reshape(n, -1)
        cell_logits = point_logits.index_select(1, net.cell_index(side, planes.device))
        swap_logit = _mlp(net.swap_mlp, pooled)  # [n, 1]
        logits = torch.cat([cell_logits, swap_logit.to(cell_logits.dtype)], dim=1)
        values = torch.tanh(_mlp(net.value_mlp, pooled)).squeeze(1)
        return logits, values

    def _refold(self) -> None:
        """Fold again when a folded tensor changed (in place, or replaced by another)."""
        key = self._version_key()
        if key == self._key:
            return
        with torch.no_grad():
            convs = [
                _fold(conv.weight * getattr(conv, "kernel_mask", 1.0), norm)
                for conv, norm in self._pairs
            ]
        convs = [(w.contiguous(memory_format=self.memory_format), b.contiguous()) for w, b in convs]
        self._stem, self._policy = convs[0], convs[-1]
        self._tower = list(zip(convs[1:-1:2], convs[2:-1:2], strict=True))
        self._key = key

    def _version_key(self) -> tuple[tuple[int, int], ...]:
        """Where each folded tensor lives and how often it was changed in place."""
        return tuple(
            (tensor.data_ptr(), tensor._version)
            for conv, norm in self._pairs
            for tensor in (conv.weight, norm.weight, norm.bias, norm.running_mean, norm.running_var)
        )


def _mlp(mlp: torch.nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """``Linear, ReLU, Linear`` as functional calls: [n, F] -> [n, 1]."""
    first, _, second = mlp
    return F.linear(torch.relu(F.linear(x, first.weight, first.bias)), second.weight, second.bias)
