"""Ctrl-C and SIGTERM at any moment of a command, start-up and shutdown included: exit 130 or
143, one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trapy_rl.errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from trapy_rl.launch import COMMANDS, launch

ROOT = Path(__file__).resolve().parents[1]


def _as_from_a_terminal() -> None:
    """The child's SIGINT at its default, as a command typed in a terminal has it, also when
    the suite itself runs as a background job (which inherits SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# Commands whose module sends the process a signal (SIGNAL) at one moment of its life.
MODULES = {
    "during_import": "import os, signal, time\n"
    "os.kill(os.getpid(), signal.SIGNAL)\ntime.sleep(5)\ndef main(): return 0\n",
    "during_main": "import os, signal, time\n"
    "def main():\n    os.kill(os.getpid(), signal.SIGNAL)\n    time.sleep(5)\n",
    "during_shutdown": "import atexit, os, signal, time\n"
    "def bye():\n    os.kill(os.getpid(), signal.SIGNAL)\n    time.sleep(5)\n"
    "def main():\n    print('done', flush=True)\n    atexit.register(bye)\n    return 0\n",
}
ENDINGS = {"SIGINT": (EXIT_INTERRUPTED, "interrupted"), "SIGTERM": (EXIT_TERMINATED, "terminated")}


@pytest.mark.parametrize("signame", sorted(ENDINGS))
@pytest.mark.parametrize("moment", sorted(MODULES))
def test_a_signal_at_any_moment_exits_130_or_143_with_one_line(tmp_path, moment, signame):
    (tmp_path / f"{moment}.py").write_text(MODULES[moment].replace("SIGNAL", signame))
    code = (
        "import sys; from trapy_rl import launch; "
        f"launch.COMMANDS['prog'] = {moment!r}; sys.exit(launch.launch('prog'))"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    for name in ("HYDRA_FULL_ERROR", "TRAPY_DEBUG"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        preexec_fn=_as_from_a_terminal,
    )
    code, word = ENDINGS[signame]
    assert done.returncode == code, done
    assert done.stderr == f"prog: {word}\n", done.stderr


def test_every_console_script_runs_through_the_launcher(monkeypatch):
    import tomllib

    import trapy_rl.launch as module

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == set(COMMANDS)
    seen = []
    monkeypatch.setattr(module, "launch", seen.append)
    for prog, target in scripts.items():
        name, _, function = target.partition(":")
        assert name == "trapy_rl.launch", target
        getattr(module, function)()
        assert seen[-1] == prog, (prog, target)


def test_the_launcher_returns_the_command_exit_code(monkeypatch, tmp_path):
    (tmp_path / "seven.py").write_text("def main():\n    return 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(COMMANDS, "seven", "seven")
    try:
        assert launch("seven") == 7
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("signame", sorted(ENDINGS))
def test_trapy_train_stopped_while_it_starts_exits_130_or_143_with_one_line(tmp_path, signame):
    code = "import sys; from trapy_rl.launch import train; sys.argv[0] = 'trapy-train'; "
    code += "sys.exit(train())"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("HYDRA_FULL_ERROR", None)
    process = subprocess.Popen(
        [sys.executable, "-c", code, "debug=smoke", f"hydra.run.dir={tmp_path}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_as_from_a_terminal,
    )
    time.sleep(1.5)  # past the package's own import: torch, Hydra and the command's modules
    process.send_signal(getattr(signal, signame))
    out, err = process.communicate(timeout=120)
    exit_code, word = ENDINGS[signame]
    assert process.returncode == exit_code, (out, err)
    assert "Traceback" not in err + out, err
    # Before the run's first iteration nothing is worth saving: one line, nothing else.
    assert err == f"trapy-train: {word}\n" and out == "", (out, err)


def test_a_command_started_with_sigint_ignored_keeps_ignoring_it(tmp_path):
    """A background job of a script inherits SIGINT ignored: the launcher leaves it so."""
    (tmp_path / "shrug.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n"
        "def main():\n    os.kill(os.getpid(), signal.SIGINT)\n    return 0\n"
    )
    code = "import sys; from trapy_rl import launch; "
    code += "launch.COMMANDS['prog'] = 'shrug'; sys.exit(launch.launch('prog'))"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert done.returncode == 0 and done.stderr == "", done
