"""The nets that ship with the package, named in agent specs without a path.

``mcts:pretrained:400`` or ``net:pretrained`` plays the shipped side-10 net from any folder
right after ``pip install``. `MANIFEST` (``manifest.json`` beside the files) lists each name
with its file, the file's SHA-256, the side, how it was trained (recipe, command, steps,
training minutes, machine) and its measured strength; `pretrained_file` checks the SHA-256
before the file is used, and the file is an ordinary checkpoint, read with
``torch.load(..., weights_only=True)`` and its own checks like any other.

``pretrained`` and ``pretrained_seed1`` are the side-10 nets to play and study, replaced when
stronger ones ship; ``pretrained_side5`` is the solved side 5's reference agent
(``mcts:pretrained_side5:200``), its scores against the exact values in its entry.
``pool_a``, ``pool_b``, ... (``"pool": true`` in the manifest) are the side-10
rating pool's own nets (`trapy_rl.eval.pool`), not offered as players: names that never move,
so that shipping a net does not move the pool's scale.

A path that exists wins over a shipped name: ``net:pretrained`` in a folder holding a
``pretrained`` run folder plays that run.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

__all__ = ["FOLDER", "MANIFEST", "pretrained_file", "pretrained_info", "pretrained_names"]

FOLDER = Path(__file__).resolve().parent
MANIFEST = FOLDER / "manifest.json"


def _manifest(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / MANIFEST.name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def pretrained_names(folder: Path = FOLDER) -> list[str]:
    """The names of the shipped nets (``pretrained``, ...)."""
    return sorted(_manifest(folder))


def pretrained_info(name: str, folder: Path = FOLDER) -> dict[str, Any]:
    """The manifest's entry of ``name``: file, sha256, side, training, strength.

    Raises:
        KeyError: for a name that is not shipped.
    """
    entries = _manifest(folder)
    if name not in entries:
        raise KeyError(f"no shipped net named {name!r} (there are: {sorted(entries)})")
    return entries[name]


def pretrained_file(name: str, folder: Path = FOLDER) -> Path:
    """The checkpoint file of the shipped net ``name``, its SHA-256 checked.

    Raises:
        KeyError: for a name that is not shipped.
        ValueError: when the file is missing or its bytes are not the ones shipped.
    """
    info = pretrained_info(name, folder)
    path = folder / info["file"]
    if not path.is_file():
        raise ValueError(f"{path}: the shipped net {name!r} is missing from the installation")
    stat = path.stat()
    if _sha256(str(path), stat.st_size, stat.st_mtime_ns) != info["sha256"]:
        raise ValueError(f"{path}: the shipped net {name!r} is damaged (its SHA-256 differs)")
    return path


@functools.cache
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """The file's SHA-256, computed once per (path, size, mtime)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
