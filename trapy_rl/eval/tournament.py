"""Tournaments: every pair of agents (or one against the rest, or each against fixed baselines)
plays a match; Elo from all.

Agents are given as specs (``random``, ``uct:200``, ``mcts:PATH:100``, ...; see
`trapy_rl.agents.parse_agent`). Each pair plays one `play_match`: ``num_games`` games at once,
colours alternated. The agents of a pair are built fresh for their match with seeds derived
from the tournament seed and the two specs, so a pair's result does not depend on which other
agents take part or in which order they are listed.

Cache: with ``cache_path`` every finished match is appended to a JSON-lines file, one line

    {"key": {"spec_a": ..., "spec_b": ..., "side": 5, "seed": 0, "num_games": 40,
             "files": {"mcts:run/ckpt_000010.pt:100": "<sha256 of the file>"}},
     "result": {MatchResult's fields}}

and a later tournament with the same key for a pair (in either order) reads the result
instead of playing: adding a checkpoint to a rated run plays only its own matches. ``files``
holds the sha256 of every checkpoint a spec plays from, so a file rewritten under the same
name is played again. Lines that cannot be read (say, cut short by a crash) are skipped with a
warning, and their matches replayed.

Ratings: `trapy_rl.eval.elo.fit_elo` on the win matrix, anchored at ``random`` when it takes
part (otherwise the first agent).

Shapes: M agents.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trapy_rl.agents.base import AgentSpec, parse_agent
from trapy_rl.agents.network import checkpoint_file
from trapy_rl.eval.arena import MatchResult, play_match
from trapy_rl.eval.elo import EloRatings, fit_elo, write_ratings_json
from trapy_rl.game.board import Board

__all__ = [
    "MODES",
    "BaselineRow",
    "ResultCache",
    "RunCheckpoint",
    "TournamentResult",
    "baseline_rows",
    "baseline_table",
    "default_anchor",
    "file_sha256",
    "flip_result",
    "pairings",
    "play_tournament",
    "plot_elo_curve",
    "plot_win_rates",
    "run_checkpoints",
    "write_baseline_csv",
    "write_tournament",
]

MODES = ("round_robin", "gauntlet", "baselines")
_CKPT_PATTERN = re.compile(r"ckpt_(\d+)\.pt$")


# ---------------------------------------------------------------------- pairs
def pairings(
    specs: Sequence[str],
    *,
    mode: str = "round_robin",
    focus: str | None = None,
    baselines: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """The matches of a tournament, as (spec_a, spec_b) pairs.

    Args:
        specs: the agents, distinct.
        mode: ``round_robin`` (every pair once, in list order), ``gauntlet`` (``focus``
            against each other agent) or ``baselines`` (each agent that is not a baseline
            against each baseline, and no other match: a strength curve of checkpoints).
        focus: the gauntlet's agent (default the first).
        baselines: the fixed opponents of mode ``baselines``, each one of ``specs``.

    Raises:
        ValueError: for an unknown mode, fewer than two agents, repeated specs, a focus that
            is not one of the agents, or baselines missing from the agents (or none at all).
    """
    specs = list(specs)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if len(specs) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {specs}")
    repeated = sorted({spec for spec in specs if specs.count(spec) > 1})
    if repeated:
        raise ValueError(f"agent specs must be distinct; repeated: {repeated}")
    if focus is not None and mode != "gauntlet":
        raise ValueError(f"focus is for mode=gauntlet, not mode={mode}")
    baselines = list(baselines)
    if baselines and mode != "baselines":
        raise ValueError(f"baselines are for mode=baselines, not mode={mode}")
    if mode == "round_robin":
        return [(a, b) for i, a in enumerate(specs) for b in specs[i + 1 :]]
    if mode == "baselines":
        missing = [spec for spec in baselines if spec not in specs]
        if missing or not baselines:
            raise ValueError(f"mode=baselines needs baselines among the agents {specs}: {missing}")
        return [(a, b) for a in specs if a not in baselines for b in baselines]
    focus = specs[0] if focus is None else focus
    if focus not in specs:
        raise ValueError(f"gauntlet focus {focus!r} is not one of the agents {specs}")
    return [(focus, other) for other in specs if other != focus]


# ---------------------------------------------------------------------- cache
_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes (remembered per path, size and modification time)."""
    path = Path(path)
    stat = path.stat()
    memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    digest = _HASHES.get(memo)
    if digest is None:
        sha = hashlib.sha256()
        with path.open("rb") as data:
            for block in iter(lambda: data.read(1 << 20), b""):
                sha.update(block)
        digest = _HASHES[memo] = sha.hexdigest()
    return digest


