"""Evaluators: the function search calls on the leaves, ``(batch, games) -> (logits, values)``.

Shapes: B games in the batch, n evaluated games, C planes, H x W grid, A actions.

An evaluator is called as ``evaluator(batch, games)`` with ``games`` [n] int indices into
``batch`` and returns ``(logits [n, A] float32, values [n] float32)``, numpy arrays: prior
logits with illegal actions at ``-inf`` (a finished game has every action at ``-inf``) and the
value of each position in [-1, 1] for the player to move.
"""

from __future__ import annotations

import contextlib
import importlib.util
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import torch

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.planes import encode_planes
from trapy_rl.nn.device import bf16_supported, resolve_device
from trapy_rl.nn.folded import FoldedNet
from trapy_rl.nn.network import PolicyValueNet
from trapy_rl.nn.ort_net import OrtNet

__all__ = ["NetEvaluator", "UniformEvaluator"]


def _onnxruntime_installed() -> bool:
    """Whether the ``[onnx]`` extra (onnx and onnxruntime) can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


class UniformEvaluator:
    """Zero logits on the legal actions (a uniform prior) and a zero value everywhere."""

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``games`` [n] int of ``batch``.

        Returns:
            logits [n, A] float32 (0 legal, -inf illegal), values [n] float32 (all 0).
        """
        games = np.asarray(games, dtype=np.intp)
        legal = batch.legal_mask()[games]
        logits = np.where(legal, np.float32(0.0), np.float32(-np.inf)).astype(np.float32)
        values = np.zeros(len(games), dtype=np.float32)
        return logits, values


