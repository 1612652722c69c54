"""A read-only install: where numba cannot write its cache (no writable ``__pycache__`` beside
the package, a HOME that cannot hold ``~/.cache``), the toolkit imports and runs with at most
one warning line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import trapy_rl

PACKAGE = Path(trapy_rl.__file__).parent

# Imports every compiled module (each function asks numba for its cache when it is defined)
# and runs one kernel: the solver's, that numba refused first.
USE = """
import numpy as np
import trapy_rl.solve.solver, trapy_rl.mcts.kernels, trapy_rl.game.kernels
from trapy_rl.solve.connections import _find
print(_find(np.array([1, 2, 2]), 0))
"""


CHECK = """
assert trapy_rl.__file__.startswith({!r}), trapy_rl.__file__
"""


def writable_install(tmp_path: Path) -> Path:
    """A copy of the package without its compiled code."""
    root = tmp_path / "install"
    shutil.copytree(PACKAGE, root / "trapy_rl", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def read_only_install(tmp_path: Path) -> Path:
    """A copy of the package where no ``__pycache__`` folder can be made (a file holds each
    name: even root cannot write there), beside it a HOME that is a file."""
    root = writable_install(tmp_path)
    for folder in [root / "trapy_rl", *(root / "trapy_rl").rglob("*")]:
        if folder.is_dir():
            (folder / "__pycache__").write_text("")
    return root


def run_as_service_user(tmp_path: Path, install: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    home = tmp_path / "home"
    home.write_text("")  # not a folder: ~/.cache cannot be made
    env |= {"HOME": str(home), "PYTHONPATH": str(install), "TMPDIR": str(tmp)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", USE + CHECK.format(str(install))],
        capture_output=True,
        text=True,
        env=env,
        cwd=install,  # -c puts the working folder first on the path
        timeout=300,
    )


def test_an_install_numba_cannot_cache_in_imports_with_one_warning_line(tmp_path):
    install = read_only_install(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = run_as_service_user(tmp_path, install, tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["2"], done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) <= 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "cache" in done.stderr, done.stderr
    # The fallback cache is this user's own folder in the temporary folder; a second start
    # reads it.
    (cache,) = tmp.iterdir()
    assert cache.stat().st_uid == os.getuid() and cache.stat().st_mode & 0o077 == 0
    assert any(cache.rglob("*.nbi"))
    again = run_as_service_user(tmp_path, install, tmp)
    assert again.returncode == 0 and len(again.stderr.splitlines()) <= 1, again.stderr


def test_a_shared_folder_is_never_the_cache_and_without_one_numba_compiles_each_run(
    monkeypatch, tmp_path, caplog
):
    from trapy_rl.game import compiled

    monkeypatch.setattr(compiled.tempfile, "tempdir", str(tmp_path))
    planted = tmp_path / f"trapy_rl-numba-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)  # a folder others can write in: it could hold their machine code
    compiled._private_temporary_folder.cache_clear()
    monkeypatch.setattr(compiled, "_warned", [])
    monkeypatch.setattr(compiled, "_has_cache_folder", lambda function: False)
    try:
        assert compiled._private_temporary_folder() is None
        twice = compiled.njit()(lambda x: 2 * x)
        thrice = compiled.njit()(lambda x: 3 * x)
        assert (twice(2), thrice(2)) == (4, 6)
    finally:
        compiled._private_temporary_folder.cache_clear()
    (record,) = caplog.records  # one warning, however many kernels
    assert "compiled again in each run" in record.getMessage()


def run_in(install: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(install)
    return subprocess.run(
        [sys.executable, "-c", USE + CHECK.format(str(install))],
        capture_output=True, text=True, env=env, cwd=install, timeout=300,
    )  # fmt: skip


def test_a_change_in_another_kernel_module_compiles_the_kernels_afresh(tmp_path):
    install = writable_install(tmp_path)
    cache = install / "trapy_rl" / "solve" / "__pycache__"

    def compiled_code() -> dict[str, int]:
        return {p.name: p.stat().st_mtime_ns for p in cache.glob("connections._find-*.nb*")}

    assert run_in(install).stdout.split() == ["2"]
    first = compiled_code()
    assert first and (cache / "trapy_rl-sources.sha256").is_file()
    assert run_in(install).stdout.split() == ["2"]
    assert compiled_code() == first  # loaded, not compiled again
    # numba alone would load _find's old code: its own file did not change.
    with open(install / "trapy_rl" / "game" / "board.py", "a") as board:
        board.write("\n# an edit in another module of the kernels\n")
    done = run_in(install)
    assert done.stdout.split() == ["2"], done.stderr[-3000:]
    again = compiled_code()
    assert again.keys() == first.keys() and all(again[k] > first[k] for k in first)


def test_a_folder_of_stale_compiled_code_is_emptied_once_and_stamped(monkeypatch, tmp_path):
    from trapy_rl.game import compiled

    for name in ("a.f-1.py311.nbi", "a.f-1.py311.1.nbc", "a.cpython-311.pyc"):
        (tmp_path / name).write_text("")
    monkeypatch.setattr(compiled, "sources_digest", lambda: "new")
    compiled._drop_stale.__wrapped__(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.cpython-311.pyc",
        "trapy_rl-sources.sha256",
    ]
    (tmp_path / "a.f-1.py311.nbi").write_text("")
    compiled._drop_stale.__wrapped__(str(tmp_path))  # the stamp is today's: kept
    assert (tmp_path / "a.f-1.py311.nbi").exists()
