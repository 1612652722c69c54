"""Small, fast training configurations for the tests."""

from __future__ import annotations

import pytest

from trapy_rl.config import TrainConfig

TINY_NET = dict(channels=16, blocks=1, policy_channels=8, value_hidden=16, swap_hidden=8)


def tiny_config(run_dir, **changes) -> TrainConfig:
    """A run of three quick iterations on the side-4 board, output in ``run_dir``."""
    cfg = TrainConfig(side=4, iterations=3, run_dir=str(run_dir), model=dict(TINY_NET))
    cfg.mcts.num_simulations = 8
    cfg.selfplay.num_games = 8
    cfg.selfplay.moves_per_iteration = 10
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
