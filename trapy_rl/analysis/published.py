"""The published played maps (docs/openings.md), shipped with the package.

``scripts/openings_report.py`` writes the report's played opening maps into docs/ (beside
docs/openings.md) and the same JSON files into ``trapy_rl/analysis/data/``, which the package
ships, so that the notebook and any installed copy read them from any folder. A map is named
by its label in the report (``seed 0``, the shipped net's; ``seed 1``, the net of the same
recipe with seed 1), its file ``openings-<label>.json`` (`map_stem`).

>>> board, table = load_played_map("seed 0")
>>> board.side, len(table) == board.num_cells, table.attrs["key"]["estimator"]
(10, True, 'playout')
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from trapy_rl.analysis.openings import read_opening_json
from trapy_rl.game.board import Board

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["load_played_map", "map_stem", "shipped_map_names"]

_PREFIX = "openings-"


def map_stem(label: str) -> str:
    """A played map's file name without suffix: ``openings-<label>``, each run of other
    characters than letters and digits as _ (``"seed 0"`` -> ``openings-seed_0``)."""
    return f"{_PREFIX}{re.sub(r'[^A-Za-z0-9]+', '_', label).strip('_')}"


def _data() -> Traversable:
    """The folder of the shipped maps, inside the installed package."""
    return resources.files("trapy_rl.analysis").joinpath("data")


def shipped_map_names() -> tuple[str, ...]:
    """The names of the played maps the package ships, sorted (``seed_0``, ``seed_1``)."""
    return tuple(
        sorted(
            entry.name[len(_PREFIX) : -len(".json")]
            for entry in _data().iterdir()
            if entry.name.startswith(_PREFIX) and entry.name.endswith(".json")
        )
    )


def load_played_map(source: str | os.PathLike) -> tuple[Board, pd.DataFrame]:
    """A played opening map: a shipped one by its name, or any map's JSON file.

    Args:
        source: the label of a shipped map (``"seed 0"`` or ``"seed_0"``: what `map_stem`
            makes of it names the file), or the path of a JSON as `write_opening_table`
            writes it.

    Returns:
        (the board, the table) as `read_opening_json` returns them: the settings the map was
        played with in ``table.attrs["key"]``.

    Raises:
        ValueError: in one line, when ``source`` is neither a shipped map nor such a file.
    """
    text = os.fspath(source)
    shipped = _data().joinpath(f"{map_stem(text)}.json")
    if not isinstance(source, os.PathLike) and shipped.is_file():
        with resources.as_file(shipped) as path:
            return read_opening_json(path)
    if not Path(text).exists():
        names = ", ".join(shipped_map_names()) or "none"
        raise ValueError(f"{text!r}: no such file, nor a played map the package ships ({names})")
    return read_opening_json(text)
