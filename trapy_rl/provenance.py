"""Where a result came from, as the records beside it keep it: the checkout's commit and the
machine.

>>> machine().count(",") >= 1
True
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

__all__ = ["git_commit", "machine"]


def git_commit(folder: str | os.PathLike) -> str:
    """The short commit of the git checkout holding ``folder`` ("unknown" outside one, or
    without git)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def machine(*, libraries: bool = False) -> str:
    """One line naming the CPU (its model name where Linux says it) and its logical cores;
    with ``libraries``, the versions of Python, numpy and torch (and torch's threads) too."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    parts = [cpu, f"{os.cpu_count()} cores"]
    if libraries:
        import numpy

        parts += [f"python {platform.python_version()}", f"numpy {numpy.__version__}"]
        try:
            import torch

            parts.append(f"torch {torch.__version__} ({torch.get_num_threads()} threads)")
        except ImportError:
            pass
    return ", ".join(parts)
