"""Evaluators: the uniform prior, and the net's evaluator against the net's own forward."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from nn_helpers import random_positions, tiny_net

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.planes import encode_planes
from trapy_rl.nn import NetConfig, NetEvaluator, PolicyValueNet, UniformEvaluator, bf16_supported


def test_uniform_evaluator_gives_zero_on_legal_actions_and_zero_values():
    batch = random_positions(4, 8, seed=0)
    batch.resign([0])  # a finished game: no legal action
    games = np.array([5, 0, 2])
    logits, values = UniformEvaluator()(batch, games)
    legal = batch.legal_mask()[games]
    assert logits.shape == (3, Board(4).num_actions) and logits.dtype == np.float32
    assert values.shape == (3,) and values.dtype == np.float32
    assert np.all(logits[legal] == 0) and np.all(np.isneginf(logits[~legal]))
    assert np.all(np.isneginf(logits[1])) and np.all(values == 0)


def test_evaluator_matches_the_net_forward():
    net = tiny_net()
    batch = random_positions(6, 10, seed=1)
    games = np.array([7, 2, 2, 9])
    logits, values = NetEvaluator(net, device="cpu")(batch, games)
    assert logits.dtype == np.float32 and values.dtype == np.float32
    net.eval()
    with torch.no_grad():
        expected_logits, expected_values = net(
            torch.from_numpy(encode_planes(batch, games)),
            torch.from_numpy(batch.legal_mask()[games]),
        )
    np.testing.assert_allclose(logits, expected_logits.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values, expected_values.numpy(), rtol=1e-5, atol=1e-6)
    legal = batch.legal_mask()[games]
    assert np.all(np.isneginf(logits[~legal])) and np.all(np.isfinite(logits[legal]))


def test_evaluator_sees_current_weights_and_restores_the_training_flag():
    net = tiny_net().train()
    evaluator = NetEvaluator(net, device="cpu")
    batch = random_positions(4, 3, seed=2)
    first, _ = evaluator(batch, np.arange(3))
    assert net.training
    with torch.no_grad():
        net.swap_mlp[-1].bias.add_(1.0)
        net.policy_out.bias.add_(1.0)
    second, _ = evaluator(batch, np.arange(3))
    legal = batch.legal_mask()
    np.testing.assert_allclose(second[legal], first[legal] + 1.0, rtol=1e-5, atol=1e-5)


def test_evaluate_planes_with_no_positions():
    board = Board(5)
    evaluator = NetEvaluator(tiny_net(), device="cpu")
    planes = np.zeros((0, 9, *board.grid_shape), dtype=np.float32)
    logits, values = evaluator.evaluate_planes(planes, np.zeros((0, board.num_actions), bool))
    assert logits.shape == (0, board.num_actions) and values.shape == (0,)


def test_evaluate_planes_rejects_mismatched_inputs():
    evaluator = NetEvaluator(tiny_net(), device="cpu")
    planes = encode_planes(BatchGame(3, side=4))
    with pytest.raises(ValueError, match="agree on n"):
        evaluator.evaluate_planes(planes, np.ones((2, Board(4).num_actions), bool))
    with pytest.raises(ValueError, match="bool"):
        evaluator.evaluate_planes(planes, np.ones((3, Board(4).num_actions)))


def test_bf16_path_runs_and_is_close_to_fp32():
    net = tiny_net()
    batch = random_positions(10, 6, seed=3)
    games = np.arange(6)
    fp32_logits, fp32_values = NetEvaluator(net, device="cpu")(batch, games)
    with pytest.warns(RuntimeWarning) if not bf16_supported("cpu") else _nothing():
        evaluator = NetEvaluator(net, device="cpu", bf16=True)
    assert evaluator.autocast_dtype == torch.bfloat16
    logits, values = evaluator(batch, games)
    assert logits.dtype == np.float32
    legal = batch.legal_mask()
    assert np.all(np.isneginf(logits[~legal]))
    np.testing.assert_allclose(logits[legal], fp32_logits[legal], atol=0.1, rtol=0.05)
    np.testing.assert_allclose(values, fp32_values, atol=0.05)


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def test_bf16_auto_follows_the_support_rule():
    evaluator = NetEvaluator(tiny_net(), device="cpu", bf16="auto")
    expected = torch.bfloat16 if bf16_supported("cpu") else None
    assert evaluator.autocast_dtype == expected


def test_bad_options_are_named():
    net = tiny_net()
    with pytest.raises(ValueError, match="device"):
        NetEvaluator(net, device="tpu")
    with pytest.raises(ValueError, match="fp16"):
        NetEvaluator(net, device="cpu", fp16=True)
    with pytest.raises(ValueError, match="exclusive"):
        NetEvaluator(net, device="cpu", bf16=True, fp16=True)
    with pytest.raises(ValueError, match="bf16"):
        NetEvaluator(net, device="cpu", bf16="yes")
    with pytest.raises(TypeError, match="torch module"):
        NetEvaluator(object(), device="cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            NetEvaluator(net, device="cuda")


def test_auto_device_is_cuda_exactly_when_available():
    evaluator = NetEvaluator(tiny_net(), device="auto")
    assert evaluator.device.type == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_cuda_matches_cpu(precision):
    net = PolicyValueNet(NetConfig(channels=32, blocks=3))
    batch = random_positions(10, 32, seed=4)
    games = np.arange(32)
    cpu_logits, cpu_values = NetEvaluator(net, device="cpu")(batch, games)
    evaluator = NetEvaluator(net, device="cuda", fp16=precision == "fp16", bf16=precision == "bf16")
    logits, values = evaluator(batch, games)
    legal = batch.legal_mask()
    assert np.all(np.isneginf(logits[~legal]))
    tolerance = 1e-3 if precision == "fp32" else 0.1
    np.testing.assert_allclose(logits[legal], cpu_logits[legal], atol=tolerance, rtol=0.05)
    np.testing.assert_allclose(values, cpu_values, atol=tolerance)


def test_channels_last_gives_the_same_answers():
    batch = random_positions(8, 5, seed=6)
    games = np.arange(5)
    logits, values = NetEvaluator(tiny_net(), device="cpu", channels_last=False)(batch, games)
    other_logits, other_values = NetEvaluator(tiny_net(), device="cpu", channels_last=True)(
        batch, games
    )
    np.testing.assert_allclose(other_logits, logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(other_values, values, rtol=1e-5, atol=1e-5)


def test_training_after_a_first_call_under_inference_mode():
    """The net's per-board caches made inside the evaluator must serve a training step too."""
    net = tiny_net()
    batch = BatchGame(4, Board(4))
    NetEvaluator(net, device="cpu")(batch, np.arange(4))  # the first use: under inference mode
    net.train()
    planes = torch.from_numpy(encode_planes(batch))
    logits, values = net(planes, torch.from_numpy(batch.legal_mask()))
    (logits[:, :-1].logsumexp(dim=1).sum() + values.sum()).backward()
    assert all(p.grad is not None for p in net.parameters() if p.requires_grad)


def test_a_compiled_net_gives_the_eager_answers_at_changing_batch_sizes(one_torch_thread):
    net = tiny_net()
    eager = NetEvaluator(net, device="cpu")
    compiled = NetEvaluator(net, device="cpu", compile=True)
    for n, seed in ((5, 1), (9, 2), (3, 3)):  # sizes change: one dynamic graph serves them
        batch = random_positions(8, n, seed=seed)
        games = np.arange(n)
        logits, values = compiled(batch, games)
        expected_logits, expected_values = eager(batch, games)
        legal = batch.legal_mask()
        np.testing.assert_array_equal(np.isneginf(logits), ~legal)
        np.testing.assert_allclose(logits[legal], expected_logits[legal], atol=1e-4, rtol=0)
        np.testing.assert_allclose(values, expected_values, atol=1e-4, rtol=0)
