"""User errors become one line and an exit code; bugs keep their traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from trapy_rl.errors import EXIT_INTERRUPTED, EXIT_OS_ERROR, EXIT_USER_ERROR, reported


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ValueError("seed must be >= 0,\n got -1"), EXIT_USER_ERROR),
        (FileNotFoundError(2, "No such file or directory", "x.pt"), EXIT_OS_ERROR),
        (OSError(28, "No space left on device"), EXIT_OS_ERROR),
        (KeyboardInterrupt(), EXIT_INTERRUPTED),
    ],
)
def test_a_user_error_is_one_line_and_an_exit_code(error, code, capsys, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.delenv("TRAPY_DEBUG", raising=False)
    with pytest.raises(SystemExit) as stop, reported("prog"):
        raise error
    assert stop.value.code == code
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("prog: ")
    assert len(lines) <= 2  # the message, and the hint for errors
    if not isinstance(error, KeyboardInterrupt):
        assert " ".join(str(error).split()) in lines[0]


def test_a_bug_keeps_its_traceback_and_debug_shows_user_errors_too(monkeypatch):
    with pytest.raises(KeyError), reported("prog"):
        raise KeyError("a bug")
    monkeypatch.setenv("TRAPY_DEBUG", "1")
    with pytest.raises(ValueError), reported("prog"):
        raise ValueError("shown with its traceback")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["seed=-1"], "trapy-train: error: seed must be >= 0, got -1"),
        (["resume=/no/such/run"], "trapy-train: error: /no/such/run: no such checkpoint"),
    ],
)
def test_trapy_train_says_a_bad_setting_in_one_line(tmp_path, args, message):
    env = {key: value for key, value in os.environ.items() if key != "HYDRA_FULL_ERROR"}
    command = [sys.executable, "-m", "trapy_rl.train.cli", "debug=smoke", *args]
    done = subprocess.run(
        [*command, f"hydra.run.dir={tmp_path}"], capture_output=True, text=True, env=env
    )
    assert done.returncode == EXIT_USER_ERROR
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[0].startswith(message), done.stderr