def _files_of(spec: str) -> dict[str, str]:
    path = checkpoint_file(spec)
    return {} if path is None else {spec: file_sha256(path)}


def _match_key(
    spec_a: str, spec_b: str, *, side: int, seed: int, num_games: int, openings: int
) -> dict:
    key = {
        "spec_a": spec_a,
        "spec_b": spec_b,
        "side": int(side),
        "seed": int(seed),
        "num_games": int(num_games),
        "files": {**_files_of(spec_a), **_files_of(spec_b)},
    }
    if openings:  # absent when 0, so results cached before openings existed still match
        key["openings"] = int(openings)
    return key


def _key_text(key: dict) -> str:
    return json.dumps(key, sort_keys=True)


def _flipped_key(key: dict) -> dict:
    return {**key, "spec_a": key["spec_b"], "spec_b": key["spec_a"]}


def flip_result(result: MatchResult) -> MatchResult:
    """The same match seen from b's side (a's wins become b's, a's blue games b's yellow)."""
    return dataclasses.replace(
        result,
        agent_a=result.agent_b,
        agent_b=result.agent_a,
        wins=result.games - result.wins,
        games_as_blue=result.games_as_yellow,
        wins_as_blue=result.games_as_yellow - result.wins_as_yellow,
        games_as_yellow=result.games_as_blue,
        wins_as_yellow=result.games_as_blue - result.wins_as_blue,
    )


