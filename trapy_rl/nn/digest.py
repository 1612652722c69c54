"""Files named by their bytes: the SHA-256 that result caches, opening tables and exported
models record of the checkpoint they came from.

Torch-free, so that what only hashes a file (an ONNX agent's cache key) needs no torch import.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["file_sha256"]

_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, as 64 hex digits.

    The digest is remembered per resolved path, size and modification time, so hashing the
    same checkpoint again (say, once per match it plays) reads it once.

    Raises:
        OSError: when the file cannot be read.
    """
    path = Path(path)
    stat = path.stat()
    memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    digest = _HASHES.get(memo)
    if digest is None:
        sha = hashlib.sha256()
        with path.open("rb") as data:
            for block in iter(lambda: data.read(1 << 20), b""):
                sha.update(block)
        digest = _HASHES[memo] = sha.hexdigest()
    return digest
