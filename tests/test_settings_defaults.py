"""One default per setting: the dataclasses hold them, the YAML files only what differs.

For every command (train, eval, openings) the composed configuration without overrides is its
settings dataclass's defaults; every option of every group composes into frozen settings; no
YAML file restates a value it would get anyway; the commands' defaults are the library's.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from trapy_rl.analysis.cli import OpeningsConfig
from trapy_rl.analysis.openings import estimate_openings
from trapy_rl.config import CONFIG_DIR, compose_settings, hydra_schema
from trapy_rl.eval.cli import EvalCommandConfig
from trapy_rl.eval.tournament import play_tournament
from trapy_rl.mcts import SearchSettings
from trapy_rl.nn.checkpoint import load_checkpoint
from trapy_rl.pretrained import MANIFEST, pretrained_file
from trapy_rl.train.checkpoint import RUN_PATH_KEYS
from trapy_rl.train.settings import TrainConfig

ROOT = Path(CONFIG_DIR)
COMMANDS = {"train": TrainConfig, "eval": EvalCommandConfig, "openings": OpeningsConfig}
GROUPS = sorted(p.name for p in ROOT.iterdir() if p.is_dir())
OPTIONS = [(group, p.stem) for group in GROUPS for p in sorted((ROOT / group).glob("*.yaml"))]
YAML_FILES = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.yaml"))

# The settings that a command's default YAML files set away from the schema, whose nested
# settings hold their own classes' defaults: the default run's group options (model: tiny,
# mcts: default, curriculum: short), which `TrainConfig`'s own defaults hold too. A file
# that sets another one must be named here, deliberately.
SET_BY_DEFAULT_OPTIONS = {
    "train": {
        "model.channels",
        "model.blocks",
        "model.policy_channels",
        "model.value_hidden",
        "model.swap_hidden",
        "mcts.num_simulations",
        "curriculum.sides",
        "curriculum.until_minutes",
    },
    "eval": set(),
    "openings": set(),
}

# Keyword arguments of the library that share a command setting's name but not its meaning.
OTHER_MEANINGS = {
    "baselines": "the library's tournament has no baselines unless given; the command's are",
    "starts": "the library takes start positions; the command a switch for the start set",
    "progress": "the library is quiet unless asked; the command shows a bar",
}


def leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted names -> values of plain nested dicts (tuples as lists)."""
    if isinstance(data, dict):
        found = {}
        for key, value in data.items():
            found.update(leaves(value, f"{prefix}{key}."))
        return found
    return {prefix[:-1]: list(data) if isinstance(data, tuple) else data}


def settings_leaves(settings: Any) -> dict[str, Any]:
    return leaves(dataclasses.asdict(settings))


def schema_leaves(settings: type) -> dict[str, Any]:
    """The values the schema gives before any YAML file: nested settings at their own
    classes' defaults."""
    return leaves(OmegaConf.to_container(OmegaConf.structured(hydra_schema(settings))))


@pytest.mark.parametrize("command", COMMANDS)
def test_the_composed_defaults_are_the_dataclass_defaults(command):
    settings = COMMANDS[command]
    composed = compose_settings(command, settings)
    assert settings_leaves(composed) == settings_leaves(settings())
    schema = schema_leaves(settings)
    set_by_yaml = {
        name for name, value in settings_leaves(composed).items() if schema[name] != value
    }
    assert set_by_yaml == SET_BY_DEFAULT_OPTIONS[command]


@pytest.mark.parametrize(("group", "option"), OPTIONS)
def test_every_option_composes_into_frozen_settings(group, option):
    run = compose_settings("train", TrainConfig, [f"{group}={option}"])
    assert isinstance(run, TrainConfig)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.side = 3  # type: ignore[misc]
    if not _is_global(ROOT / group / f"{option}.yaml"):
        composed = settings_leaves(getattr(run, group))
        for name, value in leaves(_body(ROOT / group / f"{option}.yaml")).items():
            assert composed[name] == value, (group, option, name)


@pytest.mark.parametrize("path", YAML_FILES)
def test_no_yaml_file_restates_a_value_it_would_get_anyway(path):
    """A primary file is held against its command's schema, a group option against its
    group's schema, an experiment or preset against the default run with its group choices."""
    file = ROOT / path
    body = _body(file)
    if file.parent == ROOT:
        anyway = schema_leaves(COMMANDS[file.stem])
    elif _is_global(file):
        choices = [choice for entry in _defaults(file) for choice in entry.items()]
        overrides = [f"{key.split()[-1].strip('/')}={value}" for key, value in choices]
        anyway = settings_leaves(compose_settings("train", TrainConfig, overrides))
    else:
        anyway, body = schema_leaves(TrainConfig), {file.parent.name: body}
    restated = sorted(name for name, value in leaves(body).items() if anyway[name] == value)
    assert not restated, f"{path} restates {restated}: it would get them anyway"


def test_the_openings_command_defaults_are_estimate_openings_defaults():
    keywords = inspect.signature(estimate_openings).parameters
    shared = [f.name for f in dataclasses.fields(OpeningsConfig) if f.name in keywords]
    assert set(keywords) - set(shared) == {"progress"}  # the command shows a bar
    defaults = OpeningsConfig()
    for name in shared:
        library = keywords[name].default
        library = SearchSettings() if name == "search" and library is None else library
        assert getattr(defaults, name) == library, name


def test_the_eval_command_defaults_are_the_tournament_defaults():
    keywords = inspect.signature(play_tournament).parameters
    defaults = EvalCommandConfig()
    shared = [f.name for f in dataclasses.fields(EvalCommandConfig) if f.name in keywords]
    assert {"seed", "mode", "openings", "prior_games"} <= set(shared)
    for name in shared:
        if name not in OTHER_MEANINGS:
            assert getattr(defaults, name) == keywords[name].default, name


@pytest.mark.parametrize(("name", "seed"), [("pretrained", 0), ("pretrained_seed1", 1)])
def test_the_recorded_recipe_is_how_the_shipped_nets_were_trained(name, seed):
    """The manifest's recipe, composed today, gives the shipped net's saved config (all but
    where its run lived): a default that changes must not change the published recipe
    unnoticed, and a recipe recorded wrong fails here."""
    saved = load_checkpoint(pretrained_file(name))["config"]
    recorded = json.loads(MANIFEST.read_text())[name]["training"]["recipe"]
    recipe = compose_settings("train", TrainConfig, [*recorded.split(), f"seed={seed}"])
    where = {key: saved[key] for key in RUN_PATH_KEYS}
    assert recipe.replace(where) == TrainConfig.from_dict(saved)


def _body(file: Path) -> dict[str, Any]:
    """The file's settings: without its defaults list and Hydra's own settings."""
    data = OmegaConf.to_container(OmegaConf.load(file)) or {}
    return {key: value for key, value in data.items() if key not in ("defaults", "hydra")}


def _defaults(file: Path) -> list[dict[str, str]]:
    return OmegaConf.to_container(OmegaConf.load(file)).get("defaults", [])


def _is_global(file: Path) -> bool:
    return "# @package _global_" in file.read_text().splitlines()[:1]
