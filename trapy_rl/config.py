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

A mistake on a command line is one line: `check_command_line` composes the configuration
before Hydra's main does, and turns what Hydra and OmegaConf raise (an unknown key, a value of
the wrong type, an unknown option of a group, an override it cannot read) into one
``ValueError`` naming the key and what is allowed: the closest known key for a typo, the options
of a group. `compose_settings` reports the same way.

    $ trapy-train iteratons=3
    trapy-train: error: unknown setting 'iteratons' (did you mean 'iterations'?)
    $ trapy-train model=huge
    trapy-train: error: model=huge: no such option of model (options: large, small, tiny)

This module imports nothing else of trapy_rl, and loads Hydra only when a command line
registers or composes: the library builds its settings with `settings_from_dict` without it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = [
    "CONFIG_DIR",
    "check_command_line",
    "compose_settings",
    "composition_error",
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
        ValueError: one line naming the key, for an unknown key or option, a value of the wrong
            type (`composition_error`) or a bad value.
    """
    from hydra import compose, initialize_config_dir  # Hydra for this call only (see above)

    register_schema(command, settings)
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            cfg = compose(config_name=command, overrides=list(overrides))
            return settings_of(cfg, settings)
    except Exception as error:  # Hydra's and OmegaConf's own kinds: see composition_error
        message = composition_error(error, settings, overrides)
        if message is None:
            raise
        raise ValueError(message) from error


# Hydra's command-line flags after which the configuration is not composed as usual (a sweep,
# help, another config), so that `check_command_line` leaves the command line to Hydra.
_HYDRA_OWN_FLAGS = (
    "multirun", "help", "hydra_help", "info", "shell_completion", "config_path",
    "config_name", "config_dir", "experimental_rerun",
)  # fmt: skip


def check_command_line(
    command: str, settings: type[Settings], argv: Sequence[str]
) -> Settings | None:
    """Compose ``configs/<command>.yaml`` with the overrides of the command line ``argv`` (the
    arguments after the program's name) and build its ``settings``, as Hydra's main is about
    to: a mistake becomes one ValueError line here, before Hydra prints its own many lines or
    makes its run folder. Returns the settings, for the command's own checks before then.

    A command line with a sweep (``--multirun``), help or another config is left to Hydra
    (None).

    Raises:
        ValueError: one line naming the key and what is allowed.
    """
    # Hydra's own parser of its command line: the same flags and overrides as its main.
    from hydra._internal.utils import get_args_parser

    parser = get_args_parser()

    def refuse(message: str) -> None:  # argparse's error(): one line, not the usage
        raise ValueError(f"cannot read the command line: {message}")

    parser.error = refuse
    args = parser.parse_args(list(argv))
    if any(getattr(args, flag, None) for flag in _HYDRA_OWN_FLAGS):
        return None
    return compose_settings(command, settings, args.overrides)


def composition_error(
    error: BaseException, settings: type, overrides: Sequence[str] = ()
) -> str | None:
    """One line for an error Hydra or OmegaConf raised composing the configuration whose schema
    is ``settings``, naming the key and what is allowed; None for any other exception.

    Unknown key: the closest known key of its group (difflib), else the group's keys; a value of
    the wrong type: the type the key takes; an unknown option of a group: the group's options;
    an override that does not parse: the override.
    """
    from hydra.errors import HydraException, MissingConfigException, OverrideParseException
    from omegaconf.errors import OmegaConfBaseException

    if not isinstance(error, (HydraException, OmegaConfBaseException)):
        return None
    if isinstance(error, MissingConfigException) and error.options is not None:
        group, _, option = str(error.missing_cfg_file or "").rpartition("/")
        if group:
            return (
                f"{group}={option}: no such option of {group} "
                f"(options: {', '.join(sorted(error.options))})"
            )
    if isinstance(error, OverrideParseException):
        bad = next((o for o in overrides if not _parses(o)), None)
        return f"cannot read the override {bad!r}: {_first_line(error)}" if bad else None
    cause = error.__cause__ if isinstance(error.__cause__, OmegaConfBaseException) else error
    key = str(getattr(cause, "full_key", None) or "")
    if key and type(cause).__name__ in ("ConfigAttributeError", "ConfigKeyError"):
        *parents, name = key.split(".")
        return _unknown_setting(".".join(parents), name, _settings_at(settings, parents))
    if key and type(cause).__name__ == "ValidationError":
        wanted = _wanted_type(settings, key.split("."))
        value = _override_value(overrides, key)
        if wanted:
            return f"{key} must be {wanted}, got {value!r}"
    text = _first_line(error)
    already = re.search(r"An item is already at '([^']+)'", text)
    if already:
        name = already.group(1)
        return f"+{name}: {name} is already a setting: write {name}=... without the +"
    if text.startswith("Ambiguous value"):
        text += " (a list is key=[a,b], a string key='a,b'; a sweep needs --multirun)"
    return f"{key}: {text}" if key and key not in text else text


def _first_line(error: BaseException) -> str:
    """The first line of the message (the others hold details and suggestions)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _parses(override: str) -> bool:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        OverridesParser.create().parse_override(override)
    except Exception:  # any failure to parse is the answer
        return False
    return True


def _override_value(overrides: Sequence[str], key: str) -> str:
    """The value the command line gave ``key`` (the last override naming it)."""
    for override in reversed(list(overrides)):
        name, equals, value = override.partition("=")
        if equals and name.lstrip("+~") == key:
            return value
    return "?"


def _settings_at(settings: type | None, path: Sequence[str]) -> type | None:
    """The settings dataclass at the dotted ``path`` below ``settings``, or None."""
    for part in path:
        if settings is None or not dataclasses.is_dataclass(settings):
            return None
        kind = typing.get_type_hints(settings).get(part)
        settings = kind if dataclasses.is_dataclass(kind) else None
    return settings if dataclasses.is_dataclass(settings) else None


def _unknown_setting(group: str, name: str, settings: type | None) -> str:
    """``<group>: unknown setting '<name>'`` with the closest key of the group ``settings``
    (difflib; its own keys, or a nested group's as ``inner.key``), else all of its keys."""
    where = f"{group}: " if group else ""
    known = sorted(f.name for f in dataclasses.fields(settings)) if settings else []
    nested = {  # a nested group's key, by its own name: ``num_simulatons`` -> search.num_...
        f"{field.name}.{inner.name}": inner.name
        for field, kind in _fields_and_types(settings)
        if dataclasses.is_dataclass(kind)
        for inner in dataclasses.fields(kind)
    }
    leaves = {key: key for key in known} | nested
    close = difflib.get_close_matches(name, list(leaves.values()), n=1, cutoff=0.6)
    if close:
        best = next(key for key, leaf in leaves.items() if leaf == close[0])
        return f"{where}unknown setting {name!r} (did you mean {best!r}?)"
    if known:
        return f"{where}unknown setting {name!r} (known: {', '.join(known)})"
    return f"{where}unknown setting {name!r}"


def _fields_and_types(settings: type | None) -> list[tuple[dataclasses.Field, Any]]:
    if settings is None:
        return []
    hints = typing.get_type_hints(settings)
    return [(field, hints[field.name]) for field in dataclasses.fields(settings)]


def _wanted_type(settings: type, path: Sequence[str]) -> str | None:
    """What the key at ``path`` takes, in words (``an integer``), or None where unknown."""
    group = _settings_at(settings, path[:-1])
    if group is None:
        return None
    kind = typing.get_type_hints(group).get(path[-1])
    if kind is None:
        return None
    optional = ""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        kind, optional = (args[0], " or null") if len(args) == 1 else (kind, "")
    if dataclasses.is_dataclass(kind):
        return f"a group of settings ({'.'.join(path)}.KEY=VALUE)"
    if typing.get_origin(kind) is tuple:
        return "a list such as [a,b]" + optional
    words = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    return words[kind] + optional if kind in words else None


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
        raise ValueError(_unknown_setting(where or cls.__name__, str(unknown[0]), cls))
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
