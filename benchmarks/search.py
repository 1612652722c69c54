"""Search speed: simulations per second of the batched PUCT search, without a network.

The uniform evaluator (uniform prior, value 0) costs next to nothing, so these figures are the
search's own overhead: tree arithmetic, replaying paths with the engine, backing up. Positions
are side 10, about 10 random moves into a game; 64 simulations per move; fresh trees (reset
before each search) unless the row says reuse. The bar from the project's issue is 70,000
simulations/s at 256 games.

Each figure is the median over repeats of the wall-clock rate; the note adds the rate in
process CPU time, which other work on a shared machine disturbs less.

To add another evaluator (a network), call `search_rows` with it:

    rows += search_rows(Evaluator(net), "default net", batch_sizes=(256,), quick=quick)
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from trapy_rl.game import BatchGame, Board
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.mcts import MCTS, Evaluator, SearchSettings, select_actions

NUM_SIMULATIONS = 64
PLIES = 10


def opening_positions(num_games: int, *, plies: int = PLIES, seed: int = 0) -> BatchGame:
    """[B] games, each ``plies`` uniformly random legal moves in (none of them over)."""
    rng = np.random.default_rng(seed)
    while True:
        batch = BatchGame(num_games, Board(10))
        for _ in range(plies):
            batch.step(random_legal_actions(batch.legal_mask(), rng))
        if not batch.is_over.any():
            return batch


def _rates(search: MCTS, batch: BatchGame, repeats: int) -> tuple[float, float]:
    """Median (wall, CPU) simulations per second of fresh-tree searches."""
    search.reset()
    search.search(batch)  # warm-up: allocation, caches
    sims = batch.num_games * search.settings.num_simulations
    wall, cpu = [], []
    for _ in range(repeats):
        search.reset()
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        search.search(batch)
        wall.append(sims / (time.perf_counter() - start_wall))
        cpu.append(sims / max(time.process_time() - start_cpu, 1e-9))
    return statistics.median(wall), statistics.median(cpu)


def _reuse_rate(search: MCTS, batch: BatchGame, moves: int) -> float:
    """Wall-clock simulations per second over ``moves`` moves of search, play and advance."""
    batch = batch.copy()
    search.reset()
    rng = np.random.default_rng(0)
    sims = 0
    start = time.perf_counter()
    for _ in range(moves):
        live = np.flatnonzero(~batch.is_over)
        if live.size == 0:
            break
        result = search.search(batch, games=live)
        actions = np.full(batch.num_games, -1)
        actions[live] = select_actions(result.visit_counts, 1.0, rng)
        search.advance(actions)
        batch.step(np.maximum(actions, 0))
        sims += live.size * search.settings.num_simulations
    return sims / (time.perf_counter() - start)


def search_rows(
    evaluator: Evaluator,
    label: str,
    *,
    batch_sizes: tuple[int, ...] = (1, 64, 256),
    quick: bool = False,
    num_simulations: int = NUM_SIMULATIONS,
    reuse: bool = True,
) -> list[dict]:
    """Rows of simulations/s for ``evaluator`` at each batch size (and with subtree reuse)."""
    rows = []
    settings = SearchSettings(num_simulations=num_simulations)
    for num_games in batch_sizes:
        batch = opening_positions(num_games, seed=num_games)
        search = MCTS(evaluator, batch.board, num_games=num_games, settings=settings)
        repeats = (3 if quick else 7) * max(1, 64 // num_games)
        wall, cpu = _rates(search, batch, repeats)
        note = f"{num_simulations} sims/move, side 10, {PLIES} plies in; CPU-time rate {cpu:,.0f}"
        rows.append(
            {
                "name": f"search, {label}, B={num_games}",
                "value": wall,
                "unit": "sims/s",
                "note": note,
            }
        )
    if reuse:
        num_games = max(batch_sizes)
        batch = opening_positions(num_games, seed=num_games)
        search = MCTS(evaluator, batch.board, num_games=num_games, settings=settings)
        rates = [_reuse_rate(search, batch, 4 if quick else 8) for _ in range(1 if quick else 3)]
        rows.append(
            {
                "name": f"search+advance, {label}, B={num_games}",
                "value": statistics.median(rates),
                "unit": "sims/s",
                "note": "subtree reuse over consecutive moves, moves sampled at temperature 1",
            }
        )
    return rows


class _TimedEvaluator:
    """Wraps an evaluator and adds up the wall-clock seconds spent inside it."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator
        self.seconds = 0.0

    def __call__(self, batch: BatchGame, games: np.ndarray):
        start = time.perf_counter()
        try:
            return self.evaluator(batch, games)
        finally:
            self.seconds += time.perf_counter() - start


def default_net_rows(*, quick: bool, num_games: int = 256) -> list[dict]:
    """Search guided by the default training net (configs/model/small.yaml, random weights).

    Reports simulations/s and the share of the search's time spent outside the net.
    """
    import torch
    import yaml

    from trapy_rl.config import CONFIG_DIR
    from trapy_rl.nn import NetConfig, NetEvaluator, PolicyValueNet

    model = yaml.safe_load((Path(CONFIG_DIR) / "model" / "small.yaml").read_text())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as training runs it (TrainConfig.threads: 1)
    try:
        torch.manual_seed(0)
        timed = _TimedEvaluator(NetEvaluator(PolicyValueNet(NetConfig(**model)), device="cpu"))
        batch = opening_positions(num_games, seed=num_games)
        search = MCTS(
            timed,
            batch.board,
            num_games=num_games,
            settings=SearchSettings(num_simulations=NUM_SIMULATIONS),
        )
        search.search(batch)  # warm-up
        totals, outside = [], []
        for _ in range(1 if quick else 3):
            search.reset()
            timed.seconds = 0.0
            start = time.perf_counter()
            search.search(batch)
            total = time.perf_counter() - start
            totals.append(num_games * NUM_SIMULATIONS / total)
            outside.append(100.0 * (total - timed.seconds) / total)
    finally:
        torch.set_num_threads(threads)
    label = f"default net (small preset, 1 thread), B={num_games}"
    return [
        {"name": f"search, {label}", "value": statistics.median(totals), "unit": "sims/s"},
        {
            "name": "search time outside the net, default net",
            "value": statistics.median(outside),
            "unit": "%",
            "note": f"{NUM_SIMULATIONS} sims/move, side 10; the rest is the net's forward pass",
        },
    ]


def run(quick: bool) -> list[dict]:
    from trapy_rl.nn.evaluator import UniformEvaluator

    rows = search_rows(UniformEvaluator(), "uniform evaluator", quick=quick)
    return rows + default_net_rows(quick=quick)
