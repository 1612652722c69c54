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
"""

from trapy_rl.nn.device import bf16_supported, resolve_device
from trapy_rl.nn.evaluator import NetEvaluator, UniformEvaluator
from trapy_rl.nn.layers import HexConv2d, MaskedBatchNorm2d
from trapy_rl.nn.network import NetConfig, PolicyValueNet

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
