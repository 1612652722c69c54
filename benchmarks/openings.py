"""The opening map's games: games per second in one process and on worker processes.

The same round of games from the swapped openings of side 10, the map's agent
(``mcts:pretrained:64,noise=true,temperature_moves=12``, playing both sides), cut into the same
seeded batches (`trapy_rl.analysis.playout_jobs.PlayoutJob`), is played once in this process
and once on one worker process per core (at most 4 batches). Equal batches and seeds: both
play the same games, and the tables are compared to say so. One repeat each (a repeat is
minutes), so the ratio, not the last digit, is the figure.
"""

from __future__ import annotations

import os
import time

import numpy as np

from trapy_rl.analysis.playout_jobs import PlayoutJob
from trapy_rl.game.board import Board

AGENT = "mcts:pretrained:64,noise=true,temperature_moves=12"


def _games_per_second(
    agent: str, games: int, batch_size: int, workers: int
) -> tuple[float, np.ndarray]:
    board = Board(10)
    job = PlayoutJob(agent, None, board, seed=0, batch_size=batch_size, workers=workers)
    cells = np.bincount(np.arange(games) % board.num_cells, minlength=board.num_cells)
    start = time.perf_counter()
    wins, _ = job(cells)
    return games / (time.perf_counter() - start), wins


def run(quick: bool) -> list[dict]:
    workers = max(1, min(os.cpu_count() or 1, 4))
    agent, batch_size = (AGENT.replace(":64,", ":4,"), 8) if quick else (AGENT, 128)
    games = batch_size * workers
    one, wins_one = _games_per_second(agent, games, batch_size, 1)
    many, wins_many = _games_per_second(agent, games, batch_size, workers)
    same = "the same games" if np.array_equal(wins_one, wins_many) else "DIFFERENT RESULTS"
    note = f"{games} games, batches of {batch_size}, {agent}"
    return [
        {"name": "one process", "value": one, "unit": "games/s", "note": note},
        {"name": f"{workers} worker processes", "value": many, "unit": "games/s", "note": same},
        {"name": f"speed-up with {workers} workers", "value": many / one, "unit": "x"},
    ]