class ResultCache:
    """Match results by key, read from and appended to a JSON-lines file.

    Args:
        path: the cache file (created with its folder on the first `put`).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._results: dict[str, MatchResult] = {}
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        fields = {field.name for field in dataclasses.fields(MatchResult)}
        with self.path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    result = MatchResult(
                        **{k: v for k, v in entry["result"].items() if k in fields}
                    )
                    self._results[_key_text(entry["key"])] = result
                except (json.JSONDecodeError, KeyError, TypeError) as error:
                    warnings.warn(
                        f"{self.path}:{number}: skipping an unreadable cache line "
                        f"({type(error).__name__}); that match will be played again",
                        RuntimeWarning,
                        stacklevel=3,
                    )

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: dict) -> MatchResult | None:
        """The result stored for ``key``, or for the same pair in the other order (flipped)."""
        result = self._results.get(_key_text(key))
        if result is not None:
            return result
        result = self._results.get(_key_text(_flipped_key(key)))
        return None if result is None else flip_result(result)

    def put(self, key: dict, result: MatchResult) -> None:
        """Store ``result`` under ``key`` and append it to the file (flushed at once)."""
        self._results[_key_text(key)] = result
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "result": dataclasses.asdict(result)})
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())


# ---------------------------------------------------------------------- playing
@dataclasses.dataclass(frozen=True)
class TournamentResult:
    """The matches of a tournament and the ratings fitted to them.

    Attributes:
        specs: [M] the agents, in the order given.
        matches: one `MatchResult` per pair, agent a and b named by their specs.
        ratings: the Elo fit (names = specs).
        played: matches played now; the rest came from the cache.
        num_games: games per match.
        side: the board side.
        seed: the tournament seed.
    """

    specs: tuple[str, ...]
    matches: tuple[MatchResult, ...]
    ratings: EloRatings
    played: int
    num_games: int
    side: int
    seed: int

    @property
    def cached(self) -> int:
        """Matches read from the cache."""
        return len(self.matches) - self.played

    def to_dict(self) -> dict:
        """A JSON-ready summary: settings, ratings and every match."""
        return {
            "side": self.side,
            "seed": self.seed,
            "num_games": self.num_games,
            "agents": list(self.specs),
            "matches": [dataclasses.asdict(match) for match in self.matches],
            **self.ratings.to_dict(),
        }


def _derived_seed(seed: int, *parts: str) -> int:
    digest = hashlib.sha256("\n".join([str(seed), *parts]).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def default_anchor(specs: Sequence[str]) -> str:
    """``random`` if it takes part, else the first agent of kind random, else the first."""
    if "random" in specs:
        return "random"
    for spec in specs:
        if AgentSpec.parse(spec).kind == "random":
            return spec
    return specs[0]


def play_tournament(
    specs: Sequence[str],
    *,
    board: Board,
    num_games: int,
    seed: int = 0,
    mode: str = "round_robin",
    focus: str | None = None,
    baselines: Sequence[str] = (),
    openings: int = 0,
    cache_path: str | Path | None = None,
    anchor: str | None = None,
    prior_games: float = 1.0,
    progress: bool = False,
) -> TournamentResult:
    """Play every match of a tournament (or read it from the cache) and fit Elo ratings.

    Args:
        specs: [M] distinct agent specs.
        board: the board every game is played on.
        num_games: games per match (colours alternate; an even number is fair).
        seed: the tournament seed; each pair's agents get seeds derived from it and their specs.
        mode: ``round_robin``, ``gauntlet`` or ``baselines`` (see `pairings`).
        focus: the gauntlet's agent (default the first).
        baselines: the fixed opponents of mode ``baselines``.
        openings: random stones that start each pair of games (see `play_match`); needed
            for a meaningful match between two agents without randomness, such as two nets.
        cache_path: a JSON-lines file of match results to read and extend (None: no cache).
        anchor: the agent rated 0 (default: see `default_anchor`).
        prior_games: the Elo fit's virtual games per pair (see `trapy_rl.eval.elo`).
        progress: show one tqdm bar, with an ETA, over all games to play.

    Raises:
        ValueError: for bad specs (before any game is played), a bad mode or focus, or
            ``num_games`` < 1. `CheckpointError` (a ValueError) for a missing or corrupt
            checkpoint.
    """
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
        raise ValueError(f"num_games must be an integer >= 1, got {num_games!r}")
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, got {num_games}")
    specs = [str(spec).strip() for spec in specs]
    pairs = pairings(specs, mode=mode, focus=focus, baselines=[str(b).strip() for b in baselines])
    for spec in specs:  # fail on any bad spec or file now, not after hours of games
        parse_agent(spec, board=board, seed=0)
    cache = ResultCache(cache_path) if cache_path is not None else None

    keys = [
        _match_key(a, b, side=board.side, seed=seed, num_games=num_games, openings=openings)
        for a, b in pairs
    ]
    results: list[MatchResult | None] = [
        cache.get(key) if cache is not None else None for key in keys
    ]
    to_play = [i for i, result in enumerate(results) if result is None]

    bar = None
    if progress and to_play:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(to_play) * int(num_games), desc="tournament", unit="game")
    try:
        for i in to_play:
            a, b = pairs[i]
            if bar is not None:
                bar.set_postfix_str(f"{a} vs {b}", refresh=True)
            low, high = sorted((a, b))
            agent_a = parse_agent(a, board=board, seed=_derived_seed(seed, low, high, a))
            agent_b = parse_agent(b, board=board, seed=_derived_seed(seed, low, high, b))
            result = play_match(
                agent_a,
                agent_b,
                num_games=int(num_games),
                board=board,
                seed=seed,  # every pair plays from the same openings
                openings=openings,
            )
            results[i] = result
            if cache is not None:
                cache.put(keys[i], result)
            if bar is not None:
                bar.update(int(num_games))
    finally:
        if bar is not None:
            bar.close()

    matches = tuple(results)  # every entry is set now
    index = {spec: i for i, spec in enumerate(specs)}
    wins = np.zeros((len(specs), len(specs)), dtype=np.int64)
    for (a, b), match in zip(pairs, matches):
        wins[index[a], index[b]] += match.wins
        wins[index[b], index[a]] += match.games - match.wins
    ratings = fit_elo(
        specs,
        wins,
        anchor=anchor if anchor is not None else default_anchor(specs),
        prior_games=prior_games,
    )
    return TournamentResult(
        specs=tuple(specs),
        matches=matches,
        ratings=ratings,
        played=len(to_play),
        num_games=int(num_games),
        side=board.side,
        seed=int(seed),
    )


# ---------------------------------------------------------------------- runs and outputs
@dataclasses.dataclass(frozen=True)
class RunCheckpoint:
    """A numbered checkpoint of a training run.

    Attributes:
        path: the file.
        iteration: the training iteration it was written at.
        step: the learner's gradient steps then.
        side: the board side of the run.
    """

    path: Path
    iteration: int
    step: int
    side: int


def run_checkpoints(run: str | Path) -> list[RunCheckpoint]:
    """The numbered checkpoints (``ckpt_*.pt``) of a run folder, by iteration.

    ``run`` is a run folder (with ``checkpoints/``) or a checkpoints folder.

    Raises:
        CheckpointError: when the folder is missing, holds no numbered checkpoints, or one of
            them cannot be read.
    """
    from trapy_rl.train.checkpoint import CheckpointError, load_checkpoint

    run = Path(run)
    if not run.is_dir():
        raise CheckpointError(f"{run}: no such run folder")
    folder = run / "checkpoints" if (run / "checkpoints").is_dir() else run
    files = sorted(
        (int(match.group(1)), path)
        for path in folder.glob("ckpt_*.pt")
        if (match := _CKPT_PATTERN.search(path.name))
    )
    if not files:
        raise CheckpointError(f"{folder}: no numbered checkpoints (ckpt_*.pt) in this folder")
    found = []
    for iteration, path in files:
        payload = load_checkpoint(path)
        learner = payload.get("learner") or {}
        found.append(
            RunCheckpoint(
                path=path,
                iteration=int((payload.get("counters") or {}).get("iteration", iteration)),
                step=int(learner.get("step", 0)),
                side=int(payload["side"]),
            )
        )
    return found


@contextlib.contextmanager
def _plot_file(path: Path):
    """Axes of a 7x4.5-inch figure, saved to ``path`` (PNG, 120 dpi) and closed on exit."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5), layout="constrained")
    try:
        yield axes
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def plot_elo_curve(
    ratings: EloRatings,
    points: Sequence[tuple[str, int]],
    path: str | Path,
    *,
    baselines: Sequence[str] = (),
    title: str | None = None,
) -> Path:
    """Elo against training step, with the rating intervals as error bars; a PNG file.

    Args:
        ratings: the fit (names = specs).
        points: (spec, training step) of each checkpoint agent to plot.
        path: the PNG to write.
        baselines: specs drawn as horizontal lines (random, uct, ...), each with its rating.
        title: the plot's title.
    """
    index = {name: i for i, name in enumerate(ratings.names)}
    unknown = [spec for spec, _ in points if spec not in index] + [
        spec for spec in baselines if spec not in index
    ]
    if unknown:
        raise ValueError(f"not among the rated agents: {unknown}")
    ordered = sorted(points, key=lambda point: point[1])
    steps = np.array([step for _, step in ordered], dtype=np.float64)
    rows = np.array([index[spec] for spec, _ in ordered], dtype=np.intp)
    elo = ratings.ratings[rows]
    below, above = elo - ratings.lower[rows], ratings.upper[rows] - elo

    import matplotlib

    path = Path(path)
    with _plot_file(path) as axes:
        axes.errorbar(steps, elo, yerr=[below, above], fmt="o-", capsize=3, label="checkpoints")
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        for number, spec in enumerate(baselines):
            i = index[spec]
            colour = colours[(number + 1) % len(colours)]
            axes.axhline(ratings.ratings[i], color=colour, linestyle="--", linewidth=1)
            if ratings.stderr[i] > 0:
                axes.axhspan(ratings.lower[i], ratings.upper[i], color=colour, alpha=0.12)
            axes.annotate(
                f"{spec} ({ratings.ratings[i]:.0f})",
                (0.01, ratings.ratings[i]),
                xycoords=("axes fraction", "data"),
                textcoords="offset points",
                xytext=(0, 3),
                color=colour,
                fontsize=8,
            )
        level = f"{math.erf(ratings.z / math.sqrt(2.0)):.0%}"
        axes.set_xlabel("training step (gradient steps)")
        axes.set_ylabel(f"Elo ({ratings.names[ratings.anchor]} = 0), {level} intervals")
        axes.set_title(title or "Elo against training step")
        axes.grid(alpha=0.3)
    return path


