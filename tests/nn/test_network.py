"""PolicyValueNet: shapes on every side, masking, off-board invariance, presets, training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from nn_helpers import random_positions, tiny_net

from trapy_rl.config import CONFIG_DIR
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, PLANE_NAMES, encode_planes, mirror_planes
from trapy_rl.nn import NetConfig, PolicyValueNet

PRESETS = Path(CONFIG_DIR) / "model"
ON_BOARD = PLANE_NAMES.index("on_board")


def net_inputs(batch: BatchGame) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.from_numpy(encode_planes(batch)), torch.from_numpy(batch.legal_mask())


def test_same_weights_run_on_every_side_with_values_in_range():
    net = tiny_net().eval()
    with torch.no_grad():
        for side in range(2, 11):
            board = Board(side)
            planes, _ = net_inputs(random_positions(side, 4, seed=side))
            logits, values = net(planes)
            assert logits.shape == (4, board.num_actions)
            assert values.shape == (4,)
            assert torch.isfinite(logits).all()
            assert ((values >= -1) & (values <= 1)).all()


def test_train_mode_runs_on_the_smallest_board_with_one_position():
    logits, _ = tiny_net().train()(torch.from_numpy(encode_planes(BatchGame(1, side=2))))
    assert logits.shape == (1, Board(2).num_actions) and torch.isfinite(logits).all()


def test_legal_mask_sets_illegal_logits_to_minus_infinity():
    net = tiny_net().eval()
    planes, legal = net_inputs(random_positions(5, 16, seed=1))
    assert not legal.all()
    logits, _ = net(planes, legal)
    assert torch.isneginf(logits[~legal]).all()
    assert torch.isfinite(logits[legal]).all()
    unmasked, _ = net(planes)
    torch.testing.assert_close(logits[legal], unmasked[legal])


@pytest.mark.parametrize("training", [False, True])
def test_off_board_points_change_nothing(training):
    net = tiny_net()
    net.train(training)
    planes, _ = net_inputs(random_positions(6, 8, seed=2))
    off_board = planes[:, ON_BOARD : ON_BOARD + 1] == 0
    garbage = planes.clone()
    noise = torch.randn_like(planes) * 10.0
    noise[:, ON_BOARD] = 0.0  # the on-board plane defines the board: it stays as it is
    garbage = torch.where(off_board, noise, garbage)
    assert not torch.equal(garbage, planes)
    state = {k: v.clone() for k, v in net.state_dict().items()}
    with torch.no_grad():
        expected = net(planes)
        net.load_state_dict(state)  # the same running statistics for the second call
        got = net(garbage)
    torch.testing.assert_close(got[0], expected[0])
    torch.testing.assert_close(got[1], expected[1])


def test_a_position_alone_equals_it_in_a_batch():
    net = tiny_net().eval()
    planes, _ = net_inputs(random_positions(7, 6, seed=3))
    with torch.no_grad():
        logits, values = net(planes)
        for i in range(len(planes)):
            one_logits, one_value = net(planes[i : i + 1])
            torch.testing.assert_close(one_logits[0], logits[i], rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(one_value[0], values[i], rtol=1e-4, atol=1e-5)


def test_mirrored_planes_are_a_valid_input():
    board = Board(10)
    net = tiny_net().eval()
    planes = encode_planes(random_positions(10, 4, seed=4))
    mirrored = mirror_planes(planes, board)
    np.testing.assert_array_equal(mirrored[:, ON_BOARD], planes[:, ON_BOARD])
    with torch.no_grad():
        logits, values = net(torch.from_numpy(mirrored))
    assert logits.shape == (4, board.num_actions) and torch.isfinite(logits).all()
    assert ((values >= -1) & (values <= 1)).all()


def test_gradient_reaches_every_parameter_in_one_training_step():
    net = tiny_net().train()
    batch = random_positions(5, 12, seed=5)
    opening = BatchGame(1, side=5)
    opening.step([0])
    batch.assign([0], opening)  # the swap is legal in game 0, so its logit gets a gradient
    planes, legal = net_inputs(batch)
    generator = torch.Generator().manual_seed(0)
    target_policy = torch.rand(legal.shape, generator=generator) * legal
    target_policy /= target_policy.sum(1, keepdim=True)
    target_value = torch.rand(len(planes), generator=generator) * 2 - 1
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    before = [p.detach().clone() for p in net.parameters()]

    logits, values = net(planes, legal)
    log_policy = torch.log_softmax(logits, dim=1).masked_fill(~legal, 0.0)
    loss = -(target_policy * log_policy).sum(1).mean() + (values - target_value).square().mean()
    optimizer.zero_grad()
    loss.backward()
    for name, parameter in net.named_parameters():
        assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), name
        assert parameter.grad.abs().sum() > 0, name
    optimizer.step()
    for (name, parameter), old in zip(net.named_parameters(), before):
        assert not torch.equal(parameter, old), name


@pytest.mark.parametrize("preset", ["tiny", "small", "large"])
def test_presets_are_net_configs(preset):
    config = yaml.safe_load((PRESETS / f"{preset}.yaml").read_text())
    net = PolicyValueNet(NetConfig.from_dict(config))
    assert net.config.channels == config.get("channels", NetConfig().channels)  # only deltas
    if preset == "tiny":
        with torch.no_grad():
            logits, _ = net.eval()(torch.from_numpy(encode_planes(BatchGame(2, side=10))))
        assert logits.shape == (2, Board(10).num_actions)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"channels": 0}, "channels"),
        ({"blocks": -1}, "blocks"),
        ({"value_hidden": 2.5}, "value_hidden"),
        ({"channels": True}, "channels"),
    ],
)
def test_bad_net_configs_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NetConfig(**kwargs)


def test_a_net_beyond_the_size_cap_is_refused_before_anything_is_built():
    with pytest.raises(ValueError, match=r"model\.channels must be at most 1024, got 1000000"):
        NetConfig(channels=1_000_000, blocks=2)
    with pytest.raises(ValueError, match="unknown setting 'chanels'"):
        NetConfig.from_dict({"chanels": 8})


def test_bad_inputs_are_named():
    net = tiny_net().eval()
    with pytest.raises(ValueError, match="channels"):
        net(torch.zeros(1, NUM_PLANES - 1, 4, 7))
    with pytest.raises(ValueError, match="2H - 1"):
        net(torch.zeros(1, NUM_PLANES, 4, 8))
    with pytest.raises(ValueError, match=r"\[n, C, H, W\]"):
        net(torch.zeros(NUM_PLANES, 4, 7))
    planes = torch.from_numpy(encode_planes(BatchGame(2, side=4)))
    with pytest.raises(ValueError, match="legal_mask"):
        net(planes, torch.ones(2, Board(5).num_actions, dtype=torch.bool))


def test_the_ownership_head_predicts_every_cell_and_leaves_the_other_heads_alone():
    torch.manual_seed(0)
    net = PolicyValueNet(NetConfig(channels=8, blocks=1, ownership_head=True)).eval()
    planes = torch.from_numpy(encode_planes(BatchGame(3, side=4)))
    with torch.no_grad():
        logits, values, ownership = net.forward_with_ownership(planes)
        plain_logits, plain_values = net(planes)
    assert ownership.shape == (3, Board(4).num_cells) and ownership.abs().max() <= 1
    assert torch.equal(logits, plain_logits) and torch.equal(values, plain_values)
    with pytest.raises(ValueError, match="no ownership head"):
        PolicyValueNet(NetConfig(channels=8, blocks=1)).forward_with_ownership(planes)
