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
        (MemoryError(), EXIT_OS_ERROR),
    ],
)
def test_a_user_error_is_one_line_and_an_exit_code(error, code, capsys, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.delenv("TRAPY_DEBUG", raising=False)
    with pytest.raises(SystemExit) as stop, reported("prog"):
        raise error
    assert stop.value.code == code
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("prog: "), lines
    if not isinstance(error, KeyboardInterrupt):
        assert " ".join(str(error).split()) in lines[0]


def test_a_bug_keeps_its_traceback_and_debug_shows_user_errors_too(monkeypatch):
    with pytest.raises(KeyError), reported("prog"):
        raise KeyError("a bug")
    monkeypatch.setenv("TRAPY_DEBUG", "1")
    with pytest.raises(ValueError), reported("prog"):
        raise ValueError("shown with its traceback")


# A process of each command, one mistake of each kind: a setting the composition refuses, an
# agent, a checkpoint, a device. What each composition mistake says is tested in-process
# (tests/test_config.py), as a process takes a second or more to start.
@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("train.cli", ["resume=/no/such/run"], "trapy-train: error: /no/such/run: no such "
         "checkpoint"),
        ("train.cli", ["iteratons=3"], "trapy-train: error: unknown setting 'iteratons' (did you "
         "mean 'iterations'?)"),
        ("eval.cli", ["gamez=3"], "trapy-eval: error: unknown setting 'gamez' (did you mean "
         "'games'?)"),
        # agents and checkpoints: before any plan line, run folder or bar
        ("train.cli", ["eval.opponents=[bogus:1]"], "trapy-train: error: eval.opponents: unknown "
         "agent spec 'bogus:1'"),
        ("train.cli", ["eval.final_opponents=['mcts:/no/such.pt:4']"], "trapy-train: error: "
         "eval.final_opponents: /no/such.pt"),
        ("eval.cli", ["agents=[random,wizard]", "side=3", "games=2"], "trapy-eval: error: "
         "unknown agent spec 'wizard'"),
        ("eval.cli", ["agents=[random,'mcts:/no/such.pt:4']", "side=4"], "trapy-eval: error: "
         "/no/such.pt"),
        ("eval.cli", ["agents=[random]", "baselines=[wizard]"], "trapy-eval: error: unknown "
         "agent spec 'wizard'"),
        ("train.cli", ["device=cuda:99"], "trapy-train: error: device 'cuda:99'"),
        ("analysis.cli", ["checkpoint=/no/such.pt", "estimator=net", "side=3"], "trapy-openings: "
         "error: /no/such.pt: no such checkpoint"),
    ],
)  # fmt: skip
def test_a_command_says_a_bad_setting_in_one_line(tmp_path, command, args, message):
    env = {key: value for key, value in os.environ.items() if key != "HYDRA_FULL_ERROR"}
    preset = ["debug=smoke"] if command == "train.cli" else []
    done = subprocess.run(
        [sys.executable, "-m", f"trapy_rl.{command}", *preset, *args, f"hydra.run.dir={tmp_path}"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == EXIT_USER_ERROR, done.stderr
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == "", done.stdout  # no plan line, no bar before the refusal
    assert not (tmp_path / ".hydra").exists()  # refused before Hydra wrote its run folder


def test_an_option_mistake_of_the_front_ends_is_one_line(capsys):
    from trapy_rl.errors import ArgumentParser

    parser = ArgumentParser(prog="prog")
    parser.add_argument("--side", type=int)
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--side", "abc"])
    assert stop.value.code == EXIT_USER_ERROR
    assert capsys.readouterr().err == (
        "prog: error: argument --side: invalid int value: 'abc' (prog --help shows the usage)\n"
    )
