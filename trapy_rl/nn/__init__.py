"""The policy/value network and the evaluators that search calls on its leaves."""

from trapy_rl.nn.evaluator import UniformEvaluator

__all__ = ["UniformEvaluator"]
