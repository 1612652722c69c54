"""Reading checkpoints: the file format, its checks, and the trained net for evaluation.

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
clock          ``{"seconds": training wall-clock so far, "cpu_seconds": its CPU time}``
               (absent in older checkpoints; ``cpu_seconds`` newer than ``seconds``)
=============  ==============================================================================

Numpy arrays are stored as tensors; readers take them back with ``np.asarray``.

**Checked before use.** After the torch file comes a trailer of `TRAILER_SIZE` bytes,
``"\ntrapy_rl sha256 <64 hex digits>\n"``: the SHA-256 of every byte before it. `load_checkpoint`
refuses a file whose bytes do not match it (one flipped bit anywhere is enough), then checks
every field's type and range (`validate_payload`) before anything is built from it. Files from
before the trailer load if they end in a complete torch file whose members pass their zip
CRC-32 checks. ``torch.load`` ignores the trailer, so other programs read the file as usual.

**Damage and hostility.** The trailer guards against accidental damage (a bad copy, a disk): it
is no signature, anyone can write a file with a matching trailer, and a file without one loads
(as files from before it do). What keeps a hostile file harmless is the reading itself: the
torch file is loaded with ``weights_only=True`` (no code from the file runs), only when its zip
members are stored uncompressed within the file's bytes (no archive that inflates); the loaded
payload is walked once with a budget of `MAX_NODES` objects, and its tensors may hold no more
bytes than the file (a view that repeats one number a billion times is refused); every size
the file names is checked against its cap (the net's widths and weights, `NetConfig`; the
replay window, `trapy_rl.train.replay`) before anything is allocated from it.

A run folder holds ``checkpoints/ckpt_<iteration>.pt`` and ``checkpoints/latest.pt``.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

import torch

from trapy_rl.game.board import MAX_SIDE
from trapy_rl.nn.network import NetConfig, PolicyValueNet
from trapy_rl.pretrained import pretrained_file, pretrained_names

__all__ = [
    "CHECKPOINT_DIR",
    "FORMAT",
    "LATEST",
    "TRAILER_SIZE",
    "VERSION",
    "CheckpointError",
    "check_compatible",
    "checksum_trailer",
    "find_checkpoint",
    "load_checkpoint",
    "load_network",
    "load_newest_valid",
    "validate_payload",
]

FORMAT = "trapy_rl.checkpoint"
VERSION = 1
LATEST = "latest.pt"
CHECKPOINT_DIR = "checkpoints"
_TRAILER_TAG = b"\ntrapy_rl sha256 "
TRAILER_SIZE = len(_TRAILER_TAG) + 64 + 1
SIDES = range(2, MAX_SIDE + 1)  # the board sides a checkpoint may name
# The objects (containers, tensors, numbers, strings) a payload may hold, counted each time
# they are reached, and how deeply nested: a run's checkpoint holds a few thousand, 5 deep.
MAX_NODES, MAX_DEPTH = 100_000, 32


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the reason."""


def checksum_trailer(data: bytes) -> bytes:
    """The `TRAILER_SIZE` bytes that follow a torch file ``data`` in a checkpoint."""
    return _TRAILER_TAG + hashlib.sha256(data).hexdigest().encode("ascii") + b"\n"


def _numbered(folder: Path) -> list[Path]:
    """The numbered checkpoints ``ckpt_*.pt`` of a folder, newest first."""
    return sorted(folder.glob("ckpt_*.pt"), reverse=True)


def _checkpoint_folder(path: Path) -> Path | None:
    for folder in (path / CHECKPOINT_DIR, path):
        if (folder / LATEST).is_file() or _numbered(folder):
            return folder
    return None


def find_checkpoint(path: str | os.PathLike) -> Path:
    """The checkpoint file named by ``path``: the file itself, or the latest of a run folder
    (``<run>/checkpoints/latest.pt``) or of a checkpoints folder (``<folder>/latest.pt``);
    where ``latest.pt`` is missing, the newest numbered checkpoint; where nothing exists at
    ``path``, the shipped net of that name (`trapy_rl.pretrained`, e.g. ``pretrained``).
    """
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        folder = _checkpoint_folder(path)
        if folder is None:
            raise CheckpointError(
                f"{path}: a folder without a checkpoint (looked for {CHECKPOINT_DIR}/{LATEST}, "
                f"{LATEST} and ckpt_*.pt)"
            )
        return folder / LATEST if (folder / LATEST).is_file() else _numbered(folder)[0]
    shipped = pretrained_names()
    if str(path) in shipped:
        try:
            return pretrained_file(str(path))
        except ValueError as error:
            raise CheckpointError(str(error)) from None
    also = f" (or a shipped net: {', '.join(shipped)})" if shipped else ""
    raise CheckpointError(f"{path}: no such checkpoint file or run folder{also}")


