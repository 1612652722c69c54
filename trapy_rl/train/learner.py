"""The learner: gradient steps of the policy/value net on replayed self-play positions.

Shapes: n positions, C planes, H x W grid, K cells, A actions.

Loss = ``policy_weight`` * cross-entropy(visit distribution, softmax of the net's logits over
the legal actions) + ``value_weight`` * mean squared error(value, target). The value target is
the outcome z, or with ``value_q_share`` = s > 0 the mix (1 - s) z + s q of the outcome and the
search's root value q (`value_targets`), both for the player to move: a target of lower
variance. The policy term is the mean over the positions that have a policy target: a row of
zeros trains the value only. The legal actions
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
from trapy_rl.train.settings import OptimSettings

__all__ = ["Learner", "legal_mask_from_planes", "value_targets"]

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


def value_targets(samples: Samples, q_share: float) -> np.ndarray:
    """The value head's targets: [n] float32, ``(1 - q_share) z + q_share q`` of the outcomes
    z (``samples.values``) and the searches' root values q (``samples.root_values``); the
    outcomes themselves for ``q_share`` 0."""
    if q_share == 0:
        return samples.values
    mixed = (1.0 - q_share) * samples.values.astype(np.float64) + q_share * samples.root_values
    return mixed.astype(np.float32)


class Learner:
    """Owns the optimiser of a net and takes training steps.

    Args:
        net: the policy/value net, ``net(planes) -> (logits [n, A], values [n])``.
        board: the board the positions are on.
        settings: the optimiser (``adam``: AdamW-style decoupled weight decay; ``sgd``:
            Nesterov momentum), the peak learning rate and its schedule (``constant``, or
            ``cosine`` decay to 0 over the run, both after a linear warm-up of
            ``warmup_steps``), the loss weights, the value target (``value_q_share``) and
            gradient clipping (0: none).
        total_steps: the steps the cosine spans while ``progress`` is None.
        device: where the net trains.

    Attributes:
        step: gradient steps taken.
        progress: the share of the run behind it, in [0, 1], or None. The training loop sets
            it from its clock when the run is bounded by minutes: a run's length in steps is
            then unknown, and the cosine spans the clock instead of ``total_steps``.
    """

    def __init__(
        self,
        net: nn.Module,
        board: Board,
        *,
        settings: OptimSettings | None = None,
        total_steps: int = 0,
        device: torch.device | str = "cpu",
    ):
        settings = OptimSettings() if settings is None else settings
        if not isinstance(settings, OptimSettings):
            raise TypeError(f"settings must be an OptimSettings, got {type(settings).__name__}")
        self.net = net
        self.board = board
        self.settings = settings
        self.device = torch.device(device)
        self.total_steps = int(total_steps)
        params = list(net.parameters())
        lr, decay = settings.lr, settings.weight_decay
        if settings.name == "adam":
            self.optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=decay)
        else:
            self.optimizer = torch.optim.SGD(
                params, lr=lr, momentum=settings.momentum, weight_decay=decay, nesterov=True
            )
        self.step = 0
        self.progress: float | None = None

    def learning_rate(self, step: int | None = None) -> float:
        """The learning rate at ``step`` (default: the next step, at ``progress``)."""
        step = self.step if step is None else step
        base, warmup = self.settings.lr, self.settings.warmup_steps
        if step < warmup:
            return base * (step + 1) / warmup
        if self.settings.lr_schedule != "cosine":
            return base
        if self.progress is not None:
            progress = min(1.0, max(0.0, self.progress))
        elif self.total_steps > warmup:
            progress = min(1.0, (step - warmup) / (self.total_steps - warmup))
        else:
            return base
        return base * 0.5 * (1.0 + math.cos(math.pi * progress))

    def losses(self, samples: Samples) -> dict[str, torch.Tensor]:
        """The loss terms on ``samples`` as scalar tensors (with gradients).

        With ``ownership_weight`` > 0 (a net with an ownership head) the total adds that
        weight times the mean squared error of the predicted final stones, over the cells of
        the positions whose game was played to the end (``Samples.owned``).
        """
        planes = torch.as_tensor(samples.planes, device=self.device)
        target_policy = torch.as_tensor(samples.policies, device=self.device)
        targets = value_targets(samples, self.settings.value_q_share)
        target_value = torch.as_tensor(targets, device=self.device)
        owning = self.settings.ownership_weight > 0
        if owning:
            logits, values, ownership = self.net.forward_with_ownership(planes)
        else:
            logits, values = self.net(planes)
        legal = legal_mask_from_planes(planes, self.board)
        log_probs = torch.log_softmax(logits.float().masked_fill(~legal, _MASKED_LOGIT), dim=1)
        # Rows of zeros carry no policy target: the mean is over the others.
        targeted = (target_policy.sum(dim=1) > 0).float()
        policy = -(target_policy * log_probs).sum(dim=1).sum() / targeted.sum().clamp(min=1.0)
        value = torch.mean((values.float() - target_value) ** 2)
        probs = log_probs.exp()
        entropy = -(probs * log_probs).sum(dim=1).mean()
        total = self.settings.policy_weight * policy + self.settings.value_weight * value
        terms = {"policy": policy, "value": value}
        if owning:
            owned = torch.as_tensor(samples.owned, device=self.device).float()  # [n]
            target = torch.as_tensor(samples.ownership, device=self.device).float()  # [n, K]
            errors = ((ownership.float() - target) ** 2).mean(dim=1)  # [n]
            terms["ownership"] = (errors * owned).sum() / owned.sum().clamp(min=1.0)
            total = total + self.settings.ownership_weight * terms["ownership"]
        return {**terms, "total": total, "entropy": entropy.detach()}

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
        if self.settings.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.net.parameters(), self.settings.grad_clip)
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