class NetEvaluator:
    """A `PolicyValueNet` wrapped for search: batched, in inference mode, on a chosen device.

    The evaluator holds the net itself, not a copy, so it always sees the current weights. It
    moves the net to ``device`` and memory format when constructed, in place as `nn.Module.to`
    does, and runs it as in eval mode: through `FoldedNet` (batch norm folded into the
    convolutions when the weights change), through ONNX Runtime (`OrtNet`, the same folded
    graph), or with ``fold=False`` by switching the net to eval
    mode for the call and restoring its training flag after it.

    Args:
        net: the network.
        device: ``"auto"`` (cuda when available, else cpu), ``"cpu"`` or ``"cuda[:i]"``.
        bf16: run under bf16 autocast. ``"auto"`` uses it where `bf16_supported` says it is
            fast (CUDA from Ampere on; CPUs with avx512_bf16 or AMX). ``True`` forces it, with a
            warning on a CPU without native bf16, where it is slower than fp32.
        fp16: run under fp16 autocast (CUDA only).
        channels_last: store the net's weights and feed its input in the channels-last memory
            format, which oneDNN and cuDNN run faster (about 10% on an AVX2 CPU).
        compile: run the forward pass through ``torch.compile`` (dynamic batch sizes; the
            first calls compile, seconds to a minute). The compiled function shares the net's
            weights, so training updates reach it. Outputs equal eager within 1e-4.
        fold: run the folded forward pass (`FoldedNet`; outputs equal the net's eval mode
            within float rounding; side-10 self-play with the tiny net is 1.2x faster).
            Ignored with ``compile``, which traces the net itself.
        onnxruntime: run the folded forward pass with ONNX Runtime (`OrtNet`: CPU, fp32, the
            ``[onnx]`` extra; its sessions take the new weights when they change, in
            milliseconds). Outputs equal the net's eval mode within 1e-5; side-10 self-play
            with the tiny net is faster again (BENCHMARKS.md). ``"auto"`` uses it wherever it
            can run (the extra installed, the CPU, fp32, ``fold`` and no ``compile``): on one
            CPU thread it evaluates the tiny net 1.5-2x faster than the folded torch pass at
            the batches of 1 to 64 that one game's search sends (`benchmarks.onegame`);
            agents load their nets so.

    Attributes:
        device: the resolved torch device.
        autocast_dtype: torch.bfloat16, torch.float16 or None (fp32).
    """

    def __init__(
        self,
        net: PolicyValueNet,
        *,
        device: torch.device | str = "auto",
        bf16: bool | str = False,
        fp16: bool = False,
        channels_last: bool = True,
        compile: bool = False,
        fold: bool = True,
        onnxruntime: bool | str = False,
    ):
        if not isinstance(net, torch.nn.Module):
            raise TypeError(f"net must be a torch module, got {type(net).__name__}")
        self.device = resolve_device(device)
        if onnxruntime not in (True, False, "auto"):
            raise ValueError(f"onnxruntime must be True, False or 'auto', got {onnxruntime!r}")
        if bf16 == "auto":
            bf16 = not fp16 and onnxruntime is not True and bf16_supported(self.device)
        elif not isinstance(bf16, bool):
            raise ValueError(f"bf16 must be True, False or 'auto', got {bf16!r}")
        if onnxruntime == "auto":
            onnxruntime = (
                self.device.type == "cpu"
                and not (bf16 or fp16 or compile)
                and fold
                and _onnxruntime_installed()
            )
        if bf16 and fp16:
            raise ValueError("bf16 and fp16 are exclusive: choose one")
        if onnxruntime and (self.device.type != "cpu" or bf16 or fp16 or compile):
            raise ValueError("onnxruntime runs the net on the CPU in fp32, without compile")
        if fp16 and self.device.type != "cuda":
            raise ValueError(f"fp16 autocast needs a CUDA device, got {self.device}")
        if bf16 and self.device.type == "cpu" and not bf16_supported(self.device):
            warnings.warn(
                "bf16 on a CPU without avx512_bf16/AMX is emulated and slower than fp32",
                RuntimeWarning,
                stacklevel=2,
            )
        self.autocast_dtype = torch.bfloat16 if bf16 else torch.float16 if fp16 else None
        # ONNX Runtime takes contiguous arrays: channels-last would only add a copy.
        channels_last = channels_last and not onnxruntime
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self.net = net.to(self.device, memory_format=self.memory_format)
        # planes [n, C, H, W] -> (logits [n, A], values [n]), as the net's eval-mode forward.
        self.forward: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
        if compile:
            # The net's cell index is a cache lookup by numpy board code: not traced.
            self.net.cell_index = torch.compiler.disable(self.net.cell_index)
            self.forward = torch.compile(self.net, dynamic=True)
        elif onnxruntime:
            self.forward = OrtNet(self.net)
        elif fold:
            self.forward = FoldedNet(self.net, memory_format=self.memory_format)
        else:
            self.forward = self.net
        # The net's own forward reads its training flag; the folded paths are eval mode.
        self._switch_mode = not isinstance(self.forward, FoldedNet | OrtNet)

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``games`` [n] int of ``batch``.

        Returns:
            logits [n, A] float32 (illegal -inf), values [n] float32 in [-1, 1].
        """
        games = np.asarray(games, dtype=np.intp)
        return self.evaluate_planes(encode_planes(batch, games), batch.legal_mask()[games])

    def evaluate_planes(
        self, planes: np.ndarray | torch.Tensor, legal_mask: np.ndarray | torch.Tensor
    ) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate positions given as planes.

        Args:
            planes: [n, C, H, W] float32, as `encode_planes` makes them.
            legal_mask: [n, A] bool.

        Returns:
            logits [n, A] float32 (illegal -inf), values [n] float32 in [-1, 1].
        """
        planes = torch.as_tensor(planes)
        legal = torch.as_tensor(legal_mask)
        if legal.dtype != torch.bool:
            raise ValueError(f"legal_mask must be bool, got {legal.dtype}")
        if planes.ndim != 4 or legal.ndim != 2 or legal.shape[0] != planes.shape[0]:
            raise ValueError(
                f"planes [n, C, H, W] and legal_mask [n, A] must agree on n, got shapes "
                f"{tuple(planes.shape)} and {tuple(legal.shape)}"
            )
        n = planes.shape[0]
        if n == 0:
            return np.zeros(legal.shape, dtype=np.float32), np.zeros(0, dtype=np.float32)
        if isinstance(self.forward, OrtNet):  # numpy in and out: no torch around the session
            logits, values = self.forward.run(planes.numpy())
            return np.where(legal.numpy(), logits, np.float32(-np.inf)), values
        with torch.inference_mode(), self._autocast(), self._eval_mode():
            x = planes.to(self.device, dtype=torch.float32, non_blocking=True)
            x = x.contiguous(memory_format=self.memory_format)
            logits, values = self.forward(x)
            logits = logits.float().masked_fill(~legal.to(self.device), float("-inf"))
            values = values.float()
        return logits.cpu().numpy(), values.cpu().numpy()

    @contextlib.contextmanager
    def _eval_mode(self) -> Iterator[None]:
        """The net in eval mode for the call; the folded paths read it as such already."""
        switch = self._switch_mode and self.net.training
        if switch:
            self.net.eval()
        try:
            yield
        finally:
            if switch:
                self.net.train()

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)
