"""scripts/size_sweep.py: the caps, the commands that start and resume the runs, and the report
on small runs of tiny checkpoints."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tiny import tiny_payload

from trapy_rl.config import compose_settings
from trapy_rl.train.checkpoint import write_run_checkpoint
from trapy_rl.train.settings import TrainConfig

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def sweep(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))  # it imports its neighbours
    spec = importlib.util.spec_from_file_location("size_sweep", SCRIPTS / "size_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_caps_grow_from_side_5_to_side_10s_plateau(sweep):
    assert [sweep.cap_minutes(side) for side in (5, 6, 7, 8, 10)] == [20, 41, 75, 125, 298]


def test_a_run_is_started_with_the_recipe_and_resumed_as_it_stands(sweep, tmp_path):
    start = sweep.train_command(tmp_path, 6, 1)[1:]
    assert start[:3] == ["experiment=trapy_cpu", "model=small", "selfplay.post_swap_samples=true"]
    run = f"hydra.run.dir={tmp_path / 'side6-s1'}"
    assert {"side=6", "seed=1", "minutes=41", run} <= set(start)
    write_run_checkpoint(tmp_path / "side6-s1" / "checkpoints", 25, tiny_payload(side=6))
    assert sweep.train_command(tmp_path, 6, 1, beyond=2)[1:] == [
        f"resume={tmp_path / 'side6-s1'}",
        "minutes=82",
    ]


def test_the_report_compares_seeds_and_scores_the_truth(sweep, tmp_path, capsys):
    for seed in (0, 1):
        for iteration, minutes in ((25, 10.0), (50, 20.0)):
            payload = tiny_payload(side=5, seed=10 * seed + iteration, iteration=iteration)
            payload["clock"] = {"cpu_seconds": 60 * minutes, "seconds": 60 * minutes}
            folder = tmp_path / f"side5-s{seed}" / "checkpoints"
            write_run_checkpoint(folder, iteration, payload)
    sweep.report(tmp_path, [5], [0, 1], 8, tmp_path / "sweep.png")
    out = capsys.readouterr().out
    assert "| today | 5 (35) | 0.50 | s0 10.0, s1 10.0 |" in out
    assert "| today | 5 (35) | 1.00 | s0 20.0, s1 20.0 |" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert [row["fraction"] for row in report["agreement"]] == [0.5, 1.0]
    # Each seed's map at the cap against its own at half the cap: how far one run moves.
    drift = report["agreement"][1]["drift"]
    assert report["agreement"][0]["drift"] == {} and set(drift) == {"0", "1"}
    assert all(-1 <= rho <= 1 for rho in drift.values())
    assert all(row["exact"][0].endswith("/35") for row in report["agreement"])
    assert {(r["seed"], r["agent"]) for r in report["truth"]} == {
        (0, "net"),
        (0, "mcts:200"),
        (1, "net"),
        (1, "mcts:200"),
    }
    assert (tmp_path / "sweep.png").stat().st_size > 10_000


def test_a_run_already_at_its_cap_is_passed_over_and_the_next_one_trains(
    sweep, tmp_path, monkeypatch, capsys
):
    _tiny_run(tmp_path / "side5-s0", 5, 0, minutes=20.0)  # at side 5's cap
    _tiny_run(tmp_path / "side5-s1", 5, 1, minutes=12.0)  # stopped short of it
    called = []
    monkeypatch.setattr(sweep.subprocess, "call", lambda command, **_: called.append(command) or 0)
    assert sweep.train(tmp_path, [5], [0, 1, 2], (1, 1), 1.0) == 0
    assert len(called) == 2 and all(c[:3] == ["nice", "-n", "19"] for c in called)
    assert called[0][4:] == [f"resume={tmp_path / 'side5-s1'}", "minutes=20"]
    assert f"hydra.run.dir={tmp_path / 'side5-s2'}" in called[1]
    assert "side5-s0: trained to 20.0 CPU-minutes already" in capsys.readouterr().out


def test_a_bad_part_is_one_clear_error(sweep):
    with pytest.raises(SystemExit):
        sweep.main(["train", "--part", "3/2"])


def test_every_row_of_the_ablation_composes_and_changes_the_recipe(sweep, tmp_path):
    base = compose_settings("train", TrainConfig, sweep.RECIPE.split())
    for variant, overrides in sweep.VARIANTS.items():
        cfg = compose_settings("train", TrainConfig, [*sweep.RECIPE.split(), *overrides])
        assert (cfg == base) == (variant == "today"), variant
        start = sweep.train_command(tmp_path, 6, 2, variant=variant)[1:]
        assert start[: len(sweep.RECIPE.split())] == sweep.RECIPE.split()
        assert set(overrides) <= set(start)
        folder = "side6-s2" if variant == "today" else f"side6-{variant}-s2"
        assert f"hydra.run.dir={tmp_path / folder}" in start


def test_a_clock_row_run_to_part_of_the_cap_is_a_run_of_its_own(sweep, tmp_path):
    # Its learning rate spans its own clock: a half-cap cosine run is no point of a full one.
    start = sweep.train_command(tmp_path, 7, 0, beyond=0.5, variant="cosine_lr")[1:]
    assert {"minutes=37.5", f"hydra.run.dir={tmp_path / 'side7-cosine_lr-to0.5-s0'}"} <= set(start)
    assert sweep.row_name("cosine_lr") == "cosine_lr"
    assert sweep.row_name("window_100k", 0.5) == "window_100k"  # extends like today's runs
    assert sweep.row_name("today", 1.5) == "today"


def test_rows_joined_by_a_plus_train_each_change_on_top_of_the_other(sweep, tmp_path):
    row = "cosine_lr+value_q"
    assert sweep.row_overrides(row) == (*sweep.VARIANTS["cosine_lr"], *sweep.VARIANTS["value_q"])
    start = sweep.train_command(tmp_path, 7, 1, variant=row)[1:]
    cfg = compose_settings("train", TrainConfig, [o for o in start if "hydra" not in o])
    assert (cfg.optim.lr_schedule, cfg.optim.value_q_share) == ("cosine", 0.5)  # the last wins
    assert f"hydra.run.dir={tmp_path / 'side7-cosine_lr+value_q-s1'}" in start
    assert sweep.row_name(row, 0.5) == "cosine_lr+value_q-to0.5"  # its rate spans its clock
    assert sweep.row_name("value_q+window_100k", 0.5) == "value_q+window_100k"


@pytest.mark.parametrize("row", ["cosine_lr+valu_q", "today+gumbel", "", "gumbel+"])
def test_an_unknown_row_is_one_clear_error(sweep, row, capsys):
    with pytest.raises(ValueError, match="unknown ablation row"):
        sweep.row_overrides(row)
    with pytest.raises(SystemExit) as stop:
        sweep.main(["train", "--variants", row])
    assert stop.value.code == 2
    assert f"unknown ablation row {row!r}" in capsys.readouterr().err


def _tiny_run(folder, side, seed, minutes=20.0, iteration=50):
    payload = tiny_payload(side=side, seed=seed, iteration=iteration)
    payload["clock"] = {"cpu_seconds": 60 * minutes, "seconds": 60 * minutes}
    write_run_checkpoint(folder / "checkpoints", iteration, payload)


def test_a_row_is_reported_beside_today_and_duels_today_s_nets(sweep, tmp_path, capsys):
    sweep.DUEL_SIMULATIONS = 4  # the games' length, not their strength, is tested
    for seed in (0, 1):
        _tiny_run(tmp_path / f"side5-s{seed}", 5, seed)
        _tiny_run(tmp_path / f"side5-gumbel-s{seed}", 5, 10 + seed)
    # A row's first seed alone: no agreement yet, its drift from half the cap to the cap.
    _tiny_run(tmp_path / "side5-sims_64-s0", 5, 20, minutes=10.0, iteration=25)
    _tiny_run(tmp_path / "side5-sims_64-s0", 5, 21)
    record = tmp_path / "record.json"
    variants = ["today", "gumbel", "sims_64"]
    sweep.report(tmp_path, [5], [0, 1], 8, None, variants, duel=2, record=record)
    out = capsys.readouterr().out
    assert "| today | 5 (35) | 1.00 | s0 20.0, s1 20.0 |" in out
    assert "| gumbel | 5 (35) | 1.00 | s0 20.0, s1 20.0 |" in out
    assert "| sims_64 | 5 (35) | 1.00 | s0 20.0 | - | - | - |" in out
    alone = json.loads((tmp_path / "report.json").read_text())["agreement"]
    assert [set(r["drift"]) for r in alone if r["variant"] == "sims_64"] == [set(), {"0"}]
    kept = json.loads(record.read_text())
    assert {r["variant"] for r in kept["agreement"]} == {"today", "gumbel"}
    assert {(e["variant"], e["fraction"]) for e in kept["maps"] if e["variant"] == "sims_64"} == {
        ("sims_64", 0.5),
        ("sims_64", 1.0),
    }
    duel, single = json.loads((tmp_path / "report.json").read_text())["duels"]
    assert (duel["variant"], duel["nets"], duel["games"]) == ("gumbel", 2, 8)  # 2 x 2 pairs
    assert (single["variant"], single["nets"], single["games"]) == ("sims_64", 1, 4)
    share, low, high = duel["share"]
    assert share == round(duel["wins"] / 8, 3) and low <= share <= high
    assert duel["elo"][1] <= duel["elo"][0] <= duel["elo"][2]
    # A change on top of an adopted row duels that row's nets.
    sweep.report(tmp_path, [5], [0, 1], 8, None, ["gumbel", "sims_64"], duel=1, against="gumbel")
    assert "Against gumbel's recipe" in capsys.readouterr().out
    (on_top,) = json.loads((tmp_path / "report.json").read_text())["duels"]
    assert (on_top["variant"], on_top["nets"], on_top["games"]) == ("sims_64", 1, 2)
    # The picture: the board's curve is today's recipe alone, each row its own share curve.
    by_size, by_share = sweep.agreement_curves(alone)
    assert [x for x, *_ in by_size["mean rho over the pairs"]] == [35]
    assert sorted(by_share) == ["side 5", "side 5, gumbel"]


def test_tracked_cells_follow_each_seed_s_value_along_the_cap(sweep, tmp_path, capsys):
    for seed in (0, 1):
        _tiny_run(tmp_path / f"side5-s{seed}", 5, seed, minutes=10.0, iteration=25)
        _tiny_run(tmp_path / f"side5-s{seed}", 5, seed)
    record = tmp_path / "record.json"
    sweep.report(tmp_path, [5], [0, 1], 8, None, record=record, track=("c3", "b2"))
    out = capsys.readouterr().out
    board = sweep.Board(5)
    maps = json.loads(record.read_text())["maps"]
    rows = json.loads((tmp_path / "report.json").read_text())["agreement"]
    assert [sorted(row["track"]) for row in rows] == [["b2", "c3"], ["b2", "c3"]]
    for row in rows:  # each tracked value is the seed's map there, at that cell
        for name, by_seed in row["track"].items():
            for seed, v in by_seed.items():
                (entry,) = [
                    e for e in maps if e["seed"] == int(seed) and e["fraction"] == row["fraction"]
                ]
                assert v == round(entry["v"][board.parse_action(name)], 3)
                assert f"| today | 5 | {row['fraction']:.2f} | {name} | s0 " in out
    with pytest.raises(ValueError, match="--track takes cells"):
        sweep.report(tmp_path, [5], [0, 1], 8, None, track=("swap",))


def test_the_arbiter_plays_out_each_opposite_mirror_pair_once_among_the_seeds(
    sweep, tmp_path, capsys
):
    sweep.DUEL_SIMULATIONS = 4  # the games' length, not their strength, is tested
    for seed in (0, 1, 2):
        _tiny_run(tmp_path / f"side5-s{seed}", 5, seed)
    board = sweep.Board(5)
    cell = next(c for c in range(board.num_cells) if board.mirror_cells[c] > c)
    names = [board.cell_name(cell), board.cell_name(int(board.mirror_cells[cell]))]
    half = {"side": 5, "variant": "today", "fraction": 0.5, "min_rho": 0.9, "opposite": []}
    cap = {**half, "fraction": 1.0, "min_rho": 0.4, "opposite": names}
    (row,) = sweep.arbiter_rows(tmp_path, [half, cap], [0, 1, 2], games=1)
    assert row["cell"] == "/".join(names) and row["fraction"] == 1.0
    assert row["games"] == 6  # 3 x 2 ordered pairs of seeds, a game each
    share, low, high = row["played"]
    assert share == round(row["owner_wins"] / 6, 3) and low <= share <= high
    assert set(row["maps"]) == {0, 1, 2}
    sure = low > 0.5 or high < 0.5
    assert row["wrong"] == [
        s for s, v in row["maps"].items() if sure and (v > 0.5) != (share > 0.5)
    ]
    # A row whose seeds agree everywhere asks nothing.
    assert sweep.arbiter_rows(tmp_path, [half], [0, 1, 2], games=1) == []


def test_elo_difference_is_the_inverse_of_the_expected_score(sweep):
    from trapy_rl.eval.elo import expected_score

    for share in (0.1, 0.5, 0.76, 0.9):
        assert float(expected_score(sweep.elo_difference(share), 0.0)) == pytest.approx(share)


def test_elo_against_cpu_minutes_rates_every_seed_s_nets_in_one_round_robin(
    sweep, tmp_path, capsys
):
    sweep.DUEL_SIMULATIONS = 4
    for seed in (0, 1):
        for iteration, minutes in ((25, 10.0), (50, 20.0)):
            _tiny_run(tmp_path / f"side5-s{seed}", 5, 10 * seed + iteration, minutes, iteration)
    sweep.report(tmp_path, [5], [0, 1], 8, tmp_path / "sweep.png", elo=2)
    out = capsys.readouterr().out
    assert "| 5 | 0 | 0.50 | 10.0 | +0 (" in out  # the anchor
    rows = json.loads((tmp_path / "report.json").read_text())["elo"]
    assert [(r["seed"], r["fraction"]) for r in rows] == [(0, 0.5), (0, 1.0), (1, 0.5), (1, 1.0)]
    assert all(r["games"] == 6 and r["elo"][1] <= r["elo"][0] <= r["elo"][2] for r in rows)
    assert len((tmp_path / "elo_matches.jsonl").read_text().splitlines()) == 6
    assert (tmp_path / "sweep-elo.png").stat().st_size > 10_000


def test_a_run_whose_folder_is_gone_is_compared_from_the_recorded_maps(sweep, tmp_path, capsys):
    runs, record = tmp_path / "runs", tmp_path / "maps.json"
    for seed in (0, 1):
        _tiny_run(runs / f"side5-s{seed}", 5, seed)
    sweep.report(runs, [5], [0, 1], 8, None, record=record)
    first = json.loads((runs / "report.json").read_text())["agreement"]
    entries = json.loads(record.read_text())["maps"]
    assert [(e["seed"], e["fraction"], e["minutes"]) for e in entries] == [
        (0, 1.0, 20.0),
        (1, 1.0, 20.0),
    ]
    assert all(len(e["v"]) == 35 and len(e["net"]) == 16 for e in entries)

    # Another sitting: seed 1's folder is gone, seed 2 is new.
    shutil.rmtree(runs / "side5-s1")
    _tiny_run(runs / "side5-s2", 5, 2)
    capsys.readouterr()
    sweep.report(runs, [5], [0, 1, 2], 8, tmp_path / "sweep.png", record=record)
    assert (
        "| today | 5 (35) | 1.00 | s0 20.0, s1 20.0 (recorded), s2 20.0 |"
        in capsys.readouterr().out
    )
    (row,) = json.loads((runs / "report.json").read_text())["agreement"]
    assert row["recorded"] == [1]
    kept = json.loads(record.read_text())
    assert len(kept["maps"]) == 3 and (tmp_path / "sweep.png").stat().st_size > 10_000
    assert [(r["fraction"], r["minutes"]) for r in kept["agreement"]] == [
        (1.0, {"0": 20.0, "1": 20.0, "2": 20.0})
    ]
    # The pair of seeds 0 and 1 is the first sitting's: the recorded map is the measured one.
    v = {e["seed"]: np.array(e["v"]) for e in kept["maps"]}
    pair = sweep.seed_agreement(np.stack([v[0], v[1]]), sweep.Board(5))
    assert round(pair.min_pair, 3) == first[0]["min_rho"]


def test_the_sweep_s_record_reads_and_its_rows_name_a_page_or_their_maps(sweep):
    kept = sweep.read_record(sweep.ROOT / "docs" / "experiments" / "data" / "size-sweep.json")
    assert {5, 6} <= {row["side"] for row in kept["agreement"]}
    for row in kept["agreement"]:
        source = row.get("source")
        assert (sweep.ROOT / source).is_file() if source else len(row["minutes"]) >= 2, row


def test_mean_maps_the_mean_of_each_seed_s_last_checkpoints(sweep, tmp_path, capsys):
    for seed in (0, 1):
        _tiny_run(tmp_path / f"side5-s{seed}", 5, 10 + seed, minutes=10.0, iteration=25)
        _tiny_run(tmp_path / f"side5-s{seed}", 5, seed)
    sweep.report(tmp_path, [5], [0, 1], 8, None, mean=2)
    assert "each net the mean of a seed's last 2 checkpoints" in capsys.readouterr().out
    means = sorted(p.name for p in (tmp_path / "means").iterdir())
    assert means == [f"side5-s{s}-ckpt_0000{i}-mean2.pt" for s in (0, 1) for i in (25, 50)]
    newest = sweep.load_checkpoint(tmp_path / "means" / "side5-s0-ckpt_000050-mean2.pt")
    assert newest["source"] == "mean of ckpt_000025.pt, ckpt_000050.pt"
    with pytest.raises(ValueError, match=r"--mean maps .* not recorded"):
        sweep.report(tmp_path, [5], [0, 1], 8, None, record=tmp_path / "r.json", mean=2)
