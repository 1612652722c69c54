"""Self-play throughput: searched moves per second with the default training configuration.

The default configuration (``configs/train.yaml``: its net, search and number of concurrent
games) is composed as ``trapy-train`` would, then played on side 10, the real game, and on the
default training board. A "move" is one search at one game's root, so moves/s times the
simulations per move is simulations/s. The torch thread count is the configuration's.
Where CUDA is available, side 10 is also played with the net on the GPU in bf16 (the ``small``
and ``large`` presets, 32 and 256 concurrent games): the search itself stays on the CPU.
"""

from __future__ import annotations

import statistics

import torch

from trapy_rl.config import compose_settings
from trapy_rl.game.board import Board
from trapy_rl.nn import NetEvaluator, PolicyValueNet
from trapy_rl.train.selfplay import SelfPlay
from trapy_rl.train.settings import TrainConfig


def default_config(overrides: list[str] | None = None) -> TrainConfig:
    """The composed default training configuration."""
    return compose_settings("train", TrainConfig, overrides or [])


def _moves_per_second(
    config: TrainConfig, side: int, moves: int, repeats: int, *, device: str = "cpu"
) -> float:
    torch.manual_seed(0)
    net = PolicyValueNet(config.model)
    selfplay = SelfPlay(
        NetEvaluator(net, device=device, bf16=device == "cuda"),
        Board(side),
        search=config.mcts,
        settings=config.selfplay,
        seed=0,
    )
    selfplay.play(1, seed=0)  # warm-up: allocations, caches
    rates = [selfplay.play(moves, seed=1 + r).stats.moves_per_s for r in range(repeats)]
    return statistics.median(rates)


def run(quick: bool) -> list[dict]:
    config = default_config()
    threads = torch.get_num_threads()
    if config.threads > 0:
        torch.set_num_threads(config.threads)
    moves, repeats = (2, 1) if quick else (8, 3)
    sims = config.mcts.num_simulations
    games = config.selfplay.num_games
    rows = []
    try:
        for side in sorted({10, config.side}, reverse=True):
            rate = _moves_per_second(config, side, moves, repeats)
            note = (
                f"default config: {games} games, {sims} simulations, "
                f"net {config.model.to_dict()}, {torch.get_num_threads()} torch threads"
            )
            rows.append(
                {"name": f"self-play side {side}", "value": rate, "unit": "moves/s", "note": note}
            )
            rows.append(
                {
                    "name": f"self-play side {side} simulations",
                    "value": rate * sims,
                    "unit": "sims/s",
                }
            )
    finally:
        torch.set_num_threads(threads)
    if torch.cuda.is_available():
        rows.extend(run_cuda(moves, repeats))
    return rows


def run_cuda(moves: int, repeats: int) -> list[dict]:
    """Side-10 self-play with the net on CUDA in bf16, by preset and number of games."""
    rows = []
    for preset in ("small", "large"):
        for games in (32, 256):
            config = default_config([f"model={preset}", f"selfplay.num_games={games}"])
            rate = _moves_per_second(config, 10, moves, repeats, device="cuda")
            rows.append(
                {
                    "name": f"self-play side 10 cuda bf16 {preset} {games} games",
                    "value": rate,
                    "unit": "moves/s",
                    "note": f"{config.mcts.num_simulations} simulations, "
                    f"{torch.cuda.get_device_name()}",
                }
            )
    return rows
