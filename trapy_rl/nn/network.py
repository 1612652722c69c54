"""The policy/value network: an AlphaZero-style residual tower on the hex grid embedding.

Shapes: n positions, C input planes (`NUM_PLANES`), H x W grid, K cells, A = K + 1 actions,
Ch = ``channels``.

The net is fully convolutional plus global pooling, so one set of weights runs on every board
side; the board is derived from the input's height, ``Board(H)``, and W must be 2H - 1.

    planes [n, C, H, W], times the mask
      -> stem: HexConv(C -> Ch), BN, ReLU, mask
      -> ``blocks`` x residual block: HexConv, BN, ReLU, HexConv, BN, + skip, ReLU, mask
      -> policy: 1x1 conv (Ch -> ``policy_channels``), BN, ReLU, 1x1 conv -> 1 logit per point,
                 gathered at the K cells; the swap logit from pooled features through an MLP
      -> value:  pooled features (mean and max over the board) -> MLP -> tanh

"mask" multiplies the features by the on-board plane, so off-board points are zero after every
layer and the input's off-board points never reach a cell.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, PLANE_NAMES
from trapy_rl.nn.layers import HexConv2d, MaskedBatchNorm2d, masked_pool

__all__ = ["NetConfig", "PolicyValueNet"]

ON_BOARD_PLANE = PLANE_NAMES.index("on_board")
# Bounds on a net read from a file or a config: far above any net trained here (the large net,
# 128 channels x 10 blocks, has 3 million weights), far below one whose allocation would
# exhaust a machine. Each width is checked against its bound, then the weights of the whole
# net (`NetConfig.num_weights`, counted from the widths) against MAX_WEIGHTS, before anything
# is built: 1024 channels fit 3 blocks, 512 channels 14, 256 channels 56.
MAX_CHANNELS, MAX_BLOCKS, MAX_HEAD_WIDTH, MAX_IN_PLANES = 1024, 64, 4096, 64
MAX_WEIGHTS = 64 * 2**20  # 67 million: 256 MiB of float32 weights and buffers
_BOUNDS = {
    "channels": (1, MAX_CHANNELS),
    "blocks": (0, MAX_BLOCKS),
    "policy_channels": (1, MAX_HEAD_WIDTH),
    "value_hidden": (1, MAX_HEAD_WIDTH),
    "swap_hidden": (1, MAX_HEAD_WIDTH),
    "in_planes": (ON_BOARD_PLANE + 1, MAX_IN_PLANES),
}


@functools.cache
def _cell_index(side: int) -> np.ndarray:
    """[K] int64: the flat grid index r * W + c of each cell of the side-``side`` board."""
    board = Board(side)
    width = board.grid_shape[1]
    return board.grid_rows.astype(np.int64) * width + board.grid_cols.astype(np.int64)


class ResidualBlock(nn.Module):
    """Two masked hex convolutions with batch norm and an identity skip."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = HexConv2d(channels, channels)
        self.norm1 = MaskedBatchNorm2d(channels)
        self.conv2 = HexConv2d(channels, channels)
        self.norm2 = MaskedBatchNorm2d(channels)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x: [n, Ch, H, W] zero off the board; mask [n, 1, H, W] -> [n, Ch, H, W]."""
        y = torch.relu(self.norm1(self.conv1(x), mask)) * mask
        y = self.norm2(self.conv2(y), mask)
        return torch.relu(x + y) * mask


@dataclass(frozen=True)
class NetConfig:
    """The shape of a `PolicyValueNet` (``configs/model/*.yaml``); the default is the small
    CPU net.

    Attributes:
        channels: Ch, feature channels of the tower.
        blocks: residual blocks in the tower.
        policy_channels: hidden channels of the per-cell policy head (1x1 convolutions).
        value_hidden: hidden units of the value MLP.
        swap_hidden: hidden units of the swap-logit MLP.
        in_planes: C, input planes (`NUM_PLANES`, what `encode_planes` produces).
        ownership_head: add the auxiliary head that predicts each cell's final stone
            (`PolicyValueNet.ownership`); a net without it reads checkpoints from before it.
    """

    channels: int = 48
    blocks: int = 4
    policy_channels: int = 32
    value_hidden: int = 64
    swap_hidden: int = 32
    in_planes: int = NUM_PLANES
    ownership_head: bool = False

    def __post_init__(self) -> None:
        for name, (least, most) in _BOUNDS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
                raise ValueError(f"model.{name} must be an integer >= {least}, got {value!r}")
            if value > most:
                raise ValueError(f"model.{name} must be at most {most}, got {value}")
            object.__setattr__(self, name, int(value))
        if not isinstance(self.ownership_head, bool):
            raise ValueError(
                f"model.ownership_head must be true or false, got {self.ownership_head!r}"
            )
        if self.num_weights() > MAX_WEIGHTS:
            raise ValueError(
                f"model: {self.channels} channels x {self.blocks} blocks make "
                f"{self.num_weights():,} weights, beyond this toolkit's limit of {MAX_WEIGHTS:,} "
                f"({4 * MAX_WEIGHTS // 2**20} MiB)"
            )

    def num_weights(self) -> int:
        """The numbers in the net's ``state_dict`` (weights, biases, batch-norm statistics and
        counters), counted from the widths without building it; 4 bytes each in float32."""
        ch, c_in, p = self.channels, self.in_planes, self.policy_channels
        norm = lambda width: 4 * width + 1  # noqa: E731 - scale, shift, mean, var; counter
        stem = 9 * c_in * ch + norm(ch)  # HexConv2d 3x3 (masked, stored whole), no bias
        tower = self.blocks * 2 * (9 * ch * ch + norm(ch))
        policy = ch * p + norm(p) + p + 1  # 1x1 conv, BN, 1x1 conv with bias
        mlps = sum(2 * ch * h + h + h + 1 for h in (self.swap_hidden, self.value_hidden))
        ownership = ch + 1 if self.ownership_head else 0
        return stem + tower + policy + mlps + ownership

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NetConfig:
        """From a plain dict such as a checkpoint holds (a ValueError names a bad key)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"model: expected a mapping, got {data!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"model: unknown setting {unknown[0]!r} (known: {', '.join(sorted(known))})"
            )
        return cls(**dict(data))

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


class PolicyValueNet(nn.Module):
    """Residual policy/value net for Trap Y positions on any board side.

    Args:
        config: its shape (default `NetConfig()`, the small CPU net).

    Attributes:
        config: the `NetConfig` it was built from.
    """

    def __init__(self, config: NetConfig = NetConfig()):
        super().__init__()
        if not isinstance(config, NetConfig):
            raise TypeError(f"config must be a NetConfig, got {type(config).__name__}")
        self.config = config
        channels, blocks = config.channels, config.blocks
        policy_channels, in_planes = config.policy_channels, config.in_planes
        value_hidden, swap_hidden = config.value_hidden, config.swap_hidden
        self.in_planes = int(in_planes)
        self.stem_conv = HexConv2d(in_planes, channels)
        self.stem_norm = MaskedBatchNorm2d(channels)
        self.tower = nn.ModuleList(ResidualBlock(channels) for _ in range(blocks))
        self.policy_conv = nn.Conv2d(channels, policy_channels, kernel_size=1, bias=False)
        self.policy_norm = MaskedBatchNorm2d(policy_channels)
        self.policy_out = nn.Conv2d(policy_channels, 1, kernel_size=1)
        self.swap_mlp = nn.Sequential(
            nn.Linear(2 * channels, swap_hidden), nn.ReLU(), nn.Linear(swap_hidden, 1)
        )
        self.value_mlp = nn.Sequential(
            nn.Linear(2 * channels, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1)
        )
        # Each cell's final stone, +1 the player to move's, -1 the opponent's (a 1x1 conv).
        self.ownership_out = (
            nn.Conv2d(channels, 1, kernel_size=1) if config.ownership_head else None
        )
        self._cell_index_cache: dict[tuple[int, torch.device], torch.Tensor] = {}

    def cell_index(self, side: int, device: torch.device) -> torch.Tensor:
        """[K] int64 on ``device``: the flat grid index of each cell (cached per side, device).

        A cache lookup built by numpy board code, not for tracing: `NetEvaluator` hides it from
        ``torch.compile`` when it compiles (a decorator here would import torch._dynamo, 1.5
        seconds, with every net).
        """
        key = (side, device)
        index = self._cell_index_cache.get(key)
        if index is None:
            # A normal tensor even when first made under the evaluator's inference mode, so
            # that a later training step may use it in its backward pass.
            with torch.inference_mode(False):
                index = torch.from_numpy(_cell_index(side)).to(device)
            self._cell_index_cache[key] = index
        return index

    def forward(
        self, planes: torch.Tensor, legal_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Policy logits and values of positions, each from the view of its player to move.

        Args:
            planes: [n, C, H, W] float, as `encode_planes` makes them (W = 2H - 1).
            legal_mask: optional [n, A] bool; illegal actions then get logit -inf.

        Returns:
            logits [n, A] (float32 unless under autocast), values [n] in [-1, 1].
        """
        logits, values, _ = self._heads(planes, legal_mask, ownership=False)
        return logits, values

    def forward_with_ownership(
        self, planes: torch.Tensor, legal_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`forward`'s logits and values, and the ownership head's prediction.

        Returns:
            logits [n, A], values [n], ownership [n, K] in [-1, 1]: each cell's final stone
            (+1 the player to move's, -1 the opponent's, 0 empty).

        Raises:
            ValueError: for a net built without ``ownership_head``.
        """
        if self.ownership_out is None:
            raise ValueError("this net has no ownership head (model.ownership_head=false)")
        return self._heads(planes, legal_mask, ownership=True)

    def _heads(
        self, planes: torch.Tensor, legal_mask: torch.Tensor | None, *, ownership: bool
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The trunk, then the heads (the ownership head only when asked for)."""
        side = self._check_planes(planes)
        n = planes.shape[0]
        mask = planes[:, ON_BOARD_PLANE : ON_BOARD_PLANE + 1]  # [n, 1, H, W]
        # Zero the input off the board too: only the on-board plane defines what is off it.
        x = torch.relu(self.stem_norm(self.stem_conv(planes * mask), mask)) * mask
        for block in self.tower:
            x = block(x, mask)

        pooled = masked_pool(x, mask)  # [n, 2 Ch]
        # 1x1 convolutions: off-board points of the policy head never reach a cell.
        p = torch.relu(self.policy_norm(self.policy_conv(x), mask))
        point_logits = self.policy_out(p).reshape(n, -1)  # [n, H * W]
        cell_logits = point_logits.index_select(1, self.cell_index(side, planes.device))
        swap_logit = self.swap_mlp(pooled)  # [n, 1]
        logits = torch.cat([cell_logits, swap_logit.to(cell_logits.dtype)], dim=1)  # [n, A]
        values = torch.tanh(self.value_mlp(pooled)).squeeze(1)  # [n]

        if legal_mask is not None:
            if legal_mask.shape != logits.shape:
                raise ValueError(
                    f"legal_mask must have shape {tuple(logits.shape)} (n, A) for side {side}, "
                    f"got {tuple(legal_mask.shape)}"
                )
            logits = logits.masked_fill(~legal_mask.to(torch.bool), float("-inf"))
        owner = None
        if ownership:
            points = self.ownership_out(x).reshape(n, -1)  # [n, H * W]
            owner = torch.tanh(points.index_select(1, self.cell_index(side, planes.device)))
        return logits, values, owner

    def _check_planes(self, planes: torch.Tensor) -> int:
        """The board side of ``planes``, or a ValueError naming what is wrong with them."""
        if planes.ndim != 4:
            raise ValueError(f"planes must be [n, C, H, W], got shape {tuple(planes.shape)}")
        _, c, h, w = planes.shape
        if c != self.in_planes:
            raise ValueError(f"planes must have {self.in_planes} channels, got {c}")
        if h < 2 or w != 2 * h - 1:
            raise ValueError(
                f"planes must be on a grid H x (2H - 1) with H >= 2 (the board side), got {h} x {w}"
            )
        if not planes.is_floating_point():
            raise ValueError(f"planes must be floating point, got {planes.dtype}")
        return int(h)