@dataclasses.dataclass(frozen=True)
class BaselineRow:
    """One checkpoint's match against one baseline, from the checkpoint's side.

    Attributes:
        agent: the checkpoint agent's spec.
        step: its training step (gradient steps).
        baseline: the baseline's spec.
        match: the match, agent a = the checkpoint agent.
    """

    agent: str
    step: int
    baseline: str
    match: MatchResult


def baseline_rows(
    result: TournamentResult, curve: Sequence[tuple[str, int]], baselines: Sequence[str]
) -> list[BaselineRow]:
    """The matches between the ``curve`` agents (spec, step) and the ``baselines``, by step
    then baseline order; pairs that did not play (a gauntlet's other agents) are left out."""
    played = {(m.agent_a, m.agent_b): m for m in result.matches}
    rows = []
    for spec, step in sorted(curve, key=lambda point: point[1]):
        for baseline in baselines:
            match = played.get((spec, baseline))
            if match is None and (baseline, spec) in played:
                match = flip_result(played[(baseline, spec)])
            if match is not None:
                rows.append(BaselineRow(spec, int(step), baseline, match))
    return rows


def _checkpoint_label(spec: str) -> str:
    path = checkpoint_file(spec)
    return spec if path is None else Path(path).name


def baseline_table(rows: Sequence[BaselineRow]) -> str:
    """A text table: one line per checkpoint, one column per baseline with the checkpoint's
    wins / games, win rate and 95% Wilson interval."""
    baselines = list(dict.fromkeys(row.baseline for row in rows))
    agents = list(dict.fromkeys((row.agent, row.step) for row in rows))
    cells = {(row.agent, row.baseline): row.match for row in rows}
    width = max(len("checkpoint"), *(len(_checkpoint_label(a)) for a, _ in agents))
    column = 24
    lines = [
        f"{'step':>7}  {'checkpoint':<{width}}  "
        + "".join(f"{baseline:>{column}}" for baseline in baselines)
    ]
    for agent, step in agents:
        text = []
        for baseline in baselines:
            match = cells.get((agent, baseline))
            if match is None:
                text.append(f"{'-':>{column}}")
                continue
            low, high = match.interval
            cell = f"{match.wins}/{match.games} {match.win_rate:4.0%} [{low:.0%},{high:.0%}]"
            text.append(f"{cell:>{column}}")
        lines.append(f"{step:>7}  {_checkpoint_label(agent):<{width}}  " + "".join(text))
    return "\n".join(lines)


