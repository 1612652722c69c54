"""Choosing the device and the reduced precision the network runs in.

The bf16 rule on CPU: bf16 autocast is worth it only where the CPU computes bf16 natively,
that is where oneDNN (mkldnn) is available and ``/proc/cpuinfo`` lists ``avx512_bf16`` or an
AMX flag (``amx_bf16``, ``amx_tile``): Intel Cooper Lake, Sapphire Rapids and later, AMD Zen 4
and later. Elsewhere (AVX2-only CPUs such as AMD Zen 3) bf16 is emulated by conversions and is
slower than fp32, so it is not used by default. On CUDA, bf16 is used where
``torch.cuda.is_bf16_supported()`` (Ampere and later); fp16 works on any CUDA device.
"""

from __future__ import annotations

import functools
from pathlib import Path

import torch

__all__ = ["bf16_supported", "cpu_bf16_flags", "resolve_device"]

_BF16_FLAGS = ("avx512_bf16", "amx_bf16", "amx_tile")


@functools.lru_cache(maxsize=1)
def cpu_bf16_flags() -> tuple[str, ...]:
    """The bf16-relevant flags this CPU reports in /proc/cpuinfo (empty where unreadable)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            return tuple(flag for flag in _BF16_FLAGS if flag in flags)
    return ()


def bf16_supported(device: torch.device | str) -> bool:
    """Whether bf16 autocast is fast on ``device`` (see the rule in this module's docstring)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        return torch.backends.mkldnn.is_available() and bool(cpu_bf16_flags())
    return False


def resolve_device(device: torch.device | str = "auto") -> torch.device:
    """``"auto"`` -> cuda when available, else cpu; ``"cpu"``/``"cuda"``/``"cuda:1"`` as given.

    Raises:
        ValueError: for an unknown device, or cuda asked for where there is none.
    """
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}") from error
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}")
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available here")
    return resolved
