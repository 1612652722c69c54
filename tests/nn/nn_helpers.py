"""Small nets and random positions shared by the network and evaluator tests."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from tiny import TINY_NET

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.nn import PolicyValueNet

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
