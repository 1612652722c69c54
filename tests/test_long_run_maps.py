"""scripts/long_run_maps.py: each kept net's search map against a reference and the other seed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from tiny import tiny_payload

from trapy_rl.analysis.agreement import compare_maps
from trapy_rl.analysis.openings import estimate_openings, opening_table, write_opening_table
from trapy_rl.game import Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.train.checkpoint import save_checkpoint

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def maps(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))  # it imports its neighbours
    spec = importlib.util.spec_from_file_location("long_run_maps", SCRIPTS / "long_run_maps.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_net_is_compared_with_the_reference_and_every_other_seed_near_it(
    maps, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # the scripts name the runs relative to the repository
    nets = {}
    runs = {"run-s0": ((20, 0.5), (40, 2.0)), "run-s1": ((21, 0.6),), "run-s2": ((22, 0.4),)}
    for run, points in runs.items():
        folder = Path("benchmarks") / "long_runs" / run
        folder.mkdir(parents=True)
        (folder / "legs.json").write_text("[]")
        for iteration, hours in points:
            payload = tiny_payload(side=10, iteration=iteration, seed=iteration)
            payload["clock"] = {"seconds": 3600 * hours, "cpu_seconds": 3600 * hours}
            nets[run, iteration] = folder / f"net_it{iteration:06d}.pt"
            save_checkpoint(nets[run, iteration], payload)
    board = Board(10)
    v = np.random.default_rng(0).random(board.num_cells)
    reference_table = opening_table(v, board, games=np.full(board.num_cells, 10))
    reference_table.attrs["key"] = {"estimator": "playout", "side": 10}
    reference = tmp_path / "reference"
    write_opening_table(reference_table, reference)

    maps.main(["--simulations", "2", "--reference", f"{reference}.json",
               "--cache-dir", str(tmp_path / "cache"), "--plot", "maps.png"])  # fmt: skip
    rows: dict[tuple[str, str], list[str]] = {}  # (run, iteration) -> its rows, one per seed
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("| run-"):
            key = tuple(cell.strip() for cell in line.split("|")[1:3])
            rows.setdefault(key, []).append(line)
    assert {key: len(lines) for key, lines in rows.items()} == {
        ("run-s0", "20"): 2,
        ("run-s0", "40"): 1,
        ("run-s1", "21"): 2,
        ("run-s2", "22"): 2,
    }

    def search_map(key):
        return estimate_openings(side=10, estimator="search", checkpoint=nets[key],
                                 search=SearchSettings(num_simulations=2),
                                 cache_dir=tmp_path / "cache")  # fmt: skip

    s0, s1, s2 = (search_map(key) for key in (("run-s0", 20), ("run-s1", 21), ("run-s2", 22)))
    first, second = rows["run-s0", "20"]
    assert f"| {compare_maps(s0, reference_table).spearman:.2f} |" in first
    assert f"| run-s1 at 0.60 h | {compare_maps(s0, s1).spearman:.2f} |" in first
    assert f"| run-s2 at 0.40 h | {compare_maps(s0, s2).spearman:.2f} |" in second
    assert "| run-s0 at 0.50 h |" in rows["run-s1", "21"][0]
    assert "| run-s1 at 0.60 h |" in rows["run-s2", "22"][1]
    assert "| - |" in rows["run-s0", "40"][0]  # 1.4 hours from the other seeds' nets
    assert Path("maps.png").stat().st_size > 0
    # Seeds of one recipe are compared, a branch's too; a run and its branch are not.
    assert maps._same_recipe("side10-small-s0-lr", "side10-small-s1-lr")
    assert not maps._same_recipe("side10-small-s0", "side10-small-s0-lr")
    assert not maps._same_recipe("side10-tiny-s0", "side10-small-s1")

    # Two maps in full, one side the mean of two nets' maps.
    pair = ["run-s0/net_it000020.pt,run-s0/net_it000040.pt", "run-s1/net_it000021.pt"]
    maps.main(["--simulations", "2", "--cache-dir", str(tmp_path / "cache"), "--pair", *pair])
    mean = (s0["v"].to_numpy() + search_map(("run-s0", 40))["v"].to_numpy()) / 2
    assert str(compare_maps(opening_table(mean, board), s1)) in capsys.readouterr().out

    # Every pair of four sides, then every split into halves of two, each half the mean.
    sides = ["run-s0/net_it000020.pt", "run-s1/net_it000021.pt", "run-s2/net_it000022.pt",
             "run-s0/net_it000040.pt"]  # fmt: skip
    maps.main(["--simulations", "2", "--cache-dir", str(tmp_path / "cache"), "--among", *sides])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    assert names == [
        "A against B", "A against C", "A against D", "B against C", "B against D",
        "C against D", "A+B against C+D", "A+C against B+D", "A+D against B+C",
    ]  # fmt: skip
    s0_40 = search_map(("run-s0", 40))
    a_c, b_d = (opening_table((x["v"].to_numpy() + y["v"].to_numpy()) / 2, board)
                for x, y in ((s0, s2), (s1, s0_40)))  # fmt: skip
    assert f"| A+C against B+D | {compare_maps(a_c, b_d).spearman:.3f} |" in out
    assert f"| B against C | {compare_maps(s1, s2).spearman:.3f} |" in out
    with pytest.raises(SystemExit):
        maps.main(["--among", *sides[:2]])
