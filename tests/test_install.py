"""A built wheel carries its configs and data: the command lines run from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from this checkout, unpacked (what pip would put in site-packages)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = out.glob("trapy_rl-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}  # the wheel's package before the checkout's
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_holds_the_configs_and_the_start_set(installed) -> None:
    assert (installed / "trapy_rl" / "configs" / "train.yaml").is_file()
    assert (installed / "trapy_rl" / "configs" / "mcts" / "gumbel.yaml").is_file()
    assert (installed / "trapy_rl" / "eval" / "data" / "starts_side10.txt").is_file()
    assert (installed / "trapy_rl" / "eval" / "data" / "pool_side10.json").is_file()
    shipped = installed / "trapy_rl" / "analysis" / "data"
    assert sorted(p.name for p in shipped.iterdir()) == [
        "openings-seed_0.json",
        "openings-seed_1.json",
    ]


def test_the_played_maps_are_read_from_another_folder(installed, tmp_path) -> None:
    # What the notebook reads: the maps of docs/openings.md, from the wheel's own copy.
    read = run(
        installed, tmp_path, "-c",
        "import trapy_rl.analysis.published as p; from trapy_rl.analysis import load_played_map; "
        "board, table = load_played_map('seed 1'); "
        "print(p.__file__, board.side, len(table), table.attrs['key']['estimator'])",
    )  # fmt: skip
    assert read.returncode == 0, read.stderr[-2000:]
    where, side, cells, estimator = read.stdout.split()
    assert where.startswith(str(installed)) and (side, cells, estimator) == ("10", "145", "playout")


def test_the_command_lines_run_from_another_folder(installed, tmp_path) -> None:
    where = run(installed, tmp_path, "-c", "import trapy_rl.config as c; print(c.CONFIG_DIR)")
    assert where.stdout.strip().startswith(str(installed)), where.stderr
    trained = run(
        installed, tmp_path, "-m", "trapy_rl.train.cli", "debug=smoke", "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
    )  # fmt: skip
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert (tmp_path / "run" / "checkpoints" / "latest.pt").is_file()
    rated = run(
        installed, tmp_path, "-m", "trapy_rl.eval.cli", "agents=[random,uct:4]", "side=3",
        "games=2", "baselines=[random]", "progress=false", f"out={tmp_path / 'eval'}",
    )  # fmt: skip
    assert rated.returncode == 0, rated.stderr[-2000:]
    helped = run(installed, tmp_path, "-m", "trapy_rl.analysis.cli", "--help")
    assert helped.returncode == 0 and "estimator: search" in helped.stdout


def test_the_shipped_net_plays_over_gtp_from_another_folder(installed, tmp_path) -> None:
    shipped = installed / "trapy_rl" / "pretrained"
    assert (shipped / "manifest.json").is_file() and list(shipped.glob("*.pt"))
    engine = subprocess.run(
        [sys.executable, "-m", "trapy_rl.gtp", "mcts:pretrained:200"],
        input="boardsize 10\ngenmove b\nshowboard\nquit\n",
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(installed)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert engine.returncode == 0, engine.stderr[-2000:]
    answers = engine.stdout.split("\n\n")
    assert answers[1].startswith("= ") and len(answers[1].split()) == 2  # a cell name
    assert "moves (side 10): " in answers[2]
