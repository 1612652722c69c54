"""A corpus of damaged and hostile checkpoints through every consumer.

Every consumer (loading, exporting, agent specs, tournaments over a run folder, resuming,
``trapy-gtp``, ``trapy-play``, ``trapy-eval``, ``trapy-openings``) must refuse each file with
one line that names it, never load it and never print a traceback.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tiny import TINY_NET, tiny_payload, write_tiny_checkpoint

from trapy_rl.game.board import Board
from trapy_rl.train.checkpoint import (
    CheckpointError,
    export_network,
    load_checkpoint,
    load_network,
    save_checkpoint,
)

SIDE = 4


def _flip(data: bytes, position: int) -> bytes:
    damaged = bytearray(data)
    damaged[position] ^= 0x10
    return bytes(damaged)


def _with(change) -> dict:
    payload = tiny_payload(side=SIDE)
    change(payload)
    return payload


def corpus(folder: Path) -> dict[str, Path]:
    """name -> a bad checkpoint file in ``folder``."""
    good = write_tiny_checkpoint(folder / "good.pt", side=SIDE).read_bytes()
    files = {
        "flipped_first_byte": _flip(good, 0),
        "flipped_middle_byte": _flip(good, len(good) // 2),
        "flipped_in_zip_directory": _flip(good, len(good) - 120),
        "flipped_in_checksum": _flip(good, len(good) - 10),
        "truncated": good[: len(good) // 3],
        "empty": b"",
        "text": b"not a checkpoint\n" * 20,
    }
    paths = {}
    for name, data in files.items():
        paths[name] = folder / f"{name}.pt"
        paths[name].write_bytes(data)
    buffer = io.BytesIO()
    torch.save({"format": "trapy_rl.checkpoint", "version": 1, "run": shutil.rmtree}, buffer)
    paths["code_in_pickle"] = folder / "code_in_pickle.pt"
    paths["code_in_pickle"].write_bytes(buffer.getvalue())
    paths["foreign"] = folder / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, paths["foreign"])
    fields = {
        "side_as_text": lambda p: p.update(side="4"),
        "side_too_large": lambda p: p.update(side=10_000),
        "huge_net": lambda p: p["model"]["config"].update(channels=200_000, blocks=1_000),
        "unknown_net_key": lambda p: p["model"]["config"].update(layers=3),
        "iteration_as_text": lambda p: p["counters"].update(iteration="abc"),
        "weights_of_another_net": lambda p: p["model"]["config"].update(channels=32),
        "no_model": lambda p: p.pop("model"),
    }
    for name, change in fields.items():
        paths[name] = save_checkpoint(folder / f"{name}.pt", _with(change))
    # save_checkpoint writes the current version: a file of another one, as torch writes it
    paths["other_version"] = folder / "other_version.pt"
    torch.save({**tiny_payload(side=SIDE), "format": "trapy_rl.checkpoint", "version": 7},
               paths["other_version"])  # fmt: skip
    return paths


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    return corpus(tmp_path_factory.mktemp("bad"))


def consumers(path: Path):
    """(name, call) for every in-process consumer of a checkpoint file."""
    from trapy_rl.agents import parse_agent

    board = Board(SIDE)
    yield "load_checkpoint", lambda: load_checkpoint(path)
    yield "load_network", lambda: load_network(path)
    yield "export_network", lambda: export_network(path, path.with_suffix(".export"))
    yield "mcts agent", lambda: parse_agent(f"mcts:{path}:4", board=board, seed=0)
    yield "net agent", lambda: parse_agent(f"net:{path}", board=board, seed=0)


def test_every_bad_file_is_refused_by_every_consumer_naming_the_file(bad_files):
    refused = 0
    for name, path in bad_files.items():
        for consumer, call in consumers(path):
            with pytest.raises(CheckpointError) as caught:
                call()
                pytest.fail(f"{consumer} accepted {name}")
            message = str(caught.value)
            assert str(path) in message, (name, consumer, message)
            assert "\n" not in message, (name, consumer, message)
            refused += 1
    assert refused == len(bad_files) * 5


def test_a_run_folder_of_bad_files_is_refused_by_tournaments(tmp_path, bad_files):
    from trapy_rl.eval.tournament import run_checkpoints

    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    shutil.copyfile(bad_files["flipped_middle_byte"], folder / "ckpt_000003.pt")
    with pytest.raises(CheckpointError, match=r"ckpt_000003\.pt: damaged"):
        run_checkpoints(tmp_path / "run")


def test_resuming_from_bad_files_is_refused(tmp_path, bad_files):
    from trapy_rl.train import train
    from trapy_rl.train.settings import TrainConfig

    for name in ("flipped_middle_byte", "iteration_as_text", "huge_net", "truncated"):
        config = TrainConfig(
            side=SIDE, iterations=1, model=TINY_NET, run_dir=str(tmp_path / name)
        ).replace({"resume": str(bad_files[name]), "logger.progress": False})
        with pytest.raises(CheckpointError, match=str(bad_files[name])):
            train(config)


@pytest.mark.parametrize("command", ["gtp", "play"])
def test_gtp_and_play_refuse_bad_files_in_one_line(bad_files, command, capsys):
    from trapy_rl import gtp, play

    main = gtp.main if command == "gtp" else play.main
    for name in ("flipped_middle_byte", "code_in_pickle", "huge_net", "side_as_text"):
        path = bad_files[name]
        try:
            code = main([f"mcts:{path}:4", "--side", str(SIDE)])
        except SystemExit as stop:  # argparse's error(): usage, then the message
            code = stop.code
        err = capsys.readouterr().err.strip()
        assert code != 0, name
        assert str(path) in err and "Traceback" not in err, (name, err)
        assert len(err.splitlines()) <= 2, (name, err)  # the message and a hint (usage)


def run_cli(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("HYDRA_FULL_ERROR", None)
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_eval_and_openings_command_lines_refuse_a_damaged_file_in_one_line(tmp_path, bad_files):
    path = bad_files["flipped_middle_byte"]
    for module, args in (
        ("trapy_rl.eval.cli", [f"agents=[random,'mcts:{path}:4']", "games=2", f"side={SIDE}"]),
        ("trapy_rl.analysis.cli", [f"checkpoint={path}", f"side={SIDE}", "estimator=net"]),
    ):
        done = run_cli(module, *args, f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
        assert done.returncode == 2, (module, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr + done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 2 and str(path) in lines[0] and "damaged" in lines[0], lines
