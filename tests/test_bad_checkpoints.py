"""A corpus of damaged and hostile checkpoints through every consumer.

Every consumer (loading, exporting, agent specs, tournaments over a run folder, resuming,
``trapy-gtp``, ``trapy-play``, ``trapy-eval``, ``trapy-openings``, ``trapy-export``, the web
board's agent field) must refuse each file with one line that names it, never load it and never
print a traceback. The hostile files are small (edited copies of a tiny run's checkpoint) and
claim sizes that would take far more memory than the 2 GiB each consumer runs under here: they
must be refused before anything is allocated from them.
"""

from __future__ import annotations

import copy
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from tiny import TINY_NET, tiny_payload, write_tiny_checkpoint

from trapy_rl.game.board import Board
from trapy_rl.nn.network import PolicyValueNet
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
        assert len(err.splitlines()) == 1, (name, err)  # the message, its hint on the line


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
        assert len(lines) == 1 and str(path) in lines[0] and "damaged" in lines[0], lines


# ------------------------------------------------------------------ hostile files, memory capped
MEMORY_LIMIT = 2 * 2**30  # bytes of address space each consumer runs in
CONSUMERS = ("resume", "trapy-eval", "trapy-gtp", "trapy-play", "trapy-openings",
             "trapy-export", "web")  # fmt: skip


def forged_net(payload: dict, **widths: int) -> None:
    """Give ``payload`` a net config with ``widths`` (past the caps: not checked here) and
    weights of those shapes that are views repeating one number: a few bytes in the file, any
    size once loaded, as a hostile file would hold them."""
    config = copy.copy(TINY_NET)  # a copy without __post_init__: the caps are not applied
    for name, value in widths.items():
        object.__setattr__(config, name, value)
    with torch.device("meta"):
        shapes = {name: t.shape for name, t in PolicyValueNet(config).state_dict().items()}
    state = payload["model"]["state"]
    payload["model"] = {
        "config": {**payload["model"]["config"], **widths},
        "state": {
            name: state[name]
            if name in state and state[name].shape == shape
            else torch.zeros((), dtype=state.get(name, torch.zeros(())).dtype).expand(shape)
            for name, shape in shapes.items()
        },
    }


def laughs(depth: int = 9, width: int = 10) -> list:
    """A list of ``width ** depth`` strings that pickles in a few hundred bytes (each level
    holds the one list below it ``width`` times)."""
    level: list = ["x"] * width
    for _ in range(depth - 1):
        level = [level] * width
    return level


def deflated(source: Path, target: Path) -> Path:
    """``source``'s torch file with its members compressed (torch reads them; a zip that
    inflates could hold any size)."""
    with zipfile.ZipFile(source) as plain, zipfile.ZipFile(target, "w") as packed:
        for member in plain.infolist():
            packed.writestr(member.filename, plain.read(member), zipfile.ZIP_DEFLATED)
    return target


