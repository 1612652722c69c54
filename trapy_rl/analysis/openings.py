"""The opening table: v(c) of every first move as a DataFrame, and its on-disk cache.

`opening_table` turns the K stone values of an estimator (`trapy_rl.analysis.estimators`, whose
docstring says what v(c) is and how each estimator measures it) into one row per first move:
the swap decision, blue's chance, the rank by fairness, and an interval where there is one.
`estimate_openings` is the entry point: it runs the estimator that its settings name and keeps
the table in a cache folder, keyed by everything the result depends on (the settings that
estimator reads and the content of any checkpoint), so that asking again reads it back.

Shapes: K cells.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trapy_rl.agents.network import checkpoint_file as spec_checkpoint_file
from trapy_rl.agents.network import load_evaluator
from trapy_rl.agents.rollout import RolloutEvaluator
from trapy_rl.analysis.estimators import (
    _check_cells_array,
    _check_positive,
    check_refinement,
    mirror_pool,
    net_values,
    refine_fairest,
    rollout_counts,
    search_values,
)
from trapy_rl.analysis.playout_jobs import PlayoutJob
from trapy_rl.errors import one_line
from trapy_rl.eval import wilson_interval
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.checkpoint import find_checkpoint
from trapy_rl.nn.digest import file_sha256

__all__ = [
    "ESTIMATORS",
    "TABLE_COLUMNS",
    "default_cache_dir",
    "estimate_openings",
    "opening_table",
    "played_table",
    "read_opening_json",
    "read_opening_table",
    "sittings",
    "write_opening_table",
]

ESTIMATORS = ("net", "search", "rollout", "playout")
TABLE_COLUMNS = ("cell", "name", "v", "low", "high", "games", "swap", "blue_chance", "rank")
_CACHE_FORMAT = 3  # 3: the games are played in seeded batches (PlayoutJob)


# ---------------------------------------------------------------------- the table


def opening_table(
    v: np.ndarray,
    board: Board,
    *,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
    games: np.ndarray | None = None,
) -> pd.DataFrame:
    """The K first moves as a DataFrame, one row per cell in cell order (index = cell).

    Columns: ``cell`` (int index), ``name``, ``v`` (the stone value), ``low``/``high`` (its
    interval, NaN without one), ``games`` (the games behind a played estimate, pooled with
    the mirror cell's where the map is mirrored; 0 for the net and search), ``swap`` (yellow
    should swap: v > 1/2), ``blue_chance`` (min(v, 1 - v), blue's chance after this opening),
    ``rank`` (1 = fairest, by |v - 1/2|, ties by cell index).

    Args:
        v: [K] float in [0, 1], the stone value of each first move.
        board: the board; K = ``board.num_cells``.
        low, high: [K] float, the interval's ends (optional).
        games: [K] int, the games behind each estimate (optional, default 0).

    Returns:
        The table: K rows, the columns `TABLE_COLUMNS` in that order.

    Raises:
        ValueError: if an array is not [K], or ``v`` is not probabilities.
    """
    v = _check_cells_array(v, board, "v").astype(np.float64)
    if np.isnan(v).any() or (v < 0).any() or (v > 1).any():
        raise ValueError("v must be probabilities in [0, 1] without NaN")
    nan = np.full(board.num_cells, np.nan)
    low = nan if low is None else _check_cells_array(low, board, "low").astype(np.float64)
    high = nan if high is None else _check_cells_array(high, board, "high").astype(np.float64)
    zero = np.zeros(board.num_cells, dtype=np.int64)
    games = zero if games is None else _check_cells_array(games, board, "games").astype(np.int64)
    distance = np.abs(v - 0.5)
    order = np.lexsort((np.arange(board.num_cells), distance))
    rank = np.empty(board.num_cells, dtype=np.int64)
    rank[order] = np.arange(1, board.num_cells + 1)
    table = pd.DataFrame(
        {
            "cell": np.arange(board.num_cells, dtype=np.int64),
            "name": list(board.names),
            "v": v,
            "low": low,
            "high": high,
            "games": games,
            "swap": v > 0.5,
            "blue_chance": np.minimum(v, 1.0 - v),
            "rank": rank,
        }
    )
    table.index.name = None
    return table


def played_table(wins: np.ndarray, games: np.ndarray, board: Board) -> pd.DataFrame:
    """The `opening_table` of played counts ``wins``, ``games`` ([K] int, every cell played):
    v = wins / games with its 95% Wilson interval."""
    bounds = np.array([wilson_interval(int(w), int(g)) for w, g in zip(wins, games)])
    return opening_table(wins / games, board, low=bounds[:, 0], high=bounds[:, 1], games=games)


# ---------------------------------------------------------------------- the cached entry point


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/trapy_rl/openings`` (``~/.cache/trapy_rl/openings`` by default)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "trapy_rl" / "openings"


def estimate_openings(
    *,
    side: int = 10,
    estimator: str = "search",
    checkpoint: str | os.PathLike | None = None,
    search: SearchSettings | None = None,
    rollouts: int = 4,
    playouts: int = 1000,
    agent: str = "random",
    opponent: str | None = None,
    refine_fairest: int = 20,
    half_width: float = 0.05,
    mirror: bool = True,
    seed: int = 0,
    device: str = "cpu",
    workers: int = 1,
    extend: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = "default",
    progress: bool = False,
) -> pd.DataFrame:
    """The `opening_table` of one estimator, read from the cache when it was computed before.

    Args:
        side: the board's side.
        estimator: one of `ESTIMATORS` (see `trapy_rl.analysis.estimators`).
        checkpoint: a checkpoint file or run folder. ``net`` needs it; ``search`` uses the
            net's leaves with it and random playouts (rollout MCTS) without it.
        search: the search of ``search`` (``num_simulations`` per opening, ``c_puct``);
            default ``SearchSettings()``.
        rollouts: random playouts per leaf evaluation of rollout search (``search`` without
            a net).
        playouts: random playouts (``rollout``) or games (``playout``) per opening.
        agent: the spec of the agent owning the stone (``playout``), e.g. ``uct:100``.
        opponent: the spec of the agent moving next (``playout``; default ``agent``).
        refine_fairest: ``playout``: after ``playouts`` games per opening, play more from the
            openings nearest v = 1/2 until this many of them have 95% intervals no wider than
            +-``half_width`` (`trapy_rl.analysis.estimators.refine_fairest`); 0: no more.
        half_width: the half-width that ``refine_fairest`` reaches.
        mirror: make the map symmetric under the mirror (average values or pool counts).
        seed: seeds playouts and agents; the result is a function of the arguments.
        device: where a net runs (``cpu``, ``cuda``, ``auto``).
        workers: ``playout``: batches of games played at once, each in its own process
            (`trapy_rl.analysis.playout_jobs.PlayoutJob`); the result does not depend on it.
        extend: ``playout``: the JSON of an earlier map of the same agents (as
            `write_opening_table` writes it, e.g. docs/openings-seed_0.json): its games are
            kept, ``playouts`` more are played from every opening (with seeds of their own,
            the map's next sitting), then ``refine_fairest`` refines the whole. The key holds
            the earlier map's settings and a hash of its counts, so a map's history is in it.
        cache_dir: the cache folder; ``"default"`` is `default_cache_dir`, None caches nothing.
            Key: estimator, side, seed, mirror, the settings that estimator reads, the agent
            specs and the checkpoint file's content hash. While ``playout`` games are played,
            each finished batch is kept in a journal beside the table's file, so that a job
            that was stopped resumes where it stopped when it is run again (with the result
            it would have had without the stop); the journal goes once the table is written.
        progress: show a bar with rate and ETA while games are played (``playout``).

    Returns:
        The table; ``table.attrs`` holds the key and ``cached`` (True when read back).

    Raises:
        ValueError: naming a bad estimator, setting, or a checkpoint of another side.
    """
    board = Board(side)
    _check_positive(workers, "workers")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")
    if estimator == "net" and checkpoint is None:
        raise ValueError("estimator 'net' needs a checkpoint (a checkpoint file or run folder)")
    # The one place the name (a file, a run folder, a shipped net) becomes the file.
    checkpoint_file = find_checkpoint(checkpoint).resolve() if checkpoint is not None else None
    search = SearchSettings() if search is None else search
    if not isinstance(search, SearchSettings):
        raise ValueError(f"search must be a SearchSettings, got {search!r}")
    key = _cache_key(
        board=board,
        estimator=estimator,
        checkpoint_file=checkpoint_file,
        simulations=search.num_simulations,  # the key's names predate SearchSettings
        rollouts=rollouts,
        playouts=playouts,
        agent=agent,
        opponent=opponent or agent,
        refine_fairest=refine_fairest,
        half_width=half_width,
        c_puct=search.c_puct,
        mirror=mirror,
        seed=seed,
    )
    earlier = None  # (wins, games) [K] of the map this one extends
    if extend is not None:
        if estimator != "playout":
            raise ValueError(f"extend: only a playout map gets more games, not {estimator!r}")
        *earlier, earlier_settings = _earlier_counts(Path(extend), board, key)
        key["sitting"] = earlier_settings.get("sitting", 0) + 1
        key["extends"] = {"settings": earlier_settings, "counts": _counts_digest(*earlier)}
    folder = default_cache_dir() if cache_dir == "default" else cache_dir
    path = None
    if folder is not None:
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
        path = Path(folder) / f"{estimator}-side{side}-{digest}.csv"
        if path.is_file():
            table = _read_table(path, board)
            table.attrs.update(key=key, cached=True)
            return table

    journal = None if path is None else path.with_suffix(".journal.json")
    table = _compute(
        board,
        key,
        checkpoint_file,
        device,
        workers=workers,
        journal=journal,
        progress=progress,
        earlier=earlier,
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        table.to_csv(temporary, index=False, float_format="%.17g")
        os.replace(temporary, path)
        path.with_suffix(".json").write_text(json.dumps(key, indent=2, sort_keys=True) + "\n")
        journal.unlink(missing_ok=True)  # the table holds it all now
    table.attrs.update(key=key, cached=False)
    return table


def _cache_key(*, board: Board, estimator: str, checkpoint_file: Path | None, **settings) -> dict:
    """The settings that determine an estimator's result (and nothing else)."""
    _check_positive(settings["rollouts"], "rollouts")
    _check_positive(settings["playouts"], "playouts")
    check_refinement(settings["refine_fairest"], settings["half_width"], name="refine_fairest")
    used = {
        "net": (),
        "search": ("simulations", "c_puct") + (() if checkpoint_file else ("rollouts",)),
        "rollout": ("playouts",),
        "playout": ("playouts", "agent", "opponent", "refine_fairest", "half_width"),
    }[estimator]
    for name in ("agent", "opponent"):
        if name in used:
            settings[name] = _agent_identity(settings[name])
    key: dict[str, Any] = {
        "format": _CACHE_FORMAT,
        "estimator": estimator,
        "side": board.side,
        "seed": int(settings["seed"]),
        "mirror": bool(settings["mirror"]),
        **{name: settings[name] for name in used},
    }
    if checkpoint_file is not None and estimator in ("net", "search"):
        key["checkpoint"] = {"sha256": file_sha256(checkpoint_file), "name": checkpoint_file.name}
    return key


def _compute(
    board: Board,
    key: dict,
    checkpoint_file: Path | None,
    device: str,
    *,
    workers: int,
    journal: Path | None,
    progress: bool,
    earlier: Sequence[np.ndarray] | None = None,
) -> pd.DataFrame:
    """The estimator's table; ``earlier``: (wins, games) [K] of an earlier sitting of a
    playout map (pooled like the map), to which this sitting's games are added."""
    estimator, mirror, seed = key["estimator"], key["mirror"], key["seed"]
    if estimator in ("net", "search"):
        if checkpoint_file is not None:
            evaluator, _ = load_evaluator(checkpoint_file, board=board, device=device)
        else:
            evaluator = RolloutEvaluator(key["rollouts"], seed)
        if estimator == "net":
            return opening_table(net_values(evaluator, board, mirror=mirror), board)
        settings = SearchSettings(num_simulations=key["simulations"], c_puct=key["c_puct"])
        v = search_values(evaluator, board, settings=settings, mirror=mirror)
        return opening_table(v, board)
    if estimator == "rollout":
        wins, games = rollout_counts(board, num_rollouts=key["playouts"], seed=seed)
    else:
        job = PlayoutJob(
            key["agent"]["spec"],
            key["opponent"]["spec"],
            board,
            seed=seed,
            sitting=key.get("sitting", 0),
            workers=workers,
            journal=journal,
            key=key,
            progress=progress,
        )
        if job.games_kept:
            print(f"resuming: {job.games_kept} games of {journal} are kept", flush=True)
        try:
            wins, games = job(key["playouts"])
            if earlier is not None:
                kept_wins, kept_games = _unpool(*earlier, board) if mirror else earlier
                wins, games = wins + kept_wins, games + kept_games
            wins, games = refine_fairest(
                job,
                board,
                wins,
                games,
                fairest=key["refine_fairest"],
                half_width=key["half_width"],
                mirror=mirror,
            )
        except KeyboardInterrupt:
            if journal is not None:
                print(
                    f"\nstopped: {job.games_kept} games are kept in {journal}; "
                    "the same command resumes",
                    flush=True,
                )
            raise
    if mirror:
        wins, games = mirror_pool(wins, games, board)
    return played_table(wins, games, board)


def read_opening_table(source: str | os.PathLike | io.StringIO) -> tuple[Board, pd.DataFrame]:
    """An opening table as ``trapy-openings`` writes it (CSV), and its board (from its rows).

    Args:
        source: the file, or its text in a `io.StringIO`.

    Raises:
        ValueError: if it is not CSV with the columns `TABLE_COLUMNS` (a table written before
            the ``games`` column may lack it), one row per cell of a board of side
            2..`MAX_SIDE`, in cell order, with values that are probabilities.
    """
    name = "the opening table" if isinstance(source, io.StringIO) else str(source)
    try:
        stored = pd.read_csv(source)
    except (ValueError, pd.errors.ParserError) as error:
        raise ValueError(f"{name}: not CSV ({one_line(error)})") from None
    if list(stored.columns) == [c for c in TABLE_COLUMNS if c != "games"]:  # an older table
        stored.insert(TABLE_COLUMNS.index("games"), "games", 0)
    if list(stored.columns) != list(TABLE_COLUMNS):
        raise ValueError(f"{name}: not an opening table (columns {list(TABLE_COLUMNS)})")
    # A board of side n has n (3n - 1) / 2 cells.
    sides = [n for n in range(2, MAX_SIDE + 1) if n * (3 * n - 1) // 2 == len(stored)]
    if not sides:
        raise ValueError(f"{name}: {len(stored)} rows is no board's number of cells")
    board = Board(sides[0])
    cells = pd.to_numeric(stored["cell"], errors="coerce").to_numpy()
    if not np.array_equal(cells, np.arange(board.num_cells)) or list(stored["name"]) != list(
        board.names
    ):
        raise ValueError(f"{name}: the rows are not the side-{board.side} cells in order")
    try:
        columns = [pd.to_numeric(stored[c]).to_numpy(np.float64) for c in ("v", "low", "high")]
        games = pd.to_numeric(stored["games"]).to_numpy(np.float64)
    except (ValueError, TypeError):
        raise ValueError(f"{name}: v, low, high and games must be numbers") from None
    if np.isnan(games).any() or (games < 0).any() or (games != np.round(games)).any():
        raise ValueError(f"{name}: games must be counts (integers >= 0)")
    v, low, high = columns
    try:
        return board, opening_table(v, board, low=low, high=high, games=games.astype(np.int64))
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None


def write_opening_table(table: pd.DataFrame, stem: str | os.PathLike) -> tuple[Path, Path]:
    """Write an opening table as ``<stem>.csv`` (what `read_opening_table` reads) and
    ``<stem>.json``: ``{"settings": the estimator's cache key, "rows": one object per cell}``,
    NaN written as null.

    Returns:
        (the CSV's path, the JSON's path).
    """
    stem = Path(stem)
    csv_path, json_path = stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".json")
    table.to_csv(csv_path, index=False)
    rows = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    document = {"settings": table.attrs.get("key"), "rows": rows}
    json_path.write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")
    return csv_path, json_path


def sittings(key: dict) -> list[dict]:
    """The settings of each sitting of a playout map, the first first, from its cache key
    (``table.attrs["key"]``; a map extended by ``extend`` keeps the settings it extended)."""
    history = [key]
    while "extends" in history[0]:
        history.insert(0, history[0]["extends"]["settings"])
    return history


def read_opening_json(path: str | os.PathLike) -> tuple[Board, pd.DataFrame]:
    """An opening table's JSON as `write_opening_table` writes it, and its board.

    Returns:
        (the board, the table), the settings it was estimated with (the estimator's cache
        key: estimator, side, mirror, agents with their nets' SHA-256, ...) in
        ``table.attrs["key"]``.

    Raises:
        ValueError: naming the file, if it is missing or not such a JSON.
    """
    path = Path(path)
    try:
        document = json.loads(path.read_text())
        settings, rows = document["settings"], document["rows"]
        text = pd.DataFrame(rows, columns=list(TABLE_COLUMNS)).to_csv(index=False)
        if not isinstance(settings, dict):
            raise TypeError("no settings")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (an opening map's JSON)") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path}: not an opening table's JSON as trapy-openings writes it ({one_line(error)})"
        ) from None
    try:
        board, table = read_opening_table(io.StringIO(text))
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    table.attrs["key"] = settings
    return board, table


def _earlier_counts(path: Path, board: Board, key: dict) -> tuple[np.ndarray, np.ndarray, dict]:
    """The counts and settings of an earlier playout map that ``key``'s map extends.

    Returns:
        (wins [K] int64, games [K] int64, the earlier map's settings): the counts as its
        table has them (pooled with the mirror cell's where the map is mirrored).

    Raises:
        ValueError: naming the file, if it is not a playout map's JSON of the same board,
            mirror and agents (the agents' specs and their nets' content).
    """
    table_board, table = read_opening_json(path)
    settings = table.attrs["key"]
    if settings.get("estimator") != "playout":
        raise ValueError(f"{path}: not a playout map (its estimator: {settings.get('estimator')})")
    for name in ("side", "mirror", "agent", "opponent"):
        theirs, ours = settings.get(name), key[name]
        if theirs == ours:
            continue
        if isinstance(theirs, dict) and theirs.get("spec") == ours["spec"]:
            theirs, ours = (f"a net of sha256 {d.get('sha256', '?')[:12]}" for d in (theirs, ours))
        elif isinstance(theirs, dict):
            theirs, ours = theirs.get("spec"), ours["spec"]
        raise ValueError(
            f"{path}: its {name} is {theirs!r}, this map's {ours!r}; "
            "only a map of the same agents on the same board gets more games"
        )
    if table_board.side != board.side:
        raise ValueError(f"{path}: its rows are side {table_board.side}'s cells")
    games = table["games"].to_numpy(np.int64)
    exact = table["v"].to_numpy(np.float64) * games
    wins = np.rint(exact).astype(np.int64)
    if (games < 1).any() or (np.abs(exact - wins) > 1e-6).any():
        raise ValueError(f"{path}: its v and games are not counts of won games")
    return wins, games, settings


def _unpool(wins: np.ndarray, games: np.ndarray, board: Board) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell counts whose `mirror_pool` is the given pooled counts: a pair's games split
    into halves (the larger to the lower cell), so that each cell has games."""
    mirror, cells = board.mirror_cells, np.arange(board.num_cells)
    lower = cells < mirror
    upper = cells > mirror
    own_games = games.copy()
    own_games[lower] = (games[lower] + 1) // 2
    own_games[upper] = games[upper] // 2
    own_wins = wins.copy()
    own_wins[lower] = np.minimum(wins[lower], own_games[lower])
    own_wins[upper] = wins[upper] - own_wins[mirror[upper]]
    return own_wins, own_games


def _counts_digest(wins: np.ndarray, games: np.ndarray) -> str:
    data = np.stack([wins, games]).astype(np.int64).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def _read_table(path: Path, board: Board) -> pd.DataFrame:
    stored_board, table = read_opening_table(path)
    if stored_board.side != board.side:
        raise ValueError(f"{path}: not an opening table of the side-{board.side} board")
    return table


# ---------------------------------------------------------------------- nets and agents


def _agent_identity(spec: str) -> dict:
    """A spec, with the content hash of the checkpoint a network spec plays from."""
    identity: dict[str, Any] = {"spec": spec}
    path = spec_checkpoint_file(spec)
    if path is not None:
        identity["sha256"] = file_sha256(path)
    return identity
