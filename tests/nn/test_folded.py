"""The folded forward pass against the net's own eval-mode forward, the slow reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from nn_helpers import TWO_BLOCK_NET, eval_reference, random_positions, tiny_net, with_learned_norms

from trapy_rl.game.planes import encode_planes
from trapy_rl.nn import NetConfig, NetEvaluator, PolicyValueNet
from trapy_rl.nn.folded import FoldedNet
from trapy_rl.nn.network import ON_BOARD_PLANE


@pytest.mark.parametrize(
    "config",
    [
        TWO_BLOCK_NET,
        dataclasses.replace(TWO_BLOCK_NET, blocks=0),
        dataclasses.replace(TWO_BLOCK_NET, channels=12, policy_channels=5, ownership_head=True),
    ],
    ids=["two_blocks", "no_blocks", "ownership_head"],
)
@pytest.mark.parametrize("side", [2, 5, 10])
def test_folded_forward_equals_the_eval_mode_net(config: NetConfig, side: int):
    torch.manual_seed(side)
    net = with_learned_norms(PolicyValueNet(config), seed=side).train()
    batch = random_positions(side, 7, seed=side)
    planes = torch.from_numpy(encode_planes(batch, np.arange(7)))
    # Garbage off the board, in every plane but the on-board one, as the net must ignore it.
    off_board = 1 - planes[:, ON_BOARD_PLANE : ON_BOARD_PLANE + 1]
    garbage = torch.rand(planes.shape, generator=torch.Generator().manual_seed(side)) * off_board
    garbage[:, ON_BOARD_PLANE] = 0
    planes = planes + garbage
    expected_logits, expected_values = eval_reference(net, planes)
    with torch.inference_mode():
        logits, values = FoldedNet(net)(planes)
    torch.testing.assert_close(logits, expected_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(values, expected_values, rtol=1e-5, atol=1e-5)


def test_folding_leaves_the_net_alone():
    net = with_learned_norms(tiny_net(), seed=1).train()
    state = {name: tensor.clone() for name, tensor in net.state_dict().items()}
    planes = torch.from_numpy(encode_planes(random_positions(5, 4, seed=1), np.arange(4)))
    with torch.inference_mode():
        FoldedNet(net)(planes)
    assert net.training
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, state[name]), name


def test_folded_weights_follow_training_steps_and_loaded_weights():
    net = with_learned_norms(tiny_net(), seed=2).train()
    folded = FoldedNet(net)
    planes = torch.from_numpy(encode_planes(random_positions(6, 5, seed=2), np.arange(5)))
    with torch.inference_mode():
        before, _ = folded(planes)

    # An optimizer step in training mode changes the weights and the running statistics.
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    logits, values = net(planes)
    (logits[:, :-1].logsumexp(1).sum() + values.sum()).backward()
    optimizer.step()
    with torch.inference_mode():
        stepped, _ = folded(planes)
    assert not torch.allclose(stepped, before)
    torch.testing.assert_close(stepped, eval_reference(net, planes)[0], rtol=1e-5, atol=1e-5)

    other = with_learned_norms(tiny_net(seed=3), seed=3)
    net.load_state_dict(other.state_dict())
    with torch.inference_mode():
        loaded, _ = folded(planes)
    torch.testing.assert_close(loaded, eval_reference(other, planes)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("channels_last", [True, False])
def test_evaluator_folded_and_unfolded_agree(channels_last: bool):
    net = with_learned_norms(tiny_net(), seed=4).train()
    batch = random_positions(10, 9, seed=4)
    games = np.array([8, 1, 1, 5, 0])
    folded = NetEvaluator(net, device="cpu", channels_last=channels_last)
    plain = NetEvaluator(net, device="cpu", channels_last=channels_last, fold=False)
    assert isinstance(folded.forward, FoldedNet) and not isinstance(plain.forward, FoldedNet)
    logits, values = folded(batch, games)
    expected_logits, expected_values = plain(batch, games)
    np.testing.assert_allclose(logits, expected_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values, expected_values, rtol=1e-5, atol=1e-5)
    assert net.training