def _check_archive(path: Path, data: bytes) -> None:
    """``data`` must be a zip whose members are stored uncompressed within its own bytes, as
    ``torch.save`` writes them: reading it then never makes more bytes than the file has."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise CheckpointError(f"{path}: damaged or not a checkpoint: {error}") from error
    packed = [m.filename for m in members if m.compress_type != zipfile.ZIP_STORED]
    if packed:
        raise CheckpointError(f"{path}: not a torch file: member {packed[0]} is compressed")
    declared = sum(m.file_size for m in members)
    if declared > len(data):
        raise CheckpointError(
            f"{path}: damaged: its members claim {declared:,} bytes, the file has {len(data):,}"
        )


def _verified_bytes(path: Path) -> bytes:
    """The torch file inside ``path``, its checksum verified (see the module docstring)."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise CheckpointError(f"{path}: cannot be read: {error.strerror or error}") from error
    tail = raw[-TRAILER_SIZE:]
    if tail.startswith(_TRAILER_TAG) and tail.endswith(b"\n"):
        data, expected = raw[:-TRAILER_SIZE], tail[len(_TRAILER_TAG) : -1]
        if hashlib.sha256(data).hexdigest().encode("ascii") != expected:
            raise CheckpointError(
                f"{path}: damaged: its bytes do not match the SHA-256 it was saved with "
                "(a bad copy or disk; use an earlier checkpoint)"
            )
        return data
    # A file saved before checksums: it must end with the zip directory torch writes, and
    # every member must pass its CRC-32 (which torch itself does not check).
    if raw[-22:-18] != b"PK\x05\x06" or raw[-2:] != b"\x00\x00":
        raise CheckpointError(
            f"{path}: damaged or not a checkpoint: it ends neither in a checksum nor in a "
            f"complete torch file ({len(raw)} bytes; truncated?)"
        )
    _check_archive(path, raw)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise CheckpointError(f"{path}: damaged: {error}") from error
    if bad is not None:
        raise CheckpointError(f"{path}: damaged: member {bad} fails its CRC-32 check")
    return raw


