"""The policy/value network and the evaluators that search calls on its leaves.

Shapes: n positions, C planes, H x W grid, A actions.

>>> import numpy as np
>>> from trapy_rl.game import BatchGame
>>> from trapy_rl.nn import NetConfig, NetEvaluator, PolicyValueNet
>>> evaluator = NetEvaluator(PolicyValueNet(NetConfig(channels=16, blocks=2)), device="cpu")
>>> batch = BatchGame(3, side=5)
>>> logits, values = evaluator(batch, np.arange(3))  # [n, A] float32, -inf illegal; [n]
>>> logits.shape, values.shape, bool(np.isneginf(logits[:, batch.board.swap_action]).all())
((3, 36), (3,), True)

Threads are the caller's choice: nothing here calls ``torch.set_num_threads``. On a small CPU
shared by several processes, one thread each (``torch.set_num_threads(1)``) is the fast setting.

The names below are imported when first used: `trapy_rl.nn.onnx` and `trapy_rl.nn.digest` run
without torch (an ONNX agent searches where torch is not installed), and importing them
imports this package first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trapy_rl.nn.device import bf16_supported, resolve_device
    from trapy_rl.nn.evaluator import NetEvaluator, UniformEvaluator
    from trapy_rl.nn.layers import HexConv2d, MaskedBatchNorm2d
    from trapy_rl.nn.network import NetConfig, PolicyValueNet

_HOMES = {
    "HexConv2d": "layers",
    "MaskedBatchNorm2d": "layers",
    "NetConfig": "network",
    "NetEvaluator": "evaluator",
    "PolicyValueNet": "network",
    "UniformEvaluator": "evaluator",
    "bf16_supported": "device",
    "resolve_device": "device",
}

__all__ = [
    "HexConv2d",
    "MaskedBatchNorm2d",
    "NetConfig",
    "NetEvaluator",
    "PolicyValueNet",
    "UniformEvaluator",
    "bf16_supported",
    "resolve_device",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'trapy_rl.nn' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"trapy_rl.nn.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