def hostile_corpus(run_checkpoint: Path, folder: Path) -> dict[str, tuple[Path, tuple[str, ...]]]:
    """name -> (a hostile file made from the tiny run's checkpoint, the consumers that read
    the part it forges: all of them, or resuming alone for the replay window)."""
    from trapy_rl.nn.checkpoint import checksum_trailer
    from trapy_rl.train.checkpoint import load_checkpoint

    def edited(name: str, change) -> Path:
        """The run's checkpoint changed by ``change``, written as torch writes it, with a
        matching checksum (save_checkpoint would walk every object of the change)."""
        payload = load_checkpoint(run_checkpoint)
        payload.pop("path")
        change(payload)
        buffer = io.BytesIO()
        torch.save(payload, buffer)
        path = folder / f"{name}.pt"
        path.write_bytes(buffer.getvalue() + checksum_trailer(buffer.getvalue()))
        return path

    def replay(**changes):
        return lambda p: p["replay"].update(changes)

    files = {
        "value_hidden_1e9": edited("value_hidden_1e9", lambda p: forged_net(p, value_hidden=10**9)),
        "policy_channels_1e8": edited(
            "policy_channels_1e8", lambda p: forged_net(p, policy_channels=10**8)
        ),
        "net_1024x64": edited("net_1024x64", lambda p: forged_net(p, channels=1024, blocks=64)),
        "replay_policies_view": edited(
            "replay_policies_view",
            lambda p: p["replay"].update(policies=torch.zeros(()).expand(10**9, 29)),
        ),
        "optimizer_view": edited(
            "optimizer_view",
            lambda p: p["learner"]["optimizer"]["state"][0].update(
                exp_avg=torch.zeros(()).expand(10**8, 16, 9, 3, 3)
            ),
        ),
        "games_in_progress_view": edited(
            "games_in_progress_view",
            lambda p: p["selfplay"].update(
                history=torch.zeros((), dtype=torch.int64).expand(8, 10**9)
            ),
        ),
        "config_laughs": edited(
            "config_laughs", lambda p: p["config"]["eval"].update(opponents=laughs())
        ),
        "huge_int": edited("huge_int", lambda p: p["counters"].update(iteration=10**5000)),
    }
    files["deflated"] = deflated(run_checkpoint, folder / "deflated.pt")
    everyone = {name: (path, CONSUMERS) for name, path in files.items()}
    # 250 million positions of side 4: 252,000,000,000 bytes of float32 planes, a few bits.
    size = 250_000_000
    replay_files = {
        "replay_252e9_bytes": replay(
            planes_shape=[size, 9, 4, 7], size=size, capacity=size, total_added=size, cursor=0
        ),
        "replay_shape_beyond_its_bits": replay(planes_shape=[10**6, 9, 4, 7]),
        "replay_capacity_1e12": replay(capacity=10**12),
    }
    for name, change in replay_files.items():
        everyone[name] = (edited(name, change), ("resume",))
    return everyone


@pytest.fixture(scope="module")
def run_checkpoint(tmp_path_factory) -> Path:
    """The checkpoint of a one-iteration tiny run (side 4): net, optimiser, replay window,
    games in progress, random states and settings, as resuming reads them."""
    from trapy_rl.train import train
    from trapy_rl.train.settings import TrainConfig

    folder = tmp_path_factory.mktemp("tiny_run")
    config = TrainConfig(side=SIDE, iterations=1, model=TINY_NET, run_dir=str(folder)).replace(
        {
            "mcts.num_simulations": 4, "selfplay.num_games": 8, "selfplay.moves_per_iteration": 30,
            "replay.min_size": 16, "optim.batch_size": 16, "eval.final_games": 0,
            "logger.progress": False, "logger.name": "none", "curriculum.sides": [],
            "curriculum.until_minutes": [],
        }
    )  # fmt: skip
    return train(config).checkpoint


def feed(consumer: str, files: list[Path], out: Path) -> list[dict]:
    """Run ``consumer`` on ``files`` under `MEMORY_LIMIT` (tests/hostile_consumers.py)."""
    driver = Path(__file__).with_name("hostile_consumers.py")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, str(driver), str(MEMORY_LIMIT), consumer, str(out)]
    done = subprocess.run(
        [*command, *map(str, files)], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_hostile_files_are_refused_in_one_line_within_2_gib(
    consumer, run_checkpoint, tmp_path_factory
):
    """Each consumer, its address space capped at 2 GiB, refuses every hostile file that
    reaches the part it reads with one line naming the file; the tiny run's own checkpoint,
    fed last, it accepts (so the cap leaves room to work)."""
    folder = tmp_path_factory.mktemp(f"hostile_{consumer}")
    corpus = hostile_corpus(run_checkpoint, folder)
    files = [path for path, consumers in corpus.values() if consumer in consumers]
    answers = feed(consumer, [*files, run_checkpoint], folder / "out")
    assert [a["file"] for a in answers] == [str(f) for f in [*files, run_checkpoint]]
    *refusals, accepted = answers
    for answer in refusals:
        lines = answer["err"].splitlines()
        assert answer["code"] not in (0, 200, 201), answer
        assert len(lines) == 1 and answer["file"] in lines[0], answer
        assert "Traceback" not in answer["err"], answer
    assert accepted["code"] in (0, 200, 201), accepted
    assert max(a["peak_mib"] for a in answers) < MEMORY_LIMIT / 2**20
