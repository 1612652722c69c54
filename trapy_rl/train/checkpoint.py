"""Checkpoints: atomic saves of a training run, safe loading, and the trained net for evaluation.

A checkpoint is one ``torch.save`` file holding only tensors, plain lists, tuples, dicts,
strings and numbers, so it loads with ``torch.load(..., weights_only=True)``, which never runs
code from the file. Its top level:

=============  ==============================================================================
format         ``"trapy_rl.checkpoint"``; ``version`` 1
side           the board side the run trains on
model          ``{"config": net constructor kwargs, "state": the net's state_dict}``
learner        ``{"optimizer": optimizer state_dict, "step": gradient steps}``
counters       iteration, positions generated, games finished, training samples owed, ...
rng            the global numpy, torch and python random states
replay         the replay window (`ReplayBuffer.state_dict`, planes bit-packed) or None
selfplay       the games in progress (`SelfPlay.state_dict`)
config         the run's resolved configuration (`TrainConfig.to_dict`), a plain dict
clock          ``{"seconds": training wall-clock so far}`` (absent in older checkpoints)
=============  ==============================================================================

Numpy arrays are stored as tensors; readers take them back with ``np.asarray``.

A run folder holds ``checkpoints/ckpt_<iteration>.pt`` and ``checkpoints/latest.pt``.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trapy_rl.nn.network import NetConfig

__all__ = [
    "FORMAT",
    "VERSION",
    "CheckpointError",
    "check_compatible",
    "export_network",
    "find_checkpoint",
    "get_rng_state",
    "load_checkpoint",
    "load_network",
    "save_checkpoint",
    "set_rng_state",
    "write_run_checkpoint",
]

FORMAT = "trapy_rl.checkpoint"
VERSION = 1
LATEST = "latest.pt"
CHECKPOINT_DIR = "checkpoints"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the reason."""


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
    handle = tempfile.NamedTemporaryFile(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            torch.save(payload, handle)
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


def find_checkpoint(path: str | os.PathLike) -> Path:
    """The checkpoint file named by ``path``: the file itself, or the latest of a run folder
    (``<run>/checkpoints/latest.pt``) or of a checkpoints folder (``<folder>/latest.pt``).
    """
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        for candidate in (path / CHECKPOINT_DIR / LATEST, path / LATEST):
            if candidate.is_file():
                return candidate
        raise CheckpointError(
            f"{path}: a folder without a checkpoint (looked for {CHECKPOINT_DIR}/{LATEST} "
            f"and {LATEST})"
        )
    raise CheckpointError(f"{path}: no such checkpoint file or run folder")


def load_checkpoint(path: str | os.PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint file (or a run folder's latest) without executing code from it.

    Raises:
        CheckpointError: naming the file, when it is missing, truncated, corrupt, not a
            checkpoint of this toolkit, or of another format version.
    """
    path = find_checkpoint(path)
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # a damaged file fails in many ways: say which file, and why
        size = path.stat().st_size
        raise CheckpointError(
            f"{path}: not a readable checkpoint ({size} bytes; truncated or corrupt?): "
            f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        ) from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a trapy_rl checkpoint (no format {FORMAT!r})")
    if payload.get("version") != VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format version {payload.get('version')}, this code reads "
            f"version {VERSION}"
        )
    missing = [key for key in ("side", "model") if key not in payload]
    if missing:
        raise CheckpointError(f"{path}: checkpoint lacks {', '.join(missing)}")
    payload["path"] = str(path)
    return payload


def check_compatible(payload: dict, *, side: int, model: NetConfig) -> None:
    """Raise CheckpointError when ``payload`` was written for another board or net shape."""
    path = payload.get("path", "checkpoint")
    if int(payload["side"]) != int(side):
        raise CheckpointError(
            f"{path}: written for the side-{payload['side']} board, but this run plays on "
            f"side {side} (resume with the run's own settings, see its config.yaml)"
        )
    saved, model_config = dict(payload["model"]["config"]), model.to_dict()
    if saved != model_config:
        differ = sorted(
            key for key in set(saved) | set(model_config) if saved.get(key) != model_config.get(key)
        )
        shown = ", ".join(f"{k}: {saved.get(k)!r} vs {model_config.get(k)!r}" for k in differ)
        raise CheckpointError(f"{path}: a net of another shape (checkpoint vs this run: {shown})")


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


def export_network(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Write a net-only copy of a checkpoint (or a run folder's latest) to ``dst``.

    It keeps the board side, the net, the counters, the gradient steps, the run's config and
    its training clock (`NETWORK_KEYS`), and drops what only resuming needs (optimiser,
    replay window, games in progress, random states): a file small enough to ship, which
    every agent spec and `load_network` read like the original.

    Raises:
        CheckpointError: naming the source when it cannot be read.
    """
    payload = load_checkpoint(src)
    kept = {key: payload[key] for key in NETWORK_KEYS if key in payload}
    kept["learner"] = {"step": int((payload.get("learner") or {}).get("step", 0))}
    kept["source"] = Path(payload["path"]).name
    return save_checkpoint(dst, kept)


def load_network(
    path: str | os.PathLike, *, device: str | torch.device = "cpu"
) -> tuple[torch.nn.Module, dict]:
    """The trained net of a checkpoint file or run folder, in eval mode.

    Returns:
        (net, info) where info holds ``path``, ``side``, ``iteration``, ``step`` (gradient
        steps), ``model_config`` (the `NetConfig` as a dict) and ``config`` (the run's, a dict).

    Raises:
        CheckpointError: naming the file and why it cannot give a net.
    """
    from trapy_rl.nn import PolicyValueNet

    payload = load_checkpoint(path, map_location=device)
    source = payload["path"]
    model_config = dict(payload["model"]["config"])
    try:
        net = PolicyValueNet(NetConfig.from_dict(model_config))
    except (TypeError, ValueError) as error:
        raise CheckpointError(
            f"{source}: cannot build its net from {model_config}: {error}"
        ) from error
    try:
        net.load_state_dict(payload["model"]["state"])
    except RuntimeError as error:
        raise CheckpointError(f"{source}: weights do not fit the net: {error}") from error
    net.to(device).eval()
    counters = payload.get("counters", {})
    info = {
        "path": source,
        "side": int(payload["side"]),
        "iteration": int(counters.get("iteration", 0)),
        "step": int(payload.get("learner", {}).get("step", 0)),
        "model_config": model_config,
        "config": payload.get("config", {}),
    }
    return net, info
