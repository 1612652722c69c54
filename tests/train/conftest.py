"""Small, fast training configurations for the tests."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.config import TrainConfig
from trapy_rl.game import BatchGame, Board, encode_planes
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.train.replay import Samples

TINY_NET = dict(channels=16, blocks=1, policy_channels=8, value_hidden=16, swap_hidden=8)


def tiny_config(run_dir, **changes) -> TrainConfig:
    """A run of three quick iterations on the side-4 board, output in ``run_dir``."""
    cfg = TrainConfig(side=4, iterations=3, run_dir=str(run_dir), model=dict(TINY_NET))
    cfg.mcts.num_simulations = 8
    cfg.selfplay.num_games = 8
    cfg.selfplay.moves_per_iteration = 10
    cfg.selfplay.num_workers = 0
    cfg.replay.min_size = 16
    cfg.replay.train_ratio = 1.0
    cfg.optim.batch_size = 16
    cfg.eval.every = 0
    cfg.eval.final_games = 0
    cfg.checkpoint.every = 1
    cfg.logger.progress = False
    for key, value in changes.items():
        target = cfg
        *parents, last = key.split(".")
        for part in parents:
            target = getattr(target, part)
        setattr(target, last, value)
    return cfg


@pytest.fixture
def make_config():
    return tiny_config


@pytest.fixture
def tiny_net() -> dict:
    return dict(TINY_NET)


def random_positions(board: Board, n: int, seed: int) -> tuple[BatchGame, np.ndarray]:
    """n games played at random for a random number of moves (none finished)."""
    rng = np.random.default_rng(seed)
    batch = BatchGame(n, board)
    plies = rng.integers(0, board.num_cells // 2, size=n)
    for ply in range(int(plies.max())):
        before = batch.copy()
        actions = random_legal_actions(batch.legal_mask(), rng)
        actions[plies <= ply] = 0
        frozen = batch.winner.copy()
        batch.winner[plies <= ply] = 1
        batch.step(actions)
        batch.winner[:] = np.where(plies <= ply, frozen, batch.winner)
        ended = batch.is_over & (plies > ply)
        if ended.any():  # undo a winning move: keep the games in play
            batch.assign(np.flatnonzero(ended), before.take(np.flatnonzero(ended)))
    return batch, rng


def make_samples(board: Board, n: int, seed: int) -> Samples:
    batch, rng = random_positions(board, n, seed)
    policies = rng.random((n, board.num_actions)).astype(np.float32) * batch.legal_mask()
    policies /= policies.sum(axis=1, keepdims=True)
    values = rng.choice([-1.0, 1.0], size=n).astype(np.float32)
    return Samples(encode_planes(batch), policies, values)


@pytest.fixture(name="random_positions")
def random_positions_fixture():
    return random_positions


@pytest.fixture(name="make_samples")
def make_samples_fixture():
    return make_samples
