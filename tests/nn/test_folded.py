"""The folded forward pass against the net's own eval-mode forward, the slow reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from nn_helpers import TWO_BLOCK_NET, random_positions, tiny_net

from trapy_rl.game.planes import encode_planes
from trapy_rl.nn import MaskedBatchNorm2d, NetConfig, NetEvaluator, PolicyValueNet
from trapy_rl.nn.folded import FoldedNet
from trapy_rl.nn.network import ON_BOARD_PLANE


def _with_learned_norms(net: PolicyValueNet, seed: int) -> PolicyValueNet:
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


def _reference(net: PolicyValueNet, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The net's forward in eval mode, its training flag restored after."""
    was_training = net.training
    net.eval()
    with torch.no_grad():
        logits, values = net(planes)
    net.train(was_training)
    return logits, values


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
    net = _with_learned_norms(PolicyValueNet(config), seed=side).train()
    batch = random_positions(side, 7, seed=side)
    planes = torch.from_numpy(encode_planes(batch, np.arange(7)))
    # Garbage off the board, in every plane but the on-board one, as the net must ignore it.
    off_board = 1 - planes[:, ON_BOARD_PLANE : ON_BOARD_PLANE + 1]
    garbage = torch.rand(planes.shape, generator=torch.Generator().manual_seed(side)) * off_board
    garbage[:, ON_BOARD_PLANE] = 0
    planes = planes + garbage
    expected_logits, expected_values = _reference(net, planes)
    with torch.inference_mode():
        logits, values = FoldedNet(net)(planes)
    torch.testing.assert_close(logits, expected_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(values, expected_values, rtol=1e-5, atol=1e-5)


def test_folding_leaves_the_net_alone():
    net = _with_learned_norms(tiny_net(), seed=1).train()
    state = {name: tensor.clone() for name, tensor in net.state_dict().items()}
    planes = torch.from_numpy(encode_planes(random_positions(5, 4, seed=1), np.arange(4)))
    with torch.inference_mode():
        FoldedNet(net)(planes)
    assert net.training
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, state[name]), name


def test_folded_weights_follow_training_steps_and_loaded_weights():
    net = _with_learned_norms(tiny_net(), seed=2).train()
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
    torch.testing.assert_close(stepped, _reference(net, planes)[0], rtol=1e-5, atol=1e-5)

    other = _with_learned_norms(tiny_net(seed=3), seed=3)
    net.load_state_dict(other.state_dict())
    with torch.inference_mode():
        loaded, _ = folded(planes)
    torch.testing.assert_close(loaded, _reference(other, planes)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("channels_last", [True, False])
def test_evaluator_folded_and_unfolded_agree(channels_last: bool):
    net = _with_learned_norms(tiny_net(), seed=4).train()
    batch = random_positions(10, 9, seed=4)
    games = np.array([8, 1, 1, 5, 0])
    folded = NetEvaluator(net, device="cpu", channels_last=channels_last)
    plain = NetEvaluator(net, device="cpu", channels_last=channels_last, fold=False)
    assert folded.folded is not None and plain.folded is None
    logits, values = folded(batch, games)
    expected_logits, expected_values = plain(batch, games)
    np.testing.assert_allclose(logits, expected_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values, expected_values, rtol=1e-5, atol=1e-5)
    assert net.training
