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

__all__ = ["FoldedNet", "folded_forward"]

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
        self._weights: dict[str, torch.Tensor] = {}  # `weights`, as of the last fold

    def __call__(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """planes [n, C, H, W] float -> logits [n, A] (no legal mask), values [n] in [-1, 1].

        Call it under ``torch.inference_mode()`` or ``torch.no_grad()``.
        """
        side = self.net._check_planes(planes)
        return folded_forward(planes, self.weights(), self.net.cell_index(side, planes.device))

    def weights(self) -> dict[str, torch.Tensor]:
        """Every tensor the folded forward pass reads, by name (`folded_forward`'s keys): the
        folded convolutions, folded again if the net changed, and the net's own head layers."""
        self._refold()
        return self._weights

    def version_key(self) -> tuple[tuple[int, int], ...]:
        """Where each tensor `weights` reads from lives and how often it was changed in place:
        equal keys, equal weights."""
        net = self.net
        # Indexing, not slicing: a slice of a Sequential builds a new module on every call.
        heads = (
            net.policy_out,
            net.swap_mlp[0],
            net.swap_mlp[2],
            net.value_mlp[0],
            net.value_mlp[2],
        )
        tensors = [
            *(
                t
                for c, n in self._pairs
                for t in (c.weight, n.weight, n.bias, n.running_mean, n.running_var)
            ),
            *(t for layer in heads for t in (layer.weight, layer.bias)),
        ]
        return tuple((tensor.data_ptr(), tensor._version) for tensor in tensors)

    def _refold(self) -> None:
        """Fold again when a tensor changed (in place, or replaced by another)."""
        key = self.version_key()
        if key == self._key:
            return
        with torch.no_grad():
            convs = [
                _fold(conv.weight * getattr(conv, "kernel_mask", 1.0), norm)
                for conv, norm in self._pairs
            ]
        convs = [(w.contiguous(memory_format=self.memory_format), b.contiguous()) for w, b in convs]
        (stem_w, stem_b), *tower, (policy_w, policy_b) = convs
        net = self.net
        weights = {"stem.weight": stem_w, "stem.bias": stem_b}
        blocks = zip(tower[::2], tower[1::2], strict=True)
        for i, ((weight1, bias1), (weight2, bias2)) in enumerate(blocks):
            weights |= {f"tower.{i}.weight1": weight1, f"tower.{i}.bias1": bias1}
            weights |= {f"tower.{i}.weight2": weight2, f"tower.{i}.bias2": bias2}
        weights |= {"policy.weight": policy_w, "policy.bias": policy_b}
        weights |= {
            "policy_out.weight": net.policy_out.weight,
            "policy_out.bias": net.policy_out.bias,
        }
        for name, mlp in (("swap", net.swap_mlp), ("value", net.value_mlp)):
            first, _, second = mlp
            weights |= {f"{name}.weight1": first.weight, f"{name}.bias1": first.bias}
            weights |= {f"{name}.weight2": second.weight, f"{name}.bias2": second.bias}
        self._weights = weights
        self._key = key


def folded_forward(
    planes: torch.Tensor, weights: dict[str, torch.Tensor], cell_index: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The net's eval-mode forward pass from `FoldedNet.weights`.

    The layers of `PolicyValueNet._heads`, written out as functional calls because module calls
    are what this path saves; tests/nn/test_folded.py holds the two equal. A function of its
    inputs alone, so that it can also be exported as a graph (`trapy_rl.nn.ort_net`).

    Args:
        planes: [n, C, H, W] float.
        weights: `FoldedNet.weights`.
        cell_index: [K] int64, the flat grid index of each cell (`PolicyValueNet.cell_index`).

    Returns:
        logits [n, A] (no legal mask), values [n] in [-1, 1].
    """
    n = planes.shape[0]
    mask = planes[:, ON_BOARD_PLANE : ON_BOARD_PLANE + 1]  # [n, 1, H, W]
    x = torch.relu(F.conv2d(planes * mask, weights["stem.weight"], weights["stem.bias"], padding=1))
    x = x * mask
    i = 0
    while f"tower.{i}.weight1" in weights:
        y = F.conv2d(x, weights[f"tower.{i}.weight1"], weights[f"tower.{i}.bias1"], padding=1)
        y = torch.relu(y) * mask
        y = F.conv2d(y, weights[f"tower.{i}.weight2"], weights[f"tower.{i}.bias2"], padding=1)
        x = torch.relu(x + y) * mask
        i += 1
    pooled = masked_pool(x, mask)  # [n, 2 Ch]
    p = torch.relu(F.conv2d(x, weights["policy.weight"], weights["policy.bias"]))
    point_logits = F.conv2d(p, weights["policy_out.weight"], weights["policy_out.bias"])
    cell_logits = point_logits.reshape(n, -1).index_select(1, cell_index)
    swap_logit = _mlp(weights, "swap", pooled)  # [n, 1]
    logits = torch.cat([cell_logits, swap_logit.to(cell_logits.dtype)], dim=1)
    values = torch.tanh(_mlp(weights, "value", pooled)).squeeze(1)
    return logits, values


def _mlp(weights: dict[str, torch.Tensor], name: str, x: torch.Tensor) -> torch.Tensor:
    """``Linear, ReLU, Linear`` as functional calls: [n, F] -> [n, 1]."""
    hidden = torch.relu(F.linear(x, weights[f"{name}.weight1"], weights[f"{name}.bias1"]))
    return F.linear(hidden, weights[f"{name}.weight2"], weights[f"{name}.bias2"])
