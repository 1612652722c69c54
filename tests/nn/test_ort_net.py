"""ONNX Runtime's run of the folded graph against the net's own eval-mode forward."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from nn_helpers import TWO_BLOCK_NET, eval_reference, random_positions, tiny_net, with_learned_norms

from trapy_rl.game.planes import encode_planes
from trapy_rl.nn import NetEvaluator, PolicyValueNet
from trapy_rl.nn.network import ON_BOARD_PLANE

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
from trapy_rl.nn.ort_net import OrtNet


def _planes(side: int, n: int, seed: int) -> torch.Tensor:
    """[n, C, H, W] planes of random positions, with garbage off the board (to be ignored)."""
    planes = torch.from_numpy(encode_planes(random_positions(side, n, seed=seed), np.arange(n)))
    off_board = 1 - planes[:, ON_BOARD_PLANE : ON_BOARD_PLANE + 1]
    garbage = torch.rand(planes.shape, generator=torch.Generator().manual_seed(seed)) * off_board
    garbage[:, ON_BOARD_PLANE] = 0
    return planes + garbage


def _assert_matches(ort: OrtNet, net: PolicyValueNet, planes: torch.Tensor) -> None:
    logits, values = ort(planes)
    expected_logits, expected_values = eval_reference(net, planes)
    torch.testing.assert_close(logits, expected_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(values, expected_values, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "config",
    [TWO_BLOCK_NET, dataclasses.replace(TWO_BLOCK_NET, blocks=0)],
    ids=["two_blocks", "no_blocks"],
)
@pytest.mark.parametrize("side", [2, 5, 10])
@pytest.mark.parametrize("learned", [True, False], ids=["learned_norms", "fresh"])
def test_ort_net_equals_the_eval_mode_net(config, side: int, learned: bool):
    # A fresh net has equal (zero) biases, which an exporter may merge into one initializer.
    torch.manual_seed(side)
    net = PolicyValueNet(config).train()
    if learned:
        with_learned_norms(net, seed=side)
    _assert_matches(OrtNet(net), net, _planes(side, 7, seed=side))
    assert net.training


def test_ort_net_follows_training_steps_and_loaded_weights_on_every_side():
    net = with_learned_norms(tiny_net(), seed=2).train()
    ort = OrtNet(net)
    small, large = _planes(5, 4, seed=1), _planes(10, 4, seed=2)
    before, _ = ort(large)
    _assert_matches(ort, net, small)
    session = ort._sessions[10][1]
    ort(large)
    assert ort._sessions[10][1] is session, "unchanged weights keep their session"

    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    logits, values = net(large)
    (logits[:, :-1].logsumexp(1).sum() + values.sum()).backward()
    optimizer.step()
    stepped, _ = ort(large)
    assert not torch.allclose(stepped, before)
    _assert_matches(ort, net, large)
    _assert_matches(ort, net, small)  # the other side's session is stale too

    other = with_learned_norms(tiny_net(seed=3), seed=3)
    net.load_state_dict(other.state_dict())
    _assert_matches(ort, other, large)


def test_the_evaluator_on_onnxruntime_agrees_with_the_folded_one():
    net = with_learned_norms(tiny_net(), seed=4).train()
    batch = random_positions(10, 9, seed=4)
    games = np.array([8, 1, 1, 5, 0])
    runtime = NetEvaluator(net, device="cpu", onnxruntime=True)
    assert isinstance(runtime.forward, OrtNet)
    logits, values = runtime(batch, games)
    expected_logits, expected_values = NetEvaluator(net, device="cpu")(batch, games)
    np.testing.assert_allclose(logits, expected_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values, expected_values, rtol=1e-5, atol=1e-5)
    assert np.isneginf(logits[~batch.legal_mask()[games]]).all()
    assert net.training


@pytest.mark.parametrize("options", [{"bf16": True}, {"compile": True}])
def test_the_evaluator_refuses_onnxruntime_with_what_it_cannot_run(options: dict):
    with pytest.raises(ValueError, match="onnxruntime runs the net on the CPU in fp32"):
        NetEvaluator(tiny_net(), device="cpu", onnxruntime=True, **options)


def test_values_stay_in_the_range_where_onnxruntimes_tanh_overshoots():
    """ONNX Runtime's CPU tanh gives 1.0000001 for inputs a little below 9; the search refuses
    a value beyond 1, so a run whose value head got that confident stopped (two did)."""
    net = tiny_net().eval()
    final = net.value_mlp[2]
    planes = _planes(5, 3, seed=5)
    with torch.no_grad():
        final.weight.zero_()
        for pre_activation in (8.99994, 8.9999, 8.9998, -8.99994, -8.9999):
            final.bias.fill_(pre_activation)
            _, values = OrtNet(net)(planes)
            assert (values.abs() <= 1.0).all(), (pre_activation, values)
            torch.testing.assert_close(values, torch.tanh(torch.tensor(pre_activation)).expand(3))
