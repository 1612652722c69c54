"""Network throughput: positions per second through `NetEvaluator.evaluate_planes`.

The ``small`` preset (configs/model/small.yaml) on the side-10 board at batch 1, 64 and 256, in
fp32 and in bf16 autocast, and the ratio bf16/fp32 at each batch size. The two precisions are
timed in alternation, so that load from other processes falls on both alike. bf16 runs on any
CPU, but where `bf16_supported("cpu")` is False it is emulated: the note says which. Where CUDA
is available the ``large`` preset is also timed on it in fp32, bf16 and fp16. The full run
(not ``--quick``) also times every preset on CPU in fp32 at batch 64, and the CPU inference
backends (`run_backends`): eager torch with and without channels-last, ``torch.compile`` and
ONNX Runtime, for the tiny and small presets at the batch sizes search asks for.

Threads are whatever torch uses in this process (``torch.get_num_threads()``, printed by the
runner): set them from outside, e.g. ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import torch
import yaml

from trapy_rl.config import CONFIG_DIR
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.planes import encode_planes
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.nn import NetConfig, NetEvaluator, PolicyValueNet, bf16_supported
from trapy_rl.nn.device import cpu_bf16_flags

PRESETS = Path(CONFIG_DIR) / "model"
SIDE = 10


def load_preset(name: str) -> dict:
    """The keyword arguments of a model preset, all of them (its file holds only those that
    differ from NetConfig's defaults)."""
    return NetConfig(**yaml.safe_load((PRESETS / f"{name}.yaml").read_text())).to_dict()


def positions(n: int, *, side: int = SIDE, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Planes [n, C, H, W] and legal masks [n, A] of mid-game positions (20 random moves)."""
    rng = np.random.default_rng(seed)
    batch = BatchGame(n, side=side)
    for _ in range(20):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    return encode_planes(batch), batch.legal_mask()


def time_alternating(calls: dict, *, repeats: int, budget_s: float) -> dict[str, float]:
    """Median seconds per call of each function, timed in turns after one warm-up each.

    Stops early once ``budget_s`` has passed (after at least one timed round).
    """
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    start = time.perf_counter()
    for _ in range(repeats):
        for name, call in calls.items():
            begin = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - begin)
        if time.perf_counter() - start > budget_s:
            break
    return {name: float(np.median(values)) for name, values in times.items()}


def run(quick: bool) -> list[dict]:
    rows = []
    config = load_preset("small")
    shape = f"{config['channels']}x{config['blocks']}"
    torch.manual_seed(0)
    net = PolicyValueNet(NetConfig(**config))
    planes, legal = positions(256)
    native = bf16_supported("cpu")
    bf16_note = (
        f"native bf16 ({', '.join(cpu_bf16_flags())})"
        if native
        else "no avx512_bf16/AMX: emulated bf16"
    )
    fp32 = NetEvaluator(net, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bf16 = NetEvaluator(net, device="cpu", bf16=True)
    for n in (1, 64, 256):
        repeats = (10 if n == 1 else 3) if quick else (50 if n == 1 else 9)
        seconds = time_alternating(
            {
                "fp32": lambda n=n: fp32.evaluate_planes(planes[:n], legal[:n]),
                "bf16": lambda n=n: bf16.evaluate_planes(planes[:n], legal[:n]),
            },
            repeats=repeats,
            budget_s=5.0 if quick else 30.0,
        )
        for precision in ("fp32", "bf16"):
            rows.append(
                {
                    "name": f"small {shape} side {SIDE} cpu {precision} batch {n}",
                    "value": n / seconds[precision],
                    "unit": "positions/s",
                    "note": bf16_note if precision == "bf16" else "",
                }
            )
        ratio = seconds["fp32"] / seconds["bf16"]
        rows.append(
            {
                "name": f"small cpu bf16/fp32 speed ratio batch {n}",
                "value": ratio,
                "unit": "x",
                "note": f"{ratio:.3f}x; {bf16_note}",
            }
        )
    if not quick:
        rows.extend(run_presets(planes[:64], legal[:64]))
        rows.extend(run_backends(planes, legal))
    if torch.cuda.is_available():
        rows.extend(run_cuda(quick))
    return rows


def run_presets(planes: np.ndarray, legal: np.ndarray) -> list[dict]:
    """Every preset on CPU in fp32 at the batch of ``planes`` [n, C, H, W], timed in turns."""
    evaluators = {}
    for preset in ("tiny", "small", "large"):
        config = load_preset(preset)
        torch.manual_seed(0)
        shape = f"{config['channels']}x{config['blocks']}"
        evaluators[f"{preset} {shape}"] = NetEvaluator(
            PolicyValueNet(NetConfig(**config)), device="cpu"
        )
    seconds = time_alternating(
        {name: lambda e=e: e.evaluate_planes(planes, legal) for name, e in evaluators.items()},
        repeats=7,
        budget_s=30.0,
    )
    n = len(planes)
    return [
        {"name": f"{name} side {SIDE} cpu fp32 batch {n}", "value": n / v, "unit": "positions/s"}
        for name, v in seconds.items()
    ]


def run_backends(planes: np.ndarray, legal: np.ndarray) -> list[dict]:
    """CPU inference of the tiny and small presets by backend, at batch 8, 32 and 128 (the
    leaves one simulation step of 8-128 concurrent games asks for), timed in turns.

    Backends: ``eager`` (the net's own forward, contiguous), ``channels_last`` (the same in
    channels-last), ``folded`` (batch norm folded into the convolutions, channels-last: the
    `NetEvaluator` default), ``compiled`` (``torch.compile``, dynamic shapes, warmed up first),
    ``onnxruntime`` (the `trapy-export` model) and ``onnxruntime_folded`` (`OrtNet`, what
    ``onnxruntime=true`` runs; both skipped without the ``[onnx]`` extra).
    """
    import tempfile

    rows = []
    for preset in ("tiny", "small"):
        config = load_preset(preset)
        torch.manual_seed(0)
        net = PolicyValueNet(NetConfig(**config))
        evaluators = {
            "eager": NetEvaluator(net, device="cpu", channels_last=False, fold=False),
            "channels_last": NetEvaluator(net, device="cpu", fold=False),
            "folded": NetEvaluator(net, device="cpu"),
            "compiled": NetEvaluator(net, device="cpu", compile=True),
        }
        try:  # the folded graph by ONNX Runtime, as self-play runs it with onnxruntime=true
            evaluators["onnxruntime_folded"] = NetEvaluator(net, device="cpu", onnxruntime=True)
        except ValueError:  # without the [onnx] extra
            pass
        with tempfile.TemporaryDirectory() as folder:
            try:
                from trapy_rl.nn.onnx import OnnxEvaluator, export_onnx
                from trapy_rl.train.checkpoint import save_checkpoint

                model = {"config": net.config.to_dict(), "state": net.state_dict()}
                payload = {"side": SIDE, "model": model}
                checkpoint = save_checkpoint(Path(folder) / "net.pt", payload)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = export_onnx(checkpoint, Path(folder) / "net.onnx")
                evaluators["onnxruntime"] = OnnxEvaluator(model)
            except (ImportError, ValueError):
                pass
            for n in (8, 32, 128):
                for evaluator in evaluators.values():  # compile and warm up every shape
                    evaluator.evaluate_planes(planes[:n], legal[:n])
                seconds = time_alternating(
                    {
                        name: lambda e=e, n=n: e.evaluate_planes(planes[:n], legal[:n])
                        for name, e in evaluators.items()
                    },
                    repeats=15,
                    budget_s=20.0,
                )
                for name, value in seconds.items():
                    rows.append(
                        {
                            "name": f"{preset} cpu {name} batch {n}",
                            "value": n / value,
                            "unit": "positions/s",
                            "note": f"{seconds['eager'] / value:.2f}x eager",
                        }
                    )
    return rows


def run_cuda(quick: bool) -> list[dict]:
    """The ``large`` preset on CUDA at batch 256 and 1024 in fp32, bf16 and fp16."""
    rows = []
    config = load_preset("large")
    shape = f"{config['channels']}x{config['blocks']}"
    torch.manual_seed(0)
    net = PolicyValueNet(NetConfig(**config))
    planes, legal = positions(1024)
    evaluators = {
        "fp32": NetEvaluator(net, device="cuda"),
        "bf16": NetEvaluator(net, device="cuda", bf16=True),
        "fp16": NetEvaluator(net, device="cuda", fp16=True),
    }
    name = torch.cuda.get_device_name()
    for n in (256, 1024):
        seconds = time_alternating(
            {
                precision: lambda e=e, n=n: e.evaluate_planes(planes[:n], legal[:n])
                for precision, e in evaluators.items()
            },
            repeats=5 if quick else 20,
            budget_s=10.0 if quick else 30.0,
        )
        for precision, value in seconds.items():
            rows.append(
                {
                    "name": f"large {shape} side {SIDE} cuda {precision} batch {n}",
                    "value": n / value,
                    "unit": "positions/s",
                    "note": name,
                }
            )
    return rows
