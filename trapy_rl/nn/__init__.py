"""The policy/value network and the evaluators that search calls on its leaves.

Shapes: n positions, C planes, H x W grid, A actions.
"""

from trapy_rl.nn.device import bf16_supported, resolve_device
from trapy_rl.nn.evaluator import Evaluator, UniformEvaluator
from trapy_rl.nn.layers import HexConv2d, MaskedBatchNorm2d
from trapy_rl.nn.network import PolicyValueNet

__all__ = [
    "Evaluator",
    "HexConv2d",
    "MaskedBatchNorm2d",
    "PolicyValueNet",
    "UniformEvaluator",
    "bf16_supported",
    "resolve_device",
]
