"""Writing checkpoints: atomic saves of a training run, and net-only exports.

The file format, its checksum trailer and every reader live in `trapy_rl.nn.checkpoint`
(re-exported here); saving stays with training. A run folder holds
``checkpoints/ckpt_<iteration>.pt`` and ``checkpoints/latest.pt``.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trapy_rl.nn.checkpoint import (
    CHECKPOINT_DIR,
    FORMAT,
    LATEST,
    VERSION,
    CheckpointError,
    check_compatible,
    checksum_trailer,
    find_checkpoint,
    load_checkpoint,
    load_network,
    load_newest_valid,
    validate_payload,
)

__all__ = [
    "CHECKPOINT_DIR",
    "FORMAT",
    "RUN_PATH_KEYS",
    "VERSION",
    "CheckpointError",
    "average_networks",
    "check_compatible",
    "export_network",
    "find_checkpoint",
    "get_rng_state",
    "load_checkpoint",
    "load_network",
    "load_newest_valid",
    "remove_temporary_files",
    "save_checkpoint",
    "set_rng_state",
    "to_storable",
    "validate_payload",
    "write_run_checkpoint",
]


# ---------------------------------------------------------------------- plain types
def to_storable(value: Any) -> Any:
    """Numpy arrays and scalars -> tensors and Python numbers, recursively."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {key: to_storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_storable(item) for item in value)
    return value


def get_rng_state() -> dict:
    """The global random states: numpy's legacy generator, torch's CPU generator, python's."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()  # noqa: NPY002
    return {
        "numpy": {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "gauss": float(gauss),
        },
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
    }


def set_rng_state(state: dict) -> None:
    """Restore what `get_rng_state` returned."""
    numpy_state = state["numpy"]
    np.random.set_state(  # noqa: NPY002
        (
            numpy_state["kind"],
            np.asarray(numpy_state["keys"]).astype(np.uint32),
            numpy_state["pos"],
            numpy_state["has_gauss"],
            numpy_state["gauss"],
        )
    )
    torch.set_rng_state(state["torch"])
    python_state = state["python"]
    random.setstate((python_state[0], tuple(python_state[1]), python_state[2]))


# ---------------------------------------------------------------------- files
def save_checkpoint(path: str | os.PathLike, payload: dict) -> Path:
    """Write ``payload`` to ``path`` atomically: a temporary file in the same folder, fsync,
    then ``os.replace``. A crash at any moment leaves either the old file or the new one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "version": VERSION, **to_storable(payload)}
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getvalue()
    handle = tempfile.NamedTemporaryFile(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.write(data)
            handle.write(checksum_trailer(data))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - folders cannot be opened on some systems
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def remove_temporary_files(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files an interrupted save left in a checkpoints folder (a run
    folder is written by one process at a time, so none of them is still being written)."""
    folder = Path(folder)
    removed = sorted(folder.glob(".*.tmp")) if folder.is_dir() else []
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def write_run_checkpoint(
    folder: str | os.PathLike, iteration: int, payload: dict, *, keep: int = 0
) -> Path:
    """Save ``ckpt_<iteration>.pt`` and ``latest.pt`` in ``folder``; keep the newest ``keep``
    numbered ones (0 keeps all). Returns the numbered file.
    """
    folder = Path(folder)
    numbered = save_checkpoint(folder / f"ckpt_{iteration:06d}.pt", payload)
    # latest.pt: a hard link to the numbered file, swapped in atomically (a copy where the
    # file system has no links).
    temporary = folder / f".{LATEST}.{os.getpid()}.tmp"
    temporary.unlink(missing_ok=True)
    try:
        os.link(numbered, temporary)
    except OSError:
        shutil.copyfile(numbered, temporary)
    os.replace(temporary, folder / LATEST)
    _fsync_dir(folder)
    if keep > 0:
        for old in sorted(folder.glob("ckpt_*.pt"))[:-keep]:
            old.unlink(missing_ok=True)
    return numbered


# What a net-only checkpoint keeps: enough to play and to say where the net came from.
NETWORK_KEYS = ("side", "model", "counters", "config", "clock")


RUN_PATH_KEYS = ("run_dir", "resume")
"""The config keys that name folders of the machine that trained a net."""


def export_network(
    src: str | os.PathLike, dst: str | os.PathLike, *, portable: bool = False
) -> Path:
    """Write a net-only copy of a checkpoint (or a run folder's latest) to ``dst``.

    It keeps the board side, the net, the counters, the gradient steps, the run's config and
    its training clock (`NETWORK_KEYS`), and drops what only resuming needs (optimiser,
    replay window, games in progress, random states): a file small enough to ship, which
    every agent spec and `load_network` read like the original. ``portable`` keeps only the
    last name of the run's folders (``run_dir``, ``resume``) in the config: a net that ships
    names its run, not the trainer's disk.

    Raises:
        CheckpointError: naming the source when it cannot be read.
    """
    payload = load_checkpoint(src)
    kept = _net_only(payload)
    kept["source"] = Path(payload["path"]).name
    if portable and isinstance(kept.get("config"), dict):
        config = kept["config"] = dict(kept["config"])
        for key in RUN_PATH_KEYS:
            if isinstance(config.get(key), str):
                config[key] = Path(config[key]).name
    return save_checkpoint(dst, kept)


def _net_only(payload: dict) -> dict:
    """What a net-only copy keeps of a checkpoint (`NETWORK_KEYS` and the gradient steps)."""
    kept = {key: payload[key] for key in NETWORK_KEYS if key in payload}
    kept["learner"] = {"step": int((payload.get("learner") or {}).get("step", 0))}
    return kept


def average_networks(sources: list[str | os.PathLike], dst: str | os.PathLike) -> Path:
    """Write the net whose weights are the mean of the nets in ``sources`` to ``dst``.

    Averaging the weights of snapshots along one run (stochastic weight averaging, Izmailov et
    al. 2018) keeps their common answer and cancels what each snapshot picked up from its last
    minutes of self-play. The batch-norm running statistics are averaged too (not measured
    again on data), and integer buffers (batches seen) are the last source's. The file is a
    net-only copy of the last source (`export_network`) with the mean weights and ``source``
    naming every file; its clock and counters are the last source's, since averaging trains
    nothing.

    Raises:
        CheckpointError: naming a source that cannot be read.
        ValueError: if ``sources`` is empty, or the nets differ in side or shape.
    """
    if not sources:
        raise ValueError("average_networks: no nets to average")
    payloads = [load_checkpoint(source) for source in sources]
    last = payloads[-1]
    for path, payload in zip(sources, payloads):
        if payload["side"] != last["side"] or payload["model"]["config"] != last["model"]["config"]:
            raise ValueError(
                f"average_networks: {Path(path).name} is not the same net as "
                f"{Path(sources[-1]).name} (side or model config differ)"
            )
    states = [payload["model"]["state"] for payload in payloads]
    mean = {}
    for key, value in last["model"]["state"].items():
        if value.is_floating_point():
            stacked = torch.stack([state[key].to(torch.float64) for state in states])
            mean[key] = stacked.mean(dim=0).to(value.dtype)
        else:
            mean[key] = value
    kept = _net_only(last)
    kept["model"] = {"config": last["model"]["config"], "state": mean}
    kept["source"] = "mean of " + ", ".join(Path(payload["path"]).name for payload in payloads)
    return save_checkpoint(dst, kept)
