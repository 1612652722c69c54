"""Engine throughput: random legal play to the end of every game, in placed stones per second.

Two figures per batch size: with the random baseline's sampler (`random_legal_actions`, uniform
over legal cells, swap half the time), the number the issue asks for; and with a precomputed
random order of the cells (random play without the sampler's cost), which isolates `step`.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from trapy_rl.game import BatchGame, GameState
from trapy_rl.game.sampling import random_legal_actions


def _play_batch(num_games: int, seed: int, *, sampler: bool) -> tuple[int, float]:
    rng = np.random.default_rng(seed)
    batch = BatchGame(num_games)
    order = np.argsort(rng.random((num_games, batch.board.num_cells)), axis=1)
    stones = 0
    ply = 0
    start = time.perf_counter()
    while not batch.is_over.all():
        live = batch.winner == 0
        if sampler:
            actions = random_legal_actions(batch.legal_mask(), rng)
        else:
            actions = order[:, ply]  # a random order of the cells is uniform random play
        placed = live & (actions < batch.board.num_cells)
        batch.step(actions)
        stones += int(placed.sum())
        ply += 1
    return stones, time.perf_counter() - start


def _play_single(num_games: int, seed: int) -> tuple[int, float]:
    rng = np.random.default_rng(seed)
    stones = 0
    start = time.perf_counter()
    for _ in range(num_games):
        state = GameState()
        while not state.is_over:
            legal = np.flatnonzero(state.legal_mask()[:-1])
            state.play(int(legal[rng.integers(len(legal))]))
            stones += 1
    return stones, time.perf_counter() - start


def _median_rate(run, repeats: int) -> float:
    rates = []
    for seed in range(repeats):
        stones, seconds = run(seed)
        rates.append(stones / seconds)
    return statistics.median(rates)


def run(quick: bool) -> list[dict]:
    repeats = 1 if quick else 5
    rows = []
    rates = {}
    for num_games in (1, 64, 1024, 4096):
        # Keep each measurement near a second of work: many rounds for the small batches.
        rounds = max(1, 64 // num_games) if not quick else 1

        def sampled(seed, b=num_games, n=rounds):
            parts = [_play_batch(b, seed * 1000 + i, sampler=True) for i in range(n)]
            return sum(p[0] for p in parts), sum(p[1] for p in parts)

        def ordered(seed, b=num_games, n=rounds):
            parts = [_play_batch(b, seed * 1000 + i, sampler=False) for i in range(n)]
            return sum(p[0] for p in parts), sum(p[1] for p in parts)

        rates[num_games] = _median_rate(sampled, repeats)
        rows.append(
            {
                "name": f"random play, B={num_games}",
                "value": rates[num_games],
                "unit": "moves/s",
                "note": "random_legal_actions + step",
            }
        )
        rows.append(
            {
                "name": f"step only (random cell order), B={num_games}",
                "value": _median_rate(ordered, repeats),
                "unit": "moves/s",
            }
        )
    single = _median_rate(lambda seed: _play_single(2 if quick else 10, seed), repeats)
    rows.append({"name": "GameState (one game, reference)", "value": single, "unit": "moves/s"})
    rows.append(
        {
            "name": "B=4096 over the GameState reference",
            "value": rates[4096] / single,
            "unit": "x",
        }
    )
    return rows
