"""The net as an ONNX model: ``trapy-export``, and an evaluator that runs it without torch.

    trapy-export outputs/RUN model.onnx            # a checkpoint file or a run folder
    trapy-play onnx:model.onnx:400                 # search with ONNX Runtime, no torch import

The model takes ``planes`` [n, C, H, W] float32 (what `trapy_rl.game.planes.encode_planes`
makes) with a dynamic batch n and returns ``logits`` [n, A] float32 (no legal mask: the
evaluator applies it) and ``values`` [n] float32 in [-1, 1] for the player to move. The board
side is fixed at export (the net's cell gather is built for one side), and written into the
model's metadata with the net's config and the source checkpoint's SHA-256; `OnnxEvaluator`
refuses a board of another side. Exported with torch's TorchScript-based exporter, opset 17;
outputs match torch within 1e-4 (a test checks it on random positions).

`OnnxEvaluator` needs only numpy and ``onnxruntime`` (the ``[onnx]`` extra): an agent that
searches with it (the ``onnx`` agent kind) runs where torch is not installed.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import numpy as np

from trapy_rl.errors import ArgumentParser, MissingExtraError, reported
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.planes import encode_planes
from trapy_rl.nn.digest import file_sha256

__all__ = ["EXPORT_LOCK", "OPSET", "OnnxEvaluator", "clip_values", "export_onnx", "main"]

OPSET = 17
EXPORT_LOCK = threading.Lock()
"""Held by every ONNX export of this package: torch's exporter keeps process-wide state, and a
second export started while one runs fails (``GLOBALS.in_onnx_export must be False``)."""


def _runtime():
    try:  # the onnx extra: imported when a model is run
        import onnxruntime
    except ModuleNotFoundError as error:
        raise MissingExtraError("onnx", module="onnxruntime", needed_by="an ONNX model") from error
    return onnxruntime


def clip_values(values: np.ndarray) -> np.ndarray:
    """[n] float32 values from ONNX Runtime, clipped to [-1, 1] in place.

    Its CPU tanh is an approximation that overshoots: 1.0000002 for inputs near 9, which a
    confident value head reaches; the search refuses values outside [-1, 1] (two runs of the
    side-10 recipe stopped on it, at iterations 215 and 305), so the overshoot is clipped where
    it comes out.
    """
    return np.clip(values, -1.0, 1.0, out=values)


def export_onnx(checkpoint: str | Path, out: str | Path) -> Path:
    """Write the net of ``checkpoint`` (a file or run folder) to ``out`` as an ONNX model.

    Returns:
        The path written.

    Raises:
        CheckpointError: naming the checkpoint when it cannot be read.
        MissingExtraError: (a ValueError) when the ``onnx`` package is missing.
    """
    # torch only here, to export: the evaluator below runs without it.
    import torch

    from trapy_rl.nn.checkpoint import load_network  # torch, as above

    try:  # the onnx extra: imported when a model is written
        import onnx
    except ModuleNotFoundError as error:
        raise MissingExtraError("onnx", module="onnx", needed_by="trapy-export") from error
    net, info = load_network(checkpoint, device="cpu")
    side = info["side"]
    planes = torch.zeros(2, net.config.in_planes, side, 2 * side - 1)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with EXPORT_LOCK, torch.no_grad():
        torch.onnx.export(
            net,
            (planes,),
            str(out),
            input_names=["planes"],
            output_names=["logits", "values"],
            dynamic_axes={"planes": {0: "n"}, "logits": {0: "n"}, "values": {0: "n"}},
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter: no onnxscript needed, a plain graph
        )
    model = onnx.load(str(out))
    metadata = {
        "trapy_rl.side": str(side),
        "trapy_rl.model": json.dumps(info["model_config"], sort_keys=True),
        "trapy_rl.source": Path(info["path"]).name,
        "trapy_rl.source_sha256": file_sha256(info["path"]),
    }
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(out))
    return out


class OnnxEvaluator:
    """An exported net run by ONNX Runtime on the CPU, as search's leaf evaluator.

    Args:
        path: the ``.onnx`` file `export_onnx` wrote.
        threads: ONNX Runtime's intra-op threads (1: the fast setting for a small net on a
            machine shared by several processes, as for torch).

    Attributes:
        side: the board side the model was exported for.
        path: the model file.
    """

    def __init__(self, path: str | Path, *, threads: int = 1) -> None:
        runtime = _runtime()
        self.path = Path(path)
        if not self.path.is_file():
            raise ValueError(f"{self.path}: no such ONNX model file")
        options = runtime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = runtime.InferenceSession(
                str(self.path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # a damaged or foreign file: say which, in one line
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ValueError(f"{self.path}: not a readable ONNX model: {first}") from None
        metadata = self.session.get_modelmeta().custom_metadata_map
        if "trapy_rl.side" not in metadata:
            raise ValueError(f"{self.path}: not a model written by trapy-export (no side)")
        self.side = int(metadata["trapy_rl.side"])

    def evaluate_planes(
        self, planes: np.ndarray, legal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """planes [n, C, H, W] float32, legal [n, A] bool -> logits [n, A] float32 (-inf
        illegal), values [n] float32."""
        logits, values = self.session.run(
            None, {"planes": np.ascontiguousarray(planes, np.float32)}
        )
        logits = np.where(legal, logits, np.float32(-np.inf)).astype(np.float32, copy=False)
        return logits, clip_values(values.astype(np.float32, copy=False))

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``games`` [n] int of ``batch`` (see `trapy_rl.nn.evaluator`)."""
        if batch.board.side != self.side:
            raise ValueError(
                f"{self.path}: exported for the side-{self.side} board, the games are on side "
                f"{batch.board.side}"
            )
        games = np.asarray(games, dtype=np.intp)
        if len(games) == 0:
            actions = batch.board.num_actions
            return np.zeros((0, actions), np.float32), np.zeros(0, np.float32)
        planes = encode_planes(batch, games)
        return self.evaluate_planes(planes, batch.legal_mask()[games])


def main(argv: list[str] | None = None) -> int:
    """``trapy-export CHECKPOINT OUT.onnx``: the net of a checkpoint as an ONNX model."""
    parser = ArgumentParser(
        prog="trapy-export", description="Write a checkpoint's net as an ONNX model."
    )
    parser.add_argument("checkpoint", help="a checkpoint file or a run folder")
    parser.add_argument("out", type=Path, help="the .onnx file to write")
    args = parser.parse_args(argv)
    with reported(parser.prog):
        out = export_onnx(args.checkpoint, args.out)
        side = OnnxEvaluator(out).side
    print(f"wrote {out} (side {side}, dynamic batch): play it with onnx:{out}:400")
    return 0


if __name__ == "__main__":
    sys.exit(main())
