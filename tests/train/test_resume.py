"""A resumed run goes on with its own settings (saved in its checkpoints), in its own folder."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from tiny import tiny_payload

from trapy_rl.train import train
from trapy_rl.train.checkpoint import save_checkpoint, write_run_checkpoint
from trapy_rl.train.resume import (
    changed_settings,
    flatten_settings,
    resume_note,
    resumed_config,
)
from trapy_rl.train.settings import TrainConfig

RUN_SETTINGS = TrainConfig().replace(
    {
        "side": 4,
        "minutes": 480.0,
        "mcts.num_simulations": 8,
        "curriculum.sides": [],
        "seed": 3,
        "curriculum.until_minutes": [],
    }
)


def saved_run(folder, config: TrainConfig | None = RUN_SETTINGS):
    payload = tiny_payload(side=4, iteration=2)
    if config is not None:
        payload["config"] = config.to_dict()
    write_run_checkpoint(folder / "checkpoints", 2, payload)
    return folder


def test_the_saved_settings_come_back_and_only_the_changed_ones_are_taken(tmp_path):
    run = saved_run(tmp_path / "run")
    given = TrainConfig().replace({"resume": str(run), "minutes": 600.0})
    config = resumed_config(given, {"resume", "minutes"})
    assert config.mcts.num_simulations == 8 and config.side == 4 and config.seed == 3
    assert config.minutes == 600.0
    assert config.resume == str(run) and config.run_dir == str(run)  # on in its own folder
    assert config.replace({"minutes": 480.0, "resume": None, "run_dir": None}) == RUN_SETTINGS


def test_a_checkpoint_file_starts_a_new_folder_and_old_checkpoints_keep_the_command(tmp_path):
    run = saved_run(tmp_path / "run")
    given = TrainConfig().replace({"resume": str(run / "checkpoints" / "ckpt_000002.pt")})
    config = resumed_config(given, {"resume"})
    assert config.mcts.num_simulations == 8 and config.run_dir is None
    chosen = given.replace({"run_dir": str(tmp_path / "elsewhere")})
    assert resumed_config(chosen, {"resume", "run_dir"}).run_dir == str(tmp_path / "elsewhere")
    bare = tiny_payload(side=4)  # a checkpoint written before the settings were saved in it
    path = save_checkpoint(tmp_path / "bare.pt", bare)
    old = TrainConfig().replace({"resume": str(path)})
    assert resumed_config(old, {"resume"}) == old
    with pytest.raises(ValueError, match=r"mcts\.simulations: unknown setting"):
        resumed_config(given, {"mcts.simulations"})


def test_the_resume_note_names_what_changed_and_a_cosine_run_s_new_length():
    run = RUN_SETTINGS.replace({"resume": "RUN", "minutes": 90, "optim.lr_schedule": "constant"})
    assert resume_note(run, set()) == "resuming RUN with the run's own settings"
    assert resume_note(run, {"minutes"}).endswith("but: minutes as given here")
    cosine = run.replace({"optim.lr_schedule": "cosine"})
    assert resume_note(cosine, {"iterations"}).endswith("but: iterations as given here")
    assert "cosine learning rate now spans minutes=90" in resume_note(cosine, {"minutes"})


def test_changed_settings_are_the_dotted_names_that_differ():
    defaults = {"a": 1, "b": {"c": [1, 2], "d": "x"}}
    command = {"a": 1, "b": {"c": [1, 3], "d": "x"}, "e": None}
    assert changed_settings(command, defaults) == {"b.c", "e"}
    assert flatten_settings({"b": {"c": (1, 2)}}) == {"b.c": [1, 2]}


def test_trapy_train_resume_needs_no_overrides_repeated(tmp_path):
    """A run trained with overrides, resumed with ``resume=`` and a longer budget alone."""
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    overrides = [
        "side=4", "model=tiny", "mcts.num_simulations=8", "selfplay.num_games=8",
        "selfplay.moves_per_iteration=10", "replay.min_size=16", "optim.batch_size=16",
        "eval.every=0", "eval.final_games=0", "logger.progress=false", "curriculum=none",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def train(*args: str) -> str:
        command = [sys.executable, "-m", "trapy_rl.train.cli", *args]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    train(*overrides, "iterations=2", f"hydra.run.dir={run}")
    output = train(f"resume={run}", "iterations=4", f"hydra.run.dir={elsewhere}")
    assert "with the run's own settings, but: iterations as given here" in output
    assert (run / "checkpoints" / "ckpt_000004.pt").is_file()  # on in the run's folder
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["mcts"]["num_simulations"] == 8 and saved["side"] == 4
    assert saved["iterations"] == 4


def test_settings_newer_or_older_than_the_checkpoint(tmp_path):
    """A setting the checkpoint lacks keeps the command's value, one the toolkit dropped is
    ignored, and settings that do not go together are refused in one line."""
    saved = RUN_SETTINGS.to_dict()
    del saved["selfplay"]["swap_coin_share"]  # as if it were newer than the checkpoint
    saved["selfplay"]["retired_option"] = 1  # as if the toolkit had dropped it
    payload = tiny_payload(side=4, iteration=2) | {"config": saved}
    write_run_checkpoint(tmp_path / "run" / "checkpoints", 2, payload)
    given = TrainConfig().replace(
        {"resume": str(tmp_path / "run"), "selfplay.swap_coin_share": 0.5}
    )
    config = resumed_config(given, {"resume"})
    assert config.selfplay.swap_coin_share == 0.5 and config.mcts.num_simulations == 8

    saved["curriculum"] = {"sides": [2], "until": [5], "until_minutes": []}
    payload = tiny_payload(side=4, iteration=3) | {"config": saved}
    write_run_checkpoint(tmp_path / "run" / "checkpoints", 3, payload)
    clash = given.replace({"curriculum.sides": [2], "curriculum.until_minutes": [1.0]})
    with pytest.raises(ValueError, match=r"its saved settings with this command's: .*until"):
        resumed_config(clash, {"resume", "curriculum.until_minutes"})


def test_a_resume_with_nothing_to_do_says_so_and_writes_nothing(tmp_path, make_config):
    first = train(make_config(tmp_path / "run", iterations=2))
    config_file = first.run_dir / "config.yaml"
    saved = config_file.read_bytes()
    for changes in ({"iterations": 2}, {"iterations": 1}):
        cfg = make_config(first.run_dir, resume=str(first.run_dir), **changes)
        with pytest.raises(ValueError, match=r"nothing to do: it is at iteration 2 and iterat"):
            train(cfg)
    assert config_file.read_bytes() == saved  # the run's settings as they were
    more = train(make_config(first.run_dir, resume=str(first.run_dir), iterations=3))
    assert more.iterations == 3
