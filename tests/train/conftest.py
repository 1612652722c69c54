"""Small, fast training configurations for the tests."""

from __future__ import annotations

import numpy as np
import pytest
from tiny import TINY_NET

from trapy_rl.game import BatchGame, Board, encode_planes
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.train.replay import Samples
from trapy_rl.train.settings import TrainConfig

TINY_RUN = {
    "mcts.num_simulations": 8,
    "selfplay.num_games": 8,
    "selfplay.moves_per_iteration": 10,
    "selfplay.num_workers": 0,
    "replay.min_size": 16,
    "replay.train_ratio": 1.0,
    "optim.batch_size": 16,
    "eval.every": 0,
    "eval.final_games": 0,
    "checkpoint.every": 1,
    "logger.progress": False,
}


def tiny_config(run_dir, **changes) -> TrainConfig:
    """A run of three quick iterations on the side-4 board, output in ``run_dir``; ``changes``
    by dotted name (``**{"selfplay.num_workers": 2}``) or top-level keyword."""
    base = TrainConfig(side=4, iterations=3, run_dir=str(run_dir), model=TINY_NET)
    return base.replace({**TINY_RUN, **changes})


@pytest.fixture
def make_config():
    return tiny_config


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
