"""trapy-openings: the Hydra configuration and the files a run writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from trapy_rl.analysis.cli import CONFIG_DIR, OpeningsConfig, run
from trapy_rl.config import settings_of

ROOT = Path(__file__).resolve().parents[2]


def compose_openings(overrides: list[str]):
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose(config_name="openings", overrides=overrides)


def test_the_config_composes_to_the_schema():
    cfg = settings_of(compose_openings(["side=4", "estimator=rollout"]), OpeningsConfig)
    assert isinstance(cfg, OpeningsConfig) and cfg.side == 4 and cfg.checkpoint is None


@pytest.mark.parametrize("override", ["simulatons=5", "side=ten"])
def test_typos_fail_naming_the_key(override):
    with pytest.raises(ConfigCompositionException) as error:
        compose_openings([override])
    assert override.split("=")[0] in str(error.value.__cause__ or error.value)


def test_run_writes_the_csv_pictures_and_summary(tmp_path, capsys):
    cfg = compose_openings(
        [
            "side=3",
            "estimator=search",
            "search.num_simulations=40",
            "rollouts=2",
            f"cache_dir={tmp_path}/c",
        ]
    )
    paths = run(cfg, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "openings_search.csv",
        "openings_search.json",
        "openings_search.png",
        "openings_search_ranking.png",
        "summary.txt",
    ]
    table = pd.read_csv(paths["csv"])
    assert len(table) == 12 and table["rank"].min() == 1
    document = json.loads(paths["json"].read_text())
    assert document["settings"]["simulations"] == 40 and len(document["rows"]) == 12
    assert [row["v"] for row in document["rows"]] == pytest.approx(table["v"].tolist())
    assert document["rows"][0]["low"] is None  # search has no interval: null, not NaN
    summary = paths["summary"].read_text()
    assert "fairest openings" in summary and "Mann-Whitney" in summary
    assert "yellow should swap" in capsys.readouterr().out
    run(cfg, tmp_path / "again")
    assert "(from the cache)" in (tmp_path / "again" / "summary.txt").read_text()


def test_the_script_runs_from_the_command_line(tmp_path):
    out = tmp_path / "out"
    command = [
        sys.executable,
        str(ROOT / "scripts" / "analyze_openings.py"),
        "side=2",
        "estimator=rollout",
        "playouts=100",
        "cache_dir=null",
        f"out_dir={out}",
        f"hydra.run.dir={tmp_path / 'hydra'}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (out / "openings_rollout.csv").is_file() and (out / "summary.txt").is_file()


def test_a_playout_map_is_extended_from_its_json(tmp_path, capsys):
    common = ["side=2", "estimator=playout", "agent=uct:4", "refine_fairest=0", "cache_dir=null"]
    first = run(compose_openings([*common, "playouts=3"]), tmp_path / "first")
    more = run(
        compose_openings([*common, "playouts=2", f"extend={first['json']}"]), tmp_path / "more"
    )
    games = [pd.read_csv(paths["csv"])["games"] for paths in (first, more)]
    assert (games[1] - games[0]).isin([2, 4]).all()  # 2 more a cell, pooled on a pair
    settings = json.loads(more["json"].read_text())["settings"]
    assert settings["sitting"] == 1 and settings["extends"]["settings"]["playouts"] == 3
    assert "sitting=1" in (tmp_path / "more" / "summary.txt").read_text()


def test_compare_scores_seeds_against_each_other_and_the_truth(tmp_path, capsys):
    from tiny import write_tiny_checkpoint

    nets = [write_tiny_checkpoint(tmp_path / f"s{i}.pt", side=4, seed=i) for i in range(3)]
    cfg = compose_openings(
        ["side=4", "search.num_simulations=16", f"cache_dir={tmp_path}/c",
         "compare=[" + ",".join(str(n) for n in nets) + "]"]
    )  # fmt: skip
    paths = run(cfg, tmp_path / "out")
    text = paths["agreement"].read_text()
    assert "| A against B |" in text and "| B against C |" in text
    assert text.count("of 22; wrong:") == 3  # side 4 is solved: each map against v*
    assert "A against B" in capsys.readouterr().out


def test_compare_needs_two_nets_and_the_search():
    with pytest.raises(ValueError, match=r"compare=.* takes two or more nets"):
        OpeningsConfig(compare=("a.pt",))
    with pytest.raises(ValueError, match=r"compare=.* takes two or more nets"):
        OpeningsConfig(compare=("a.pt", "b.pt"), estimator="rollout")
