"""The training configuration's schema in Hydra's ConfigStore, and where the YAML files live.

The settings themselves are frozen dataclasses of the library (`trapy_rl.train.settings`);
Hydra cannot compose into frozen nodes, so `hydra_schema` makes a mutable twin of each, with
the same fields, types and defaults, and stores the twin of `TrainConfig` as ``train_schema``.
``configs/train.yaml`` starts its defaults list with it, so every group file and every
command-line override is checked when the configuration is composed: a typo such as
``mcts.num_simulatons=3`` fails at once, naming the key. `train_config` then turns the composed
config into the frozen `TrainConfig`, whose checks name any bad value.

The library never imports this module; only the command lines do.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from trapy_rl.train.settings import TrainConfig

__all__ = ["CONFIG_DIR", "hydra_schema", "register_configs", "train_config"]

CONFIG_DIR = str(Path(__file__).resolve().parent / "configs")
"""The folder of the YAML files every command line composes (``train``, ``eval``, ...): they
ship inside the package, so the commands work from any folder after ``pip install``; in a
source checkout ``configs/`` at the top links to it."""


@functools.cache
def hydra_schema(settings: type) -> type:
    """A mutable dataclass with the fields, types and defaults of the frozen ``settings``.

    Nested settings become their twins; tuples become lists (OmegaConf's sequence type).
    """
    hints = typing.get_type_hints(settings)
    defaults = settings()
    fields = []
    for field in dataclasses.fields(settings):
        kind, value = hints[field.name], getattr(defaults, field.name)
        if dataclasses.is_dataclass(kind):
            twin = hydra_schema(kind)
            factory = functools.partial(_twin_of, twin, value)
            fields.append((field.name, twin, dataclasses.field(default_factory=factory)))
        elif typing.get_origin(kind) is tuple:
            item = typing.get_args(kind)[0]
            factory = functools.partial(list, value)
            fields.append((field.name, list[item], dataclasses.field(default_factory=factory)))
        else:
            fields.append((field.name, kind, dataclasses.field(default=value)))
    return dataclasses.make_dataclass(f"{settings.__name__}Schema", fields)


def _twin_of(twin: type, value: Any) -> Any:
    """The twin instance holding the values of the frozen instance ``value``."""
    data = {}
    for field in dataclasses.fields(value):
        item = getattr(value, field.name)
        if dataclasses.is_dataclass(item):
            data[field.name] = _twin_of(hydra_schema(type(item)), item)
        elif isinstance(item, tuple):
            data[field.name] = list(item)
        else:
            data[field.name] = item
    return twin(**data)


def train_config(cfg: DictConfig) -> TrainConfig:
    """The frozen `TrainConfig` of a composed ``train`` config (ValueError names a bad key)."""
    return TrainConfig.from_dict(OmegaConf.to_container(cfg, resolve=True))


def register_configs() -> None:
    """Store the schemas in Hydra's ConfigStore (idempotent; done on import)."""
    ConfigStore.instance().store(name="train_schema", node=hydra_schema(TrainConfig))


register_configs()