def write_baseline_csv(rows: Sequence[BaselineRow], path: str | Path) -> Path:
    """One CSV line per (checkpoint, baseline): step, agent, baseline, wins, games, win_rate,
    low, high (the 95% Wilson interval)."""
    import csv

    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["step", "agent", "baseline", "wins", "games", "win_rate", "low", "high"])
        for row in rows:
            low, high = row.match.interval
            writer.writerow(
                [
                    row.step,
                    row.agent,
                    row.baseline,
                    row.match.wins,
                    row.match.games,
                    f"{row.match.win_rate:.4f}",
                    f"{low:.4f}",
                    f"{high:.4f}",
                ]
            )
    return path


def plot_win_rates(
    rows: Sequence[BaselineRow], path: str | Path, *, title: str | None = None
) -> Path:
    """Win rate against training step, one line per baseline with its 95% Wilson band; a PNG."""
    path = Path(path)
    with _plot_file(path) as axes:
        for baseline in dict.fromkeys(row.baseline for row in rows):
            mine = [row for row in rows if row.baseline == baseline]
            steps = np.array([row.step for row in mine], dtype=np.float64)
            rates = np.array([row.match.win_rate for row in mine])
            bands = np.array([row.match.interval for row in mine])
            (line,) = axes.plot(steps, rates, "o-", label=f"vs {baseline}")
            axes.fill_between(steps, bands[:, 0], bands[:, 1], color=line.get_color(), alpha=0.15)
        axes.axhline(0.5, color="grey", linestyle=":", linewidth=1)
        games = sorted({row.match.games for row in rows})
        each = f"{games[0]}" if len(games) == 1 else f"{games[0]}-{games[-1]}"
        axes.set_xlabel("training step (gradient steps)")
        axes.set_ylabel(f"win rate ({each} games per point, 95% Wilson band)")
        axes.set_ylim(-0.02, 1.02)
        axes.set_title(title or "Win rate against the baselines")
        axes.grid(alpha=0.3)
        axes.legend(loc="lower right")
    return path


