"""How settings meet Hydra: where the YAML files live, each command's schema in Hydra's
ConfigStore, and how composed or plain nested data becomes frozen settings.

Each command line has its settings as one frozen dataclass (`trapy_rl.train.TrainConfig`,
`trapy_rl.eval.cli.EvalCommandConfig`, `trapy_rl.analysis.cli.OpeningsConfig`), its defaults
written once, there. The command registers it where it lives, ``register_schema("eval",
EvalCommandConfig)``, and ``configs/eval.yaml`` starts its defaults list with ``eval_schema``,
so every YAML file and every command-line override is checked when the configuration is
composed: a typo such as ``mcts.num_simulatons=3`` fails at once, naming the key.
`settings_of` then turns the composed config into the frozen settings, whose checks name any
bad value. `settings_from_dict` does the same for plain nested dicts (a checkpoint's config).

The YAML files say only how they differ from the schema: Hydra cannot compose into frozen
nodes, so `hydra_schema` makes a mutable twin of the settings with the same fields, types and
defaults, and a nested settings node of the twin holds its own class's defaults. So
``configs/model/tiny.yaml`` lists the widths in which the tiny net differs from `NetConfig()`,
and ``configs/selfplay/workers.yaml`` says ``num_workers: 2`` alone.

This module imports nothing else of trapy_rl, and loads Hydra only when a command line
registers or composes: the library builds its settings with `settings_from_dict` without it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = [
    "CONFIG_DIR",
    "compose_settings",
    "hydra_schema",
    "register_schema",
    "settings_from_dict",
    "settings_of",
]

CONFIG_DIR = str(Path(__file__).resolve().parent / "configs")
"""The folder of the YAML files every command line composes (``train``, ``eval``, ...): they
ship inside the package, so the commands work from any folder after ``pip install``; in a
source checkout ``configs/`` at the top links to it."""

Settings = TypeVar("Settings")


@functools.cache
def hydra_schema(settings: type) -> type:
    """A mutable dataclass with the fields, types and defaults of the frozen ``settings``.

    Nested settings become their twins, holding their own class's defaults (a group file
    says how it differs from them); tuples become lists (OmegaConf's sequence type).
    """
    hints = typing.get_type_hints(settings)
    defaults = settings()
    fields = []
    for field in dataclasses.fields(settings):
        kind, value = hints[field.name], getattr(defaults, field.name)
        if dataclasses.is_dataclass(kind):
            twin = hydra_schema(kind)
            fields.append((field.name, twin, dataclasses.field(default_factory=twin)))
        elif typing.get_origin(kind) is tuple:
            item = typing.get_args(kind)[0]
            factory = functools.partial(list, value)
            fields.append((field.name, list[item], dataclasses.field(default_factory=factory)))
        else:
            fields.append((field.name, kind, dataclasses.field(default=value)))
    return dataclasses.make_dataclass(f"{settings.__name__}Schema", fields)


def register_schema(command: str, settings: type) -> None:
    """Store the schema of ``settings`` in Hydra's ConfigStore as ``<command>_schema``, the
    first entry of ``configs/<command>.yaml``'s defaults list (idempotent)."""
    # Hydra loads here, not on import: the library imports this module for its settings.
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name=f"{command}_schema", node=hydra_schema(settings))


def settings_of(cfg: DictConfig, settings: type[Settings]) -> Settings:
    """The frozen ``settings`` of a composed config.

    Raises:
        ValueError: naming the dotted key, for an unknown key or a bad value.
    """
    from omegaconf import OmegaConf  # comes with Hydra, which the command lines load

    return settings_from_dict(settings, OmegaConf.to_container(cfg, resolve=True))


def compose_settings(
    command: str, settings: type[Settings], overrides: Sequence[str] = ()
) -> Settings:
    """The frozen ``settings`` of ``configs/<command>.yaml`` composed with ``overrides``
    outside a command line (tests, benchmarks, notebooks): ``compose_settings("train",
    TrainConfig, ["model=small"])``.

    Raises:
        hydra.errors.ConfigCompositionException: naming an unknown key or option.
        ValueError: naming the dotted key, for a bad value.
    """
    from hydra import compose, initialize_config_dir  # Hydra for this call only (see above)

    register_schema(command, settings)
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return settings_of(compose(config_name=command, overrides=list(overrides)), settings)


def settings_from_dict(cls: type[Settings], data: Mapping[str, Any], where: str = "") -> Settings:
    """An instance of the settings dataclass ``cls`` from plain nested dicts (missing keys take
    their defaults).

    Nested dataclass fields are built recursively; tuple fields take any sequence.

    Raises:
        ValueError: naming the dotted key, for an unknown key, a wrong type or a bad value.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{where or cls.__name__}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(
            f"{where or cls.__name__}: unknown setting {unknown[0]!r} "
            f"(known: {', '.join(sorted(names))})"
        )
    values = {}
    for name, value in data.items():
        key = f"{where}.{name}" if where else name
        kind = hints[name]
        if dataclasses.is_dataclass(kind):
            value = value if isinstance(value, kind) else settings_from_dict(kind, value, key)
        else:
            value = _coerce(value, kind, key)
        values[name] = value
    try:
        return cls(**values)
    except ValueError as error:
        message = str(error)
        if where and message.split(" ", 1)[0] in names:  # a message of a library class
            message = f"{where}.{message}"
        raise ValueError(message) from None


def _coerce(value: Any, kind: Any, key: str) -> Any:
    """``value`` as the annotated type ``kind`` (int, float, bool, str, optional, tuple)."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (kind,) = [a for a in args if a is not type(None)]
        args = typing.get_args(kind)
    if typing.get_origin(kind) is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ValueError(f"{key} must be a list, got {value!r}")
        return tuple(_coerce(v, args[0], key) for v in value)
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{key} must be true or false, got {value!r}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key} must be an integer, got {value!r}")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key} must be a number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ValueError(f"{key} must be a string, got {value!r}")
        return value
    return value
