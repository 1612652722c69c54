"""The settings a resumed run goes on with: its own, as its checkpoint saved them.

Every checkpoint of a run holds the run's whole resolved configuration. ``trapy-train
resume=RUN`` takes it from there and changes only what the command line changes, so that a
run resumed without repeating its overrides goes on as itself. (It did not: the command's
defaults, 8 minutes and the short curriculum, replaced a two-hour recipe's settings, and the
run went on in a new folder.) Resuming a run folder writes on into that folder; resuming a
checkpoint file starts a new folder from it, as a branch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trapy_rl.train.checkpoint import load_newest_valid
from trapy_rl.train.settings import TrainConfig

__all__ = ["changed_settings", "flatten_settings", "resume_note", "resumed_config"]


def resumed_config(given: TrainConfig, changed: Iterable[str]) -> TrainConfig:
    """The settings to resume ``given.resume`` with.

    Args:
        given: the settings of the command (``resume`` set).
        changed: dotted names of the settings the command line set (`changed_settings`);
            these keep ``given``'s values, the others take the run's.

    Returns:
        ``given`` with every setting the checkpoint saved and the command line did not set
        taken from the checkpoint (a setting newer than the checkpoint keeps ``given``'s
        value, one the toolkit no longer has is dropped), and ``run_dir`` the run folder
        when ``resume`` is one (unless the command line set it). ``given`` itself for a
        checkpoint without saved settings.

    Raises:
        CheckpointError: if no checkpoint loads at ``given.resume``.
        ValueError: if a changed name is not a setting, or the settings do not go together.
    """
    saved = load_newest_valid(given.resume).get("config")
    if not saved:
        return given
    changed = set(changed)
    current = flatten_settings(given.to_dict())
    unknown = sorted(changed - current.keys())
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown setting")
    kept = {
        key: value
        for key, value in flatten_settings(saved).items()
        if key in current and key not in changed | {"resume", "run_dir"}
    }
    if "run_dir" not in changed and Path(given.resume).is_dir():
        kept["run_dir"] = str(given.resume)
    try:
        return given.replace(kept)
    except ValueError as error:
        raise ValueError(
            f"{given.resume}: its saved settings with this command's: {error} (set the key "
            "on the command line)"
        ) from None


def resume_note(config: TrainConfig, changed: set[str]) -> str:
    """The line a resumed run prints: the settings the command line changed, and what a new
    ``minutes`` does to a cosine learning rate (it spans the clock to ``minutes``, so the rate
    jumps to where the new length puts the run)."""
    note = f"resuming {config.resume} with the run's own settings"
    if changed:
        note += f", but: {', '.join(sorted(changed))} as given here"
    if "minutes" in changed and config.optim.lr_schedule == "cosine":
        note += (
            f" (the cosine learning rate now spans minutes={config.minutes:g}: it moves to "
            "where the new length puts the run)"
        )
    return note


def changed_settings(command: Mapping[str, Any], defaults: Mapping[str, Any]) -> set[str]:
    """Dotted names of the settings whose values differ between two nested configurations:
    what a command line's overrides (group choices included) changed from the defaults."""
    ours, theirs = flatten_settings(command), flatten_settings(defaults)
    missing = object()
    return {
        key
        for key in ours.keys() | theirs.keys()
        if ours.get(key, missing) != theirs.get(key, missing)
    }


def flatten_settings(settings: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as ``{"dotted.name": value}``; lists and tuples are values."""
    flat: dict[str, Any] = {}
    for name, value in settings.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            flat |= flatten_settings(value, f"{key}.")
        else:
            flat[key] = list(value) if isinstance(value, tuple) else value
    return flat