def write_tournament(
    result: TournamentResult,
    folder: str | Path,
    *,
    curve: Sequence[tuple[str, int]] = (),
    baselines: Sequence[str] = (),
) -> dict[str, Path]:
    """Write the table (``ratings.txt``), ``ratings.csv``, ``ratings.json`` (with every match)
    and, when ``curve`` gives (spec, step) points, ``elo_curve.png`` into ``folder``; when the
    curve's agents also played ``baselines``, their win rates too (``winrates.txt``,
    ``winrates.csv``, ``winrate_curve.png``).

    Returns:
        {"table": path, "csv": path, "json": path[, "plot": path][, "winrates": path,
        "winrates_csv": path, "winrate_plot": path]}.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table = result.ratings.table()
    paths = {
        "table": folder / "ratings.txt",
        "csv": result.ratings.write_csv(folder / "ratings.csv"),
        "json": write_ratings_json(
            result.ratings,
            folder / "ratings.json",
            side=result.side,
            seed=result.seed,
            num_games=result.num_games,
            matches=[dataclasses.asdict(match) for match in result.matches],
            curve=[{"agent": spec, "step": int(step)} for spec, step in curve],
        ),
    }
    paths["table"].write_text(table + "\n", encoding="utf-8")
    if curve:
        paths["plot"] = plot_elo_curve(
            result.ratings, curve, folder / "elo_curve.png", baselines=baselines
        )
    rows = baseline_rows(result, curve, baselines)
    if rows:
        paths["winrates"] = folder / "winrates.txt"
        paths["winrates"].write_text(baseline_table(rows) + "\n", encoding="utf-8")
        paths["winrates_csv"] = write_baseline_csv(rows, folder / "winrates.csv")
        paths["winrate_plot"] = plot_win_rates(rows, folder / "winrate_curve.png")
    return paths
