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
import re
from pathlib import Path

import torch

__all__ = ["DEVICES", "bf16_supported", "check_device", "cpu_bf16_flags", "resolve_device"]

DEVICES = "'auto', 'cpu' or 'cuda[:i]'"
"""The devices a setting may name, in words."""
_DEVICE_NAME = re.compile(r"auto|cpu(:0)?|cuda(:\d{1,3})?")

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


def check_device(device: str, key: str = "device") -> str:
    """``device`` if it names a device this toolkit runs on (`DEVICES`), whether or not this
    machine has it (`resolve_device` checks that); else a ValueError naming ``key``."""
    if not isinstance(device, str) or not _DEVICE_NAME.fullmatch(device):
        raise ValueError(f"{key} must be {DEVICES}, got {device!r}")
    return device


def resolve_device(device: torch.device | str = "auto") -> torch.device:
    """``"auto"`` -> cuda when available, else cpu; ``"cpu"``/``"cuda"``/``"cuda:1"`` as given.

    Raises:
        ValueError: for an unknown device, or cuda asked for where there is none.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if check_device(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available here")
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        raise ValueError(
            f"device {device!r} asked for, but this machine has {torch.cuda.device_count()} "
            "CUDA devices"
        )
    return resolved
