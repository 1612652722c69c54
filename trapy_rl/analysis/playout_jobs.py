"""The opening map's games: seeded batches, played on worker processes, kept in a journal.

A map from play needs tens of thousands of games (hours of a core), so the games of
`trapy_rl.analysis.estimators.playout_counts` are cut into batches that do not depend on each
other: batch b of round r is played by agents built from their specs and seeded from
``(seed, r, b)``. Its result is a function of those alone, whoever plays it and whenever, so

* ``workers=N`` plays N batches at once in worker processes, with the same result as one
  process (the wins of a round are a sum);
* with a journal, each finished batch is written down (atomically) as it comes in, and a job
  that was stopped (Ctrl-C, the end of a session, a crash) plays only the batches the journal
  lacks when it is run again: its result is the one it would have had without the stop.

A round is one call of a `PlayoutJob`: the map's first games are round 0, each refinement of
`trapy_rl.analysis.estimators.refine_fairest` the next. A sitting is one job: a map that
gets more games later (``estimate_openings(extend=...)``) plays them as sitting 1, 2, ..., whose
seeds are none of the earlier sittings'. Shapes: K cells.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from trapy_rl.agents.base import Agent
from trapy_rl.agents.kinds import parse_agent
from trapy_rl.analysis.estimators import _check_positive, playout_counts
from trapy_rl.game.board import Board

__all__ = ["JOURNAL_FORMAT", "PlayoutJob", "play_batch"]

JOURNAL_FORMAT = 1


def seeded_agents(agent: str, opponent: str, board: Board, seed: Any) -> tuple[Agent, Agent]:
    """The stone's owner and the player to move of a batch, each seeded from ``seed`` (an int
    or `numpy.random.SeedSequence`); one agent for both where the specs are the same."""
    sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    owner_seed, mover_seed = (int(s) for s in sequence.generate_state(2))
    owner = parse_agent(agent, board=board, seed=owner_seed)
    mover = owner if opponent == agent else parse_agent(opponent, board=board, seed=mover_seed)
    return owner, mover


def play_batch(agent: str, opponent: str, side: int, cells: np.ndarray, seed: Any) -> np.ndarray:
    """Play one batch: a game from the swapped opening of each of ``cells``.

    Args:
        agent: the spec of the stone's owner; opponent: the spec of the player to move (the
            same spec: one agent plays both sides, as in `PlayoutJob`).
        side: the board's side.
        cells: [n] int, the opening of each game, in ascending order.
        seed: an int or `numpy.random.SeedSequence` for the agents (the owner's and the
            opponent's seeds are drawn from it).

    Returns:
        [K] int64, the owner's wins per cell.
    """
    board = Board(side)
    owner, mover = seeded_agents(agent, opponent, board, seed)
    counts = np.bincount(cells, minlength=board.num_cells)
    wins, _ = playout_counts(owner, mover, board, num_games=counts, batch_size=max(len(cells), 1))
    return wins


def _play_labelled(item: tuple[str, tuple]) -> tuple[str, np.ndarray]:
    label, task = item
    return label, play_batch(*task)


def _init_worker() -> None:
    import torch  # in the worker process, which needs torch only for this setting

    torch.set_num_threads(1)  # N workers on N cores; more threads only contend
    # Ctrl-C reaches the whole process group: the job's process stops the workers, so that
    # they go quietly instead of each printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class PlayoutJob:
    """Games from the swapped openings between two agent specs, in seeded, journaled batches.

    ``job(num_games)`` plays one round and returns its counts, like
    `trapy_rl.analysis.estimators.playout_counts` (the ``play`` that
    `trapy_rl.analysis.estimators.refine_fairest` takes). The round's games, cell by cell in
    ascending order, are cut into batches of ``batch_size``; batch b of round r is played by
    `play_batch` with the seed ``SeedSequence(seed, spawn_key=(r, b))`` in sitting 0, and
    ``SeedSequence(seed, spawn_key=(r, b, s))`` in sitting s > 0.

    Args:
        agent: the spec of the stone's owner (e.g. ``mcts:pretrained:64,noise=true``).
        opponent: the spec of the player to move (default ``agent``: one agent plays both).
        board: the board.
        seed: the job's seed; the result is a function of it and the specs, sizes and rounds.
        sitting: which of a map's jobs this is (0: its first games; s: the s-th time more
            games were added to it), so that no two jobs of one map share a seed.
        batch_size: games a batch. Each agent is asked for about half of them at a time
            (one side's moves); on side 10 a move costs the same per game from 256 games a
            call to 1,024, and less than that makes it dearer. A batch is also what a stop
            loses and how often the bar moves (about 6 minutes of a core on side 10).
        workers: batches played at once, each in its own process (1: in this process).
        journal: a JSON file that keeps each finished batch, read back when the job runs
            again (None: none); it must have been written for the same ``key``.
        key: what the journal is for (the map's settings); a journal written for another key
            is refused rather than mixed in.
        progress: show a bar counting games, with rate and ETA.

    Raises:
        ValueError: for a bad setting, or a journal that is not this job's.
    """

    def __init__(
        self,
        agent: str,
        opponent: str | None,
        board: Board,
        *,
        seed: int,
        sitting: int = 0,
        batch_size: int = 512,
        workers: int = 1,
        journal: str | os.PathLike | None = None,
        key: dict | None = None,
        progress: bool = False,
    ) -> None:
        _check_positive(batch_size, "batch_size")
        _check_positive(workers, "workers")
        if isinstance(sitting, bool) or not isinstance(sitting, (int, np.integer)) or sitting < 0:
            raise ValueError(f"sitting must be an integer >= 0, got {sitting!r}")
        self.agent, self.opponent = agent, opponent or agent
        self.board = board
        self.seed = int(seed)
        self.sitting = int(sitting)
        self.batch_size = int(batch_size)
        self.workers = int(workers)
        self.journal = None if journal is None else Path(journal)
        self.key = key or {}
        self.progress = progress
        self.round = 0
        self.batches: dict[str, dict] = self._read_journal()  # label -> {"cells", "games", "wins"}

    # ------------------------------------------------------------------ a round

    def __call__(self, num_games: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play the next round: ``num_games`` games from each opening (int, or [K] int).

        Returns:
            (wins [K] int64, games [K] int64): the owner's wins and the games, per cell.
        """
        k = self.board.num_cells
        counts = np.broadcast_to(np.asarray(num_games), (k,)).astype(np.int64)  # [K]
        if (counts < 0).any():
            raise ValueError("num_games must be >= 0 for every cell")
        openings = np.repeat(np.arange(k), counts)  # [sum n] ascending
        batches = {
            f"{self.round}:{index}": openings[begin : begin + self.batch_size]
            for index, begin in enumerate(range(0, len(openings), self.batch_size))
        }
        wins = np.zeros(k, dtype=np.int64)
        todo = {}
        for label, cells in batches.items():
            kept = self.batches.get(label)
            if kept is None:
                todo[label] = cells
                continue
            if kept["cells"] != _digest(cells):
                raise ValueError(
                    f"{self.journal}: batch {label} was played from other openings "
                    "(the journal is from another version of the job); delete it to start over"
                )
            wins += np.asarray(kept["wins"], dtype=np.int64)
        done = len(openings) - sum(len(cells) for cells in todo.values())
        with tqdm(
            total=len(openings),
            initial=done,
            unit="game",
            disable=not self.progress,
            desc=f"openings, round {self.round}",
        ) as bar:
            for label, batch_wins in self._play(todo):
                wins += batch_wins
                self._keep(label, todo[label], batch_wins)
                bar.update(len(todo[label]))
        self.round += 1
        return wins, counts.copy()

    def _play(self, todo: dict[str, np.ndarray]) -> Iterator[tuple[str, np.ndarray]]:
        """Yield (label, wins [K] int64) for each batch of ``todo`` as it finishes."""
        if not todo:
            return
        tasks = {
            label: (self.agent, self.opponent, self.board.side, cells, self._seed(label))
            for label, cells in todo.items()
        }
        if self.workers == 1 or len(tasks) == 1:
            for label, task in tasks.items():
                yield label, play_batch(*task)
            return
        # spawn, not fork: a forked copy of a process that has run torch can deadlock.
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(min(self.workers, len(tasks)), initializer=_init_worker)
        try:
            yield from pool.imap_unordered(_play_labelled, tasks.items())
            pool.close()
        except BaseException:
            pool.terminate()  # Ctrl-C: stop the batches in flight now, not when they end
            raise
        finally:
            pool.join()

    def _seed(self, label: str) -> np.random.SeedSequence:
        round_, index = (int(part) for part in label.split(":"))
        sitting = (self.sitting,) if self.sitting else ()  # sitting 0's seeds predate sittings
        return np.random.SeedSequence(self.seed, spawn_key=(round_, index, *sitting))

    # ------------------------------------------------------------------ the journal

    @property
    def games_kept(self) -> int:
        """Games of the batches in the journal (played now or before)."""
        return sum(int(batch["games"]) for batch in self.batches.values())

    def _keep(self, label: str, cells: np.ndarray, wins: np.ndarray) -> None:
        self.batches[label] = {
            "cells": _digest(cells),
            "games": len(cells),
            "wins": [int(w) for w in wins],
        }
        if self.journal is None:
            return
        document = {"format": JOURNAL_FORMAT, "key": self.key, "batches": self.batches}
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.journal.with_name(self.journal.name + ".tmp")
        temporary.write_text(json.dumps(document, sort_keys=True) + "\n")
        os.replace(temporary, self.journal)  # a stop mid-write leaves the last whole journal

    def _read_journal(self) -> dict[str, dict]:
        if self.journal is None or not self.journal.is_file():
            return {}
        try:
            document = json.loads(self.journal.read_text())
            batches = document["batches"]
            fine = document["format"] == JOURNAL_FORMAT and all(
                isinstance(batch["cells"], str)
                and len(batch["wins"]) == self.board.num_cells
                and all(0 <= int(w) <= int(batch["games"]) for w in batch["wins"])
                for batch in batches.values()
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            fine = False
        if not fine:
            raise ValueError(f"{self.journal}: not a journal of played batches; delete it")
        if document["key"] != self.key:
            raise ValueError(f"{self.journal}: written for other settings; delete it")
        return batches


def _digest(cells: np.ndarray) -> str:
    """A short hash of a batch's openings, to check a journal's batch against the plan."""
    data = np.ascontiguousarray(cells, dtype=np.int64).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]