def load_checkpoint(path: str | os.PathLike, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint file (or a run folder's latest) without executing code from it.

    The file's checksum is verified and every field checked (`validate_payload`) first.

    Raises:
        CheckpointError: naming the file (and the field), when it is missing, truncated,
            damaged, not a checkpoint of this toolkit, of another format version, or holds a
            field of the wrong type or range.
    """
    path = find_checkpoint(path)
    data = _verified_bytes(path)
    _check_archive(path, data)
    try:
        payload = torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
    except Exception as error:  # a damaged file fails in many ways: say which file, and why
        raise CheckpointError(
            f"{path}: not a readable checkpoint ({len(data)} bytes; truncated or corrupt?): "
            f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        ) from error
    _check_objects(path, payload, file_bytes=len(data))
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a trapy_rl checkpoint (no format {FORMAT!r})")
    if payload.get("version") != VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format version {payload.get('version')!r}, this code reads "
            f"version {VERSION}"
        )
    validate_payload(payload, path)
    payload["path"] = str(path)
    return payload


def load_newest_valid(path: str | os.PathLike, **kwargs: Any) -> dict:
    """`load_checkpoint` of a file, or for a run folder the newest of ``latest.pt`` and the
    numbered checkpoints that loads; the ones skipped are named on stderr.

    Raises:
        CheckpointError: when none loads (the message gives each file's reason).
    """
    path = Path(path)
    folder = _checkpoint_folder(path) if path.is_dir() else None
    if folder is None:
        return load_checkpoint(path, **kwargs)
    candidates = [folder / LATEST] if (folder / LATEST).is_file() else []
    candidates += _numbered(folder)
    problems = []
    for candidate in candidates:
        try:
            payload = load_checkpoint(candidate, **kwargs)
        except CheckpointError as error:
            problems.append(str(error))
            continue
        for problem in problems:
            print(f"skipped: {problem}", file=sys.stderr, flush=True)
        return payload
    raise CheckpointError(f"{path}: no checkpoint loads: " + "; ".join(problems))


# ---------------------------------------------------------------------- validation
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A finite int or float (ints of at most 63 bits: counters, not numbers of any size)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) < 2**63 if isinstance(value, int) else math.isfinite(value)


def _check_objects(path: Path | str, payload: Any, *, file_bytes: int) -> None:
    """Walk the loaded payload once, each object counted every time it is reached (pickle can
    share one object many times): at most `MAX_NODES` of them, `MAX_DEPTH` deep, and tensors
    that are plain dense arrays holding, all together, no more bytes than the file."""
    stack, nodes, tensor_bytes = [(payload, "", 0)], 0, 0
    while stack:
        value, where, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            raise CheckpointError(
                f"{path}: holds more than {MAX_NODES:,} objects or {MAX_DEPTH} levels of "
                "nesting; no checkpoint of this toolkit does"
            )
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{k!s:.40}", depth + 1) for k, v in value.items())
            stack.extend((key, f"{where}.<key>", depth + 1) for key in value)
        elif isinstance(value, (list, tuple)):
            stack.extend((item, f"{where}.{i}", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, torch.Tensor):
            field = where.lstrip(".")
            if type(value) not in (torch.Tensor, torch.nn.Parameter) or (
                value.layout != torch.strided or value.is_quantized or value.is_nested
            ):
                raise CheckpointError(f"{path}: field {field} is a tensor of another kind")
            tensor_bytes += value.numel() * value.element_size()
            if tensor_bytes > file_bytes:
                raise CheckpointError(
                    f"{path}: field {field} {tuple(value.shape)} takes the tensors past the "
                    f"file's {file_bytes:,} bytes (a view that repeats its data?)"
                )


def _field_error(path: Path | str, field: str, wanted: str, value: Any) -> CheckpointError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return CheckpointError(f"{path}: field {field} must be {wanted}, got {shown}")


def _check_mapping(path: Path | str, field: str, value: Any, *, optional: bool = False) -> None:
    if not (isinstance(value, dict) or (optional and value is None)):
        raise _field_error(path, field, "a mapping" + (" or None" if optional else ""), value)


def _check_weights(path: Path | str, config: NetConfig, state: dict) -> None:
    """The weights must be those of the net ``config`` describes: the same names and shapes
    (the net is built on the meta device, so nothing is allocated)."""
    with torch.device("meta"):
        expected = PolicyValueNet(config).state_dict()
    missing = sorted(set(expected) - set(state))
    if missing:
        raise CheckpointError(f"{path}: field model.state lacks {', '.join(missing[:3])}")
    for name, tensor in state.items():
        if name not in expected:
            raise CheckpointError(f"{path}: field model.state has an unknown weight {name!r}")
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise CheckpointError(
                f"{path}: field model.state[{name!r}] has shape {tuple(tensor.shape)}, the net "
                f"of model.config needs {tuple(expected[name].shape)}"
            )


def validate_payload(payload: dict, path: Path | str) -> None:
    """Check every top-level field of a loaded checkpoint before anything is built from it.

    Types and ranges of the fields every consumer reads (side, the net's config and weights,
    counters, learner step, clock); the parts only resuming reads (replay, games in progress,
    random states, optimiser) are checked for their kind here and in full by their owners.

    Raises:
        CheckpointError: naming the file and the field.
    """
    for key in ("side", "model"):
        if key not in payload:
            raise CheckpointError(f"{path}: checkpoint lacks the field {key}")
    side = payload["side"]
    if not _is_int(side) or side not in SIDES:
        raise _field_error(path, "side", f"an integer from {SIDES[0]} to {SIDES[-1]}", side)
    model = payload["model"]
    _check_mapping(path, "model", model)
    _check_mapping(path, "model.config", model.get("config"))
    try:
        config = NetConfig.from_dict(model["config"])
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{path}: field model.config: {error}") from error
    state = model.get("state")
    _check_mapping(path, "model.state", state)
    for name, tensor in state.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise _field_error(path, f"model.state[{name!r}]", "a named tensor", tensor)
    _check_weights(path, config, state)
    counters = payload.get("counters", {})
    _check_mapping(path, "counters", counters)
    for name, value in counters.items():
        if not _is_number(value) or value < 0:
            raise _field_error(path, f"counters.{name}", "a number >= 0", value)
    learner = payload.get("learner", {})
    _check_mapping(path, "learner", learner)
    step = learner.get("step", 0)
    if not _is_int(step) or step < 0:
        raise _field_error(path, "learner.step", "an integer >= 0", step)
    clock = payload.get("clock") or {}
    _check_mapping(path, "clock", clock)
    for name in ("seconds", "cpu_seconds"):
        seconds = clock.get(name, 0.0)
        if not _is_number(seconds) or seconds < 0:
            raise _field_error(path, f"clock.{name}", "a number >= 0", seconds)
    for key in ("config", "rng", "selfplay"):
        if key in payload:
            _check_mapping(path, key, payload[key])
    for key in ("replay", "resign"):
        _check_mapping(path, key, payload.get(key), optional=True)


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
