"""What a run holds in memory is counted from its checked settings before anything exists, and
the count is held to the arrays the pieces then allocate (fast arithmetic against the real
objects)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny import TINY_NET

from trapy_rl.config import compose_settings
from trapy_rl.game.board import Board
from trapy_rl.mcts import MCTS
from trapy_rl.nn.network import NetConfig, PolicyValueNet
from trapy_rl.train.replay import ReplayBuffer
from trapy_rl.train.selfplay import SelfPlay
from trapy_rl.train.settings import TrainConfig


def uniform(batch, games):
    """An evaluator that is never called: the pieces are built, not run."""
    raise AssertionError("not evaluated")


@pytest.mark.parametrize(
    "config",
    [NetConfig(), TINY_NET, NetConfig(channels=7, blocks=3, ownership_head=True, in_planes=12),
     NetConfig(channels=128, blocks=10, policy_channels=64, value_hidden=256, swap_hidden=64)],
)  # fmt: skip
def test_the_weights_counted_from_the_widths_are_the_nets(config):
    with torch.device("meta"):
        built = sum(t.numel() for t in PolicyValueNet(config).state_dict().values())
    assert config.num_weights() == built


def test_a_net_past_the_weight_limit_is_refused_naming_its_size():
    with pytest.raises(ValueError, match=r"1024 channels x 64 blocks make 1,208,800,741 weights"):
        NetConfig(channels=1024, blocks=64)
    assert NetConfig(channels=1024, blocks=3).num_weights() < 64 * 2**20


@pytest.mark.parametrize("side", [3, 6])
def test_the_counted_memory_is_what_replay_and_self_play_allocate(side):
    cfg = TrainConfig(side=side, model=TINY_NET).replace(
        {"selfplay.num_games": 5, "mcts.num_simulations": 7, "replay.capacity": 300,
         "replay.min_size": 128, "curriculum.sides": [], "curriculum.until_minutes": []}
    )  # fmt: skip
    memory = cfg.memory()
    board = Board(side)
    replay = ReplayBuffer(board, cfg.replay.capacity)
    arrays = [a for a in vars(replay).values() if isinstance(a, np.ndarray)]
    assert memory["replay.capacity"] == sum(a.nbytes for a in arrays)
    selfplay = SelfPlay(uniform, board, search=cfg.mcts, settings=cfg.selfplay)
    tree = MCTS(uniform, board, num_games=5, settings=cfg.mcts).tree
    history = ("_planes", "_policies", "_root_values", "_players")
    games = sum(getattr(selfplay, name).nbytes for name in history)
    trees = sum(getattr(tree, name).nbytes for name in (*tree._NODE_FIELDS, *tree._EDGE_FIELDS))
    assert memory["selfplay.num_games"] == games + trees
    weights = sum(t.numel() for t in PolicyValueNet(cfg.model).state_dict().values())
    assert memory["model"] == 4 * weights * 5  # weights, gradients, two Adam moments, folded


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["replay.capacity=10000000"], r"the run would hold about 8\.\d\d GiB \(model 0 MiB, "
         r"replay\.capacity 8\.87 GiB, .*above memory_gb=2: lower the largest"),
        (["replay.growth=0.4", "replay.max_capacity=10000000"],
         r"replay\.max_capacity 8\.87 GiB"),  # a growing window: the most it holds
        (["side=40"], r"selfplay\.num_games 8\.\d\d GiB"),
        (["mcts.num_simulations=100000"], r"selfplay\.num_games 1\d\.\d\d GiB"),
        (["model.channels=1024", "model.blocks=3"], r"model 1\.\d\d GiB"),
        (["optim.batch_size=8192", "replay.min_size=8192", "model=large"],
         r"optim\.batch_size \d+\.\d\d GiB"),
    ],
)  # fmt: skip
def test_a_run_past_its_memory_limit_is_refused_naming_the_parts(overrides, message):
    with pytest.raises(ValueError, match=message):
        compose_settings("train", TrainConfig, overrides)


def test_the_shipped_recipes_fit_the_default_limit():
    recipes = ([], ["experiment=trapy", "device=cuda"], ["experiment=trapy_cpu"],
               ["experiment=side10"], ["debug=smoke"])  # fmt: skip
    for recipe in recipes:
        cfg = compose_settings("train", TrainConfig, recipe)
        assert sum(cfg.memory().values()) < cfg.memory_gb * 2**30, recipe
    big = compose_settings("train", TrainConfig, ["replay.capacity=10000000", "memory_gb=16"])
    assert big.replay.capacity == 10_000_000 and np.isclose(big.memory_gb, 16)
