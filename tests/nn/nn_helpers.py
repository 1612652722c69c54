"""Small nets and random positions shared by the network and evaluator tests."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from tiny import TINY_NET

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.nn import MaskedBatchNorm2d, PolicyValueNet

# Two residual blocks, so that what passes from one block to the next is tested too.
TWO_BLOCK_NET = dataclasses.replace(TINY_NET, blocks=2)


def tiny_net(seed: int = 0) -> PolicyValueNet:
    """A freshly initialised `TWO_BLOCK_NET`, seeded by ``seed``."""
    torch.manual_seed(seed)
    return PolicyValueNet(TWO_BLOCK_NET)


def random_positions(side: int, n: int, seed: int = 0) -> BatchGame:
    """n games of random lengths (0 to about half the board) played by random legal moves."""
    rng = np.random.default_rng(seed)
    batch = BatchGame(n, side=side)
    lengths = rng.integers(0, Board(side).num_cells // 2 + 1, size=n)
    for ply in range(int(lengths.max())):
        actions = random_legal_actions(batch.legal_mask(), rng)
        playing = (ply < lengths) & ~batch.is_over
        batch.step(actions, games=playing)  # the games that reached their length stay still
    return batch


def with_learned_norms(net: PolicyValueNet, seed: int) -> PolicyValueNet:
    """``net`` with batch-norm statistics and affine weights far from their initial 0/1, so
    that a fold that dropped or misplaced any of them would show."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, MaskedBatchNorm2d):
                shape = module.running_mean.shape
                module.running_mean.copy_(torch.randn(shape, generator=generator) * 0.5)
                module.running_var.copy_(torch.rand(shape, generator=generator) * 2 + 0.2)
                module.weight.copy_(torch.rand(shape, generator=generator) + 0.5)
                module.bias.copy_(torch.randn(shape, generator=generator) * 0.3)
    return net


def eval_reference(net: PolicyValueNet, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The net's forward in eval mode, its training flag restored after."""
    was_training = net.training
    net.eval()
    with torch.no_grad():
        logits, values = net(planes)
    net.train(was_training)
    return logits, values
