"""The match-result cache of tournaments: a JSON-lines file of finished matches by key.

With ``cache_path`` (`trapy_rl.eval.tournament.play_tournament`) every finished match is
appended to the file, one line

    {"key": {"spec_a": ..., "spec_b": ..., "side": 5, "seed": 0, "num_games": 40,
             "files": {"mcts:run/ckpt_000010.pt:100": "<sha256 of the file>"}},
     "result": {MatchResult's fields}}

and a later tournament with the same key for a pair (in either order) reads the result
instead of playing: adding a checkpoint to a rated run plays only its own matches. ``files``
holds the sha256 of every checkpoint a spec plays from, so a file rewritten under the same
name is played again; ``openings`` is in the key only when it is not 0, and ``starts`` (the
digest of the start set) only when matches start from a set, so results cached before those
existed still match. Lines that cannot be read (say, cut short by a crash) are
skipped with a warning, and their matches replayed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

from trapy_rl.agents.network import checkpoint_file
from trapy_rl.eval.arena import MatchResult
from trapy_rl.nn.digest import file_sha256

__all__ = ["ResultCache", "flip_result", "match_key", "starts_digest"]


def _files_of(spec: str) -> dict[str, str]:
    """{spec: sha256} of the checkpoint a network spec plays from; empty for other kinds."""
    path = checkpoint_file(spec)
    return {} if path is None else {spec: file_sha256(path)}


def match_key(
    spec_a: str,
    spec_b: str,
    *,
    side: int,
    seed: int,
    num_games: int,
    openings: int,
    starts: Sequence[Sequence[int]] = (),
) -> dict:
    """The cache key of one match of a tournament (see the module docstring).

    Args:
        spec_a, spec_b: the agents' specs, a first.
        side: the board side.
        seed: the tournament seed.
        num_games: games per match.
        openings: random stones per pair of games; left out of the key when 0.
        starts: the start positions of the pairs of games; in the key as the sha256 of the
            set (`starts_digest`) when there are any.

    Raises:
        CheckpointError: when a network spec names no existing file or run folder.
    """
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
    if starts:
        key["starts"] = starts_digest(starts)
    return key


def starts_digest(starts: Sequence[Sequence[int]]) -> str:
    """The sha256 of a start set (its actions, in order), as 16 hex digits."""
    text = "\n".join(" ".join(str(int(a)) for a in start) for start in starts)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _key_text(key: dict) -> str:
    """The key as canonical JSON (sorted keys): what results are stored under."""
    return json.dumps(key, sort_keys=True)


def _flipped_key(key: dict) -> dict:
    """The key of the same match with a and b exchanged."""
    return {**key, "spec_a": key["spec_b"], "spec_b": key["spec_a"]}


def flip_result(result: MatchResult) -> MatchResult:
    """The same match seen from b's side (a's wins become b's, a's blue games b's yellow).

    Args:
        result: a match of a against b.

    Returns:
        The match of b against a; flipping twice gives ``result`` back.
    """
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
        """The result stored for ``key``, or for the same pair in the other order (flipped).

        Args:
            key: from `match_key`.

        Returns:
            The match, agent a = ``key["spec_a"]``; None when neither order is stored.
        """
        result = self._results.get(_key_text(key))
        if result is not None:
            return result
        result = self._results.get(_key_text(_flipped_key(key)))
        return None if result is None else flip_result(result)

    def put(self, key: dict, result: MatchResult) -> None:
        """Store ``result`` under ``key`` and append it to the file (flushed at once).

        Args:
            key: from `match_key`.
            result: the match, agent a = ``key["spec_a"]``.
        """
        self._results[_key_text(key)] = result
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "result": dataclasses.asdict(result)})
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())

    def matches_of(self, spec: str, *, side: int) -> list[MatchResult]:
        """Every stored match of ``spec`` on side ``side`` whose checkpoint files are still
        the ones played (their sha256 as keyed), agent a = ``spec``: what a rating can be
        refitted from without playing (`trapy_rl.eval.pool.rating_from_cache`).

        Raises:
            CheckpointError: when a network spec of a stored match names no existing file.
        """
        found = []
        for text, result in self._results.items():
            key = json.loads(text)  # the key, from its canonical text
            if key.get("side") != side or spec not in (key["spec_a"], key["spec_b"]):
                continue
            files = key.get("files", {})  # file_sha256 remembers each file's digest
            if any(_files_of(name).get(name) != digest for name, digest in files.items()):
                continue  # a file rewritten since: its matches are not this agent's
            found.append(result if key["spec_a"] == spec else flip_result(result))
        return found
