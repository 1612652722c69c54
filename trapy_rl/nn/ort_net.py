"""The net's folded forward pass run by ONNX Runtime, its weights kept current.

Shapes: n positions, C input planes, H x W grid, A actions.

ONNX Runtime runs the tiny net on one CPU thread 1.2-1.9x faster than torch's folded forward
at the batch sizes self-play asks for (BENCHMARKS.md), but only with the weights as constants
of the graph: fed as inputs instead, most of that is lost. So `OrtNet` exports the folded graph
(`trapy_rl.nn.folded.folded_forward`) once per board side, and when the net's weights change
(a learner step, a loaded state) writes the new folded weights into the graph's initializers
and opens a new session: milliseconds, against the tenth of a second a new export costs.

The net is read, never written, as by `FoldedNet`. Needs the ``[onnx]`` extra.

Threads: torch's exporter keeps process-wide state (an export running in one thread makes any
other thread's export fail), so exports take one lock (`trapy_rl.nn.onnx.EXPORT_LOCK`), and an
`OrtNet` shared by threads (the web board's games share a loaded net) prepares each side's
session once, under its own lock: a second caller waits for the session being prepared instead
of starting another export. Running a prepared session needs no lock.
"""

from __future__ import annotations

import io
import threading
import warnings

import numpy as np
import torch

from trapy_rl.errors import MissingExtraError
from trapy_rl.nn.folded import FoldedNet, folded_forward
from trapy_rl.nn.network import PolicyValueNet
from trapy_rl.nn.onnx import EXPORT_LOCK, OPSET, clip_values

__all__ = ["OrtNet"]


class _Graph(torch.nn.Module):
    """`folded_forward` with its weights as named buffers: the module that gets exported, so
    that each weight becomes an initializer of the graph under a name `OrtNet` can find."""

    def __init__(self, weights: dict[str, torch.Tensor], cell_index: torch.Tensor):
        super().__init__()
        self.names = {name: name.replace(".", "_") for name in weights}
        generator = torch.Generator().manual_seed(0)
        for name, key in self.names.items():
            # Random stand-ins of the weights' shapes: the exporter merges equal initializers
            # (a fresh net's zero biases), and `OrtNet` writes the real values in any way.
            shape = weights[name].shape
            self.register_buffer(key, torch.randn(shape, generator=generator))
        self.register_buffer("cell_index", cell_index.clone())

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights = {name: getattr(self, key) for name, key in self.names.items()}
        return folded_forward(planes, weights, self.cell_index)


class OrtNet:
    """``net``'s eval-mode forward (logits and values) by ONNX Runtime on the CPU.

    Args:
        net: the network, on the CPU; its weights are read at each call and written into the
            sessions when they changed since the last call.
        threads: ONNX Runtime's intra-op threads (1: as torch's, for a small net).

    Raises:
        MissingExtraError: (a ValueError) without ``onnx`` and ``onnxruntime``.
    """

    def __init__(self, net: PolicyValueNet, *, threads: int = 1):
        try:
            # the onnx extra: only for self-play on ONNX Runtime
            import onnx
            import onnxruntime
        except ModuleNotFoundError as error:
            needed_by = "onnxruntime=true"
            raise MissingExtraError("onnx", module=error.name, needed_by=needed_by) from error
        self._onnx, self._runtime = onnx, onnxruntime
        self.net = net
        self.folded = FoldedNet(net)
        self.options = onnxruntime.SessionOptions()
        self.options.intra_op_num_threads = threads
        self.options.inter_op_num_threads = 1
        # Per side: the exported graph, its names, and the session with the weights of a key.
        self._models: dict[int, tuple[object, dict[str, str]]] = {}
        self._sessions: dict[int, tuple[tuple, object]] = {}
        self._lock = threading.Lock()  # one preparation of a session at a time

    def __call__(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """planes [n, C, H, W] float32 on the CPU -> logits [n, A] (no legal mask), values [n]."""
        logits, values = self.run(planes.detach().contiguous().numpy())
        return torch.from_numpy(logits), torch.from_numpy(values)

    def run(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`__call__` on numpy arrays, without torch around the session (it costs a tenth of a
        small batch's time): planes [n, C, H, W] float32 -> logits [n, A], values [n]."""
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        side = self.net._check_planes(torch.from_numpy(planes))
        logits, values = self._session(side).run(None, {"planes": planes})
        return logits, clip_values(values)

    def _session(self, side: int):
        """The side's session, opened again with the current weights if they changed."""
        key = self.folded.version_key()
        held = self._sessions.get(side)
        if held is not None and held[0] == key:
            return held[1]
        with self._lock:  # another thread may have prepared it meanwhile
            key = self.folded.version_key()
            held = self._sessions.get(side)
            if held is not None and held[0] == key:
                return held[1]
            return self._open_session(side, key)

    def _open_session(self, side: int, key: tuple):
        """A new session of the side's graph with the current weights (the lock held)."""
        weights = self.folded.weights()
        model, names = self._model(side, weights)
        initializers = {init.name: init for init in model.graph.initializer}
        for name, key_name in names.items():
            array = weights[name].detach().contiguous().numpy()
            initializers[key_name].CopyFrom(self._onnx.numpy_helper.from_array(array, key_name))
        session = self._runtime.InferenceSession(
            model.SerializeToString(), self.options, providers=["CPUExecutionProvider"]
        )
        self._sessions[side] = (key, session)
        return session

    def _model(self, side: int, weights: dict[str, torch.Tensor]):
        """The side's graph, exported on first use; its initializers by weight name."""
        if side not in self._models:
            graph = _Graph(weights, self.net.cell_index(side, torch.device("cpu")))
            planes = torch.zeros(2, self.net.config.in_planes, side, 2 * side - 1)
            buffer = io.BytesIO()
            with EXPORT_LOCK, torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the exporter's notes on tracing
                torch.onnx.export(
                    graph,
                    (planes,),
                    buffer,
                    input_names=["planes"],
                    output_names=["logits", "values"],
                    dynamic_axes={"planes": {0: "n"}, "logits": {0: "n"}, "values": {0: "n"}},
                    opset_version=OPSET,
                    do_constant_folding=False,  # keep each weight an initializer of its name
                    dynamo=False,
                )
            model = self._onnx.load_from_string(buffer.getvalue())
            present = {init.name for init in model.graph.initializer}
            missing = [key for key in graph.names.values() if key not in present]
            if missing:  # an exporter that renamed or folded a weight: fail now, not silently
                raise RuntimeError(f"the exported graph lost the weights {missing}")
            self._models[side] = (model, graph.names)
        return self._models[side]
