"""``NetEvaluator(onnxruntime="auto")``: ONNX Runtime wherever it can run, torch elsewhere."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from trapy_rl.game import BatchGame, Board
from trapy_rl.nn import NetConfig, NetEvaluator, PolicyValueNet
from trapy_rl.nn import evaluator as evaluator_module
from trapy_rl.nn.folded import FoldedNet
from trapy_rl.nn.ort_net import OrtNet

pytest.importorskip("onnxruntime")  # the [onnx] extra


def small_net() -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet(NetConfig(channels=8, blocks=1))


def test_auto_picks_onnxruntime_on_the_cpu_in_fp32_and_agrees_with_torch():
    net = small_net()
    auto = NetEvaluator(net, device="cpu", onnxruntime="auto")
    assert isinstance(auto.forward, OrtNet)
    batch = BatchGame(5, Board(4))
    batch.step(np.array([0, 3, 5, 7, 9]))
    games = np.arange(5)
    logits, values = auto(batch, games)
    torch_logits, torch_values = NetEvaluator(net, device="cpu")(batch, games)
    np.testing.assert_allclose(logits, torch_logits, atol=1e-5)
    np.testing.assert_allclose(values, torch_values, atol=1e-5)


@pytest.mark.parametrize("native_bf16", [False, True])
def test_auto_keeps_torch_where_onnxruntime_cannot_run(monkeypatch, native_bf16):
    # The CPU's bf16 flags decide the warning, so both kinds of CPU are simulated.
    monkeypatch.setattr(evaluator_module, "bf16_supported", lambda device: native_bf16)
    net = small_net()
    assert not isinstance(
        NetEvaluator(net, device="cpu", fold=False, onnxruntime="auto").forward, OrtNet
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forced = NetEvaluator(net, device="cpu", bf16=True, onnxruntime="auto")
    emulated = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(emulated) == (0 if native_bf16 else 1)  # warned only where bf16 is emulated
    assert isinstance(forced.forward, FoldedNet)
    assert isinstance(NetEvaluator(net, device="cpu").forward, FoldedNet)  # the default: torch
    with pytest.raises(ValueError, match="onnxruntime must be"):
        NetEvaluator(net, device="cpu", onnxruntime="yes")
