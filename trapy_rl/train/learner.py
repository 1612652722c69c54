"""The learner: gradient steps of the policy/value net on replayed self-play positions.

Shapes: n positions, C planes, H x W grid, K cells, A actions.

Loss = ``policy_weight`` * cross-entropy(visit distribution, softmax of the net's logits over
the legal actions) + ``value_weight`` * mean squared error(value, outcome z). The legal actions
are read off the planes themselves (an on-board point without a stone; the swap where the swap
plane is set), so mirrored planes bring their own mask.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from trapy_rl.game.board import Board
from trapy_rl.game.planes import PLANE_NAMES
from trapy_rl.train.replay import Samples

__all__ = ["LR_SCHEDULES", "OPTIMIZERS", "Learner", "legal_mask_from_planes"]

OPTIMIZERS = ("adam", "sgd")
LR_SCHEDULES = ("constant", "cosine")
_OWN, _OPPONENT = PLANE_NAMES.index("own"), PLANE_NAMES.index("opponent")
_ON_BOARD, _SWAP = PLANE_NAMES.index("on_board"), PLANE_NAMES.index("swap_allowed")
# A finite stand-in for -inf: 0 * -inf would make the cross-entropy NaN on illegal actions.
_MASKED_LOGIT = -1e9


def legal_mask_from_planes(planes: torch.Tensor, board: Board) -> torch.Tensor:
    """The legal actions of positions given as planes.

    Args:
        planes: [n, C, H, W] float, from `encode_planes` (possibly mirrored).

    Returns:
        [n, A] bool.
    """
    height, width = board.grid_shape
    flat = torch.as_tensor(
        board.grid_rows.astype(np.int64) * width + board.grid_cols.astype(np.int64),
        device=planes.device,
    )
    empty = planes[:, _ON_BOARD] - planes[:, _OWN] - planes[:, _OPPONENT]  # [n, H, W]
    cells = empty.reshape(len(planes), height * width).index_select(1, flat) > 0.5  # [n, K]
    swap = planes[:, _SWAP].amax(dim=(1, 2)) > 0.5  # [n]
    return torch.cat([cells, swap[:, None]], dim=1)


class Learner:
    """Owns the optimiser of a net and takes training steps.

    Args:
        net: the policy/value net, ``net(planes) -> (logits [n, A], values [n])``.
        board: the board the positions are on.
        optimizer: ``"adam"`` (AdamW-style decoupled weight decay) or ``"sgd"`` (momentum).
        lr: the peak learning rate.
        momentum: SGD momentum.
        weight_decay: L2 weight decay.
        lr_schedule: ``"constant"`` or ``"cosine"`` (decay to 0 over ``total_steps``), both
            after a linear warm-up of ``warmup_steps``.
        total_steps: the steps the schedule spans (cosine only).
        policy_weight, value_weight: the loss weights.
        grad_clip: the largest gradient norm, 0 for no clipping.
        device: where the net trains.

    Attributes:
        step: gradient steps taken.
    """

    def __init__(
        self,
        net: nn.Module,
        board: Board,
        *,
        optimizer: str = "adam",
        lr: float = 1e-3,
        momentum: float = 0.9,
        weight_decay: float = 1e-4,
        lr_schedule: str = "constant",
        warmup_steps: int = 0,
        total_steps: int = 0,
        policy_weight: float = 1.0,
        value_weight: float = 1.0,
        grad_clip: float = 0.0,
        device: torch.device | str = "cpu",
    ):
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
        if lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {lr_schedule!r}")
        if lr <= 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        self.net = net
        self.board = board
        self.device = torch.device(device)
        self.base_lr = float(lr)
        self.lr_schedule = lr_schedule
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        self.policy_weight = float(policy_weight)
        self.value_weight = float(value_weight)
        self.grad_clip = float(grad_clip)
        params = list(net.parameters())
        if optimizer == "adam":
            self.optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
        else:
            self.optimizer = torch.optim.SGD(
                params, lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=True
            )
        self.step = 0

    def learning_rate(self, step: int | None = None) -> float:
        """The learning rate at ``step`` (default: the next step)."""
        step = self.step if step is None else step
        if step < self.warmup_steps:
            return self.base_lr * (step + 1) / self.warmup_steps
        if self.lr_schedule == "cosine" and self.total_steps > self.warmup_steps:
            progress = min(1.0, (step - self.warmup_steps) / (self.total_steps - self.warmup_steps))
            return self.base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))
        return self.base_lr

    def losses(self, samples: Samples) -> dict[str, torch.Tensor]:
        """The loss terms on ``samples`` as scalar tensors (with gradients)."""
        planes = torch.as_tensor(samples.planes, device=self.device)
        target_policy = torch.as_tensor(samples.policies, device=self.device)
        target_value = torch.as_tensor(samples.values, device=self.device)
        logits, values = self.net(planes)
        legal = legal_mask_from_planes(planes, self.board)
        log_probs = torch.log_softmax(logits.float().masked_fill(~legal, _MASKED_LOGIT), dim=1)
        policy = -(target_policy * log_probs).sum(dim=1).mean()
        value = torch.mean((values.float() - target_value) ** 2)
        probs = log_probs.exp()
        entropy = -(probs * log_probs).sum(dim=1).mean()
        total = self.policy_weight * policy + self.value_weight * value
        return {"policy": policy, "value": value, "total": total, "entropy": entropy.detach()}

    def train_step(self, samples: Samples) -> dict[str, float]:
        """One gradient step on ``samples``.

        Returns:
            ``policy``, ``value``, ``total`` (the losses), ``entropy`` (of the net's policy, in
            nats) and ``lr`` (the learning rate used).
        """
        lr = self.learning_rate()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.net.train()
        terms = self.losses(samples)
        self.optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        if self.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.net.parameters(), self.grad_clip)
        self.optimizer.step()
        self.step += 1
        report = {name: float(value.detach()) for name, value in terms.items()}
        report["lr"] = lr
        return report

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        return {"optimizer": self.optimizer.state_dict(), "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
