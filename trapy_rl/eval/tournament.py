"""Tournaments: every pair of agents (or one against the rest, or each against fixed baselines)
plays a match; Elo from all.

Agents are given as specs (``random``, ``uct:200``, ``mcts:PATH:100``, ...; see
`trapy_rl.agents.parse_agent`). Each pair plays one `play_match`: ``num_games`` games at once,
colours alternated. The agents of a pair are built fresh for their match with seeds derived
from the tournament seed and the two specs, so a pair's result does not depend on which other
agents take part or in which order they are listed.

Cache: with ``cache_path`` every finished match is appended to a JSON-lines file, and a later
tournament reads the matches it holds instead of playing them again (`trapy_rl.eval.cache`):
adding a checkpoint to a rated run plays only its own matches.

Ratings: `trapy_rl.eval.elo.fit_elo` on the win matrix, anchored at ``random`` when it takes
part (otherwise the first agent). Tables, CSV files and plots of the results:
`trapy_rl.eval.report`.

Shapes: M agents.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from trapy_rl.agents.base import AgentSpec
from trapy_rl.agents.kinds import parse_agent
from trapy_rl.eval.arena import MatchResult, play_match
from trapy_rl.eval.cache import ResultCache, match_key
from trapy_rl.eval.elo import EloRatings, fit_elo
from trapy_rl.game.board import Board

__all__ = [
    "MODES",
    "RunCheckpoint",
    "TournamentResult",
    "default_anchor",
    "pairings",
    "play_tournament",
    "run_checkpoints",
]

MODES = ("round_robin", "gauntlet", "baselines", "ladder", "chain")
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
            against each other agent), ``baselines`` (each agent that is not a baseline
            against each baseline, and no other match: a strength curve of checkpoints) or
            ``ladder`` (agents given weakest first, each against the next two: the matches
            that measure the gaps of a rating ladder, where a round robin would spend most
            games on pairs that end 40-0) or ``chain`` (each against the next one only: the
            gaps alone, half a ladder's games).
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
    if mode in ("ladder", "chain"):
        reach = 3 if mode == "ladder" else 2
        return [(a, b) for i, a in enumerate(specs) for b in specs[i + 1 : i + reach]]
    if mode == "baselines":
        missing = [spec for spec in baselines if spec not in specs]
        if missing or not baselines:
            raise ValueError(f"mode=baselines needs baselines among the agents {specs}: {missing}")
        return [(a, b) for a in specs if a not in baselines for b in baselines]
    focus = specs[0] if focus is None else focus
    if focus not in specs:
        raise ValueError(f"gauntlet focus {focus!r} is not one of the agents {specs}")
    return [(focus, other) for other in specs if other != focus]


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
    """A 63-bit seed from ``seed`` and the strings ``parts`` (sha256; stable across runs)."""
    digest = hashlib.sha256("\n".join([str(seed), *parts]).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def default_anchor(specs: Sequence[str]) -> str:
    """The agent rated 0 by default.

    Args:
        specs: [M] the agents' specs, at least one.

    Returns:
        ``random`` if it takes part, else the first agent of kind random, else the first.
    """
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
    starts: Sequence[Sequence[int]] = (),
    cache_path: str | Path | None = None,
    anchor: str | None = None,
    fixed: Mapping[str, float] | None = None,
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
        starts: start positions of the pairs of games instead (see `play_match`).
        cache_path: a JSON-lines file of match results to read and extend (None: no cache).
        anchor: the agent rated 0 (default: see `default_anchor`).
        fixed: ratings held at given values, such as a pool's (see `fit_elo`); no anchor.
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
        match_key(
            a, b, side=board.side, seed=seed, num_games=num_games, openings=openings, starts=starts
        )
        for a, b in pairs
    ]
    results: list[MatchResult | None] = [
        cache.get(key) if cache is not None else None for key in keys
    ]
    to_play = [i for i, result in enumerate(results) if result is None]

    bar = None
    if progress and to_play:
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
                starts=starts,
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
        fixed=fixed,
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
        minutes: the run's training wall-clock then, where the run recorded it (None before).
    """

    path: Path
    iteration: int
    step: int
    side: int
    minutes: float | None = None


def run_checkpoints(run: str | Path) -> list[RunCheckpoint]:
    """The numbered checkpoints (``ckpt_*.pt``) of a run folder, by iteration.

    Args:
        run: a run folder (with ``checkpoints/``) or a checkpoints folder.

    Returns:
        One `RunCheckpoint` per file, iteration and step read from the file itself.

    Raises:
        CheckpointError: when the folder is missing, holds no numbered checkpoints, or one of
            them cannot be read.
    """
    # torch only when checkpoints are read: the ONNX agents play matches without it
    from trapy_rl.nn.checkpoint import CheckpointError, load_checkpoint

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
                minutes=_minutes(payload.get("clock") or {}),
            )
        )
    return found


def _minutes(clock: dict) -> float | None:
    seconds = clock.get("seconds")
    return None if seconds is None else float(seconds) / 60.0
