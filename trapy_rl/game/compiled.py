"""numba's ``njit`` for the toolkit's kernels, with a cache wherever the toolkit is installed.

``cache=True`` keeps the machine code between runs, beside the source (``__pycache__``) or in
the user's cache folder (``~/.cache/numba``); where numba can write in neither (a read-only
install, run by a service whose HOME is not writable) it refuses to compile at all ("cannot
cache function"). `njit` first asks numba whether it has a place for the function's cache;
where it has none, the cache goes to this user's own folder in the temporary folder
(``$TMPDIR/trapy_rl-numba-<uid>``, made private; one made by another user is never read, as a
cache is machine code loaded as it is), or, failing that, nowhere: the kernels are compiled
again in each run. Either way one warning line says so, once a process. Child processes (the
self-play workers) inherit the folder through ``NUMBA_CACHE_DIR`` and say nothing.

numba keys a function's cache on its own file alone: a kernel that calls a kernel of another
module, or compiles in another module's constant, would load machine code built from the
other module's old text. So each cache folder holds a stamp, the digest of every source of
the folders that hold kernels (`KERNEL_FOLDERS`); where it differs, the folder's compiled code
is deleted before numba reads it, and the kernels are compiled afresh.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numba
from numba.core import caching, config

__all__ = ["KERNEL_FOLDERS", "njit", "sources_digest"]

# The package's folders whose modules hold the kernels and all they call or compile in.
KERNEL_FOLDERS = ("game", "mcts", "solve")
STAMP = "trapy_rl-sources.sha256"

F = TypeVar("F", bound=Callable[..., Any])
_log = logging.getLogger(__name__)
_warned: list[str] = []


def njit(**options: Any) -> Callable[[F], Any]:
    """``numba.njit(cache=..., **options)``: cached where numba (or the fallback) can write.

    >>> @njit(nogil=True)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21)
    42
    """

    def compile_(function: F) -> Any:
        cache = _can_cache(function)
        if cache:  # numba's folder for this function's compiled code
            _drop_stale(caching.FunctionCache(function)._cache_path)
        return numba.njit(cache=cache, **options)(function)

    return compile_


def _can_cache(function: Callable[..., Any]) -> bool:
    """Whether numba has a cache folder for ``function``, after the fallback if need be."""
    if _has_cache_folder(function):
        return True
    folder = _private_temporary_folder()
    if folder is not None:
        config.CACHE_DIR = folder
        os.environ["NUMBA_CACHE_DIR"] = folder  # for child processes too
        if _has_cache_folder(function):
            _warn_once(
                "trapy_rl: numba cannot write its cache beside the package or in the user's "
                f"cache folder; compiled code is cached in {folder}"
            )
            return True
    _warn_once(
        "trapy_rl: numba has no writable cache folder; the kernels are compiled again in each "
        "run (set NUMBA_CACHE_DIR to a writable folder to keep them)"
    )
    return False


@functools.cache
def sources_digest() -> str:
    """SHA-256 (hex) of the ``.py`` files of `KERNEL_FOLDERS`, by name and content."""
    package, digest = Path(__file__).resolve().parents[1], hashlib.sha256()
    for folder in KERNEL_FOLDERS:
        for path in sorted((package / folder).glob("*.py")):
            digest.update(f"{folder}/{path.name}\0".encode() + path.read_bytes())
    return digest.hexdigest()


@functools.cache  # once a folder and process
def _drop_stale(folder: str) -> None:
    """Delete the compiled code in ``folder`` unless its stamp is today's `sources_digest`;
    then stamp it. Best effort: a file another process removed first is no loss."""
    stamp = os.path.join(folder, STAMP)
    try:
        with open(stamp) as file:
            if file.read() == sources_digest():
                return
    except OSError:
        pass
    try:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.endswith((".nbi", ".nbc")):
                os.remove(os.path.join(folder, name))
        temporary = f"{stamp}.{os.getpid()}"
        with open(temporary, "w") as file:
            file.write(sources_digest())
        os.replace(temporary, stamp)
    except OSError:
        pass


def _has_cache_folder(function: Callable[..., Any]) -> bool:
    """numba's own test: a cache locator that can write (it raises RuntimeError without)."""
    try:
        caching.FunctionCache(function)
    except RuntimeError:
        return False
    return True


@functools.cache
def _private_temporary_folder() -> str | None:
    """``<temporary folder>/trapy_rl-numba-<uid>``, made 0700; None when it cannot be made or
    is not this user's own (another user could have put machine code there)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    folder = os.path.join(tempfile.gettempdir(), f"trapy_rl-numba-{'user' if uid is None else uid}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o022:
        return None
    if uid is not None and info.st_uid != uid:
        return None
    return folder


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.append(message)
        _log.warning(message)
