"""Self-play throughput: searched moves per second with the default training configuration.

The default configuration (``configs/train.yaml``: its net, search and number of concurrent
games) is composed as ``trapy-train`` would, then played on side 10, the real game, and on the
default training board. A "move" is one search at one game's root, so moves/s times the
simulations per move is simulations/s. The torch thread count is the configuration's.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import torch

from trapy_rl.game.board import Board
from trapy_rl.nn import Evaluator, PolicyValueNet
from trapy_rl.train.selfplay import SelfPlay
from trapy_rl.train.workers import selfplay_options

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"


def default_config(overrides: list[str] | None = None) -> dict:
    """The composed default training configuration, as plain dicts."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    import trapy_rl.config  # noqa: F401  (stores the schemas)

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="train", overrides=overrides or [])
    return OmegaConf.to_container(cfg, resolve=True)


def _moves_per_second(config: dict, side: int, moves: int, repeats: int) -> float:
    torch.manual_seed(0)
    net = PolicyValueNet(**config["model"])
    options = {**selfplay_options(config), "seed": 0}
    selfplay = SelfPlay(Evaluator(net, device="cpu"), Board(side), **options)
    selfplay.play(1, seed=0)  # warm-up: allocations, caches
    rates = [selfplay.play(moves, seed=1 + r).stats.moves_per_s for r in range(repeats)]
    return statistics.median(rates)


def run(quick: bool) -> list[dict]:
    config = default_config()
    threads = torch.get_num_threads()
    if config["threads"] > 0:
        torch.set_num_threads(config["threads"])
    moves, repeats = (2, 1) if quick else (8, 3)
    sims = config["mcts"]["num_simulations"]
    games = config["selfplay"]["num_games"]
    rows = []
    try:
        for side in sorted({10, config["side"]}, reverse=True):
            rate = _moves_per_second(config, side, moves, repeats)
            note = (
                f"default config: {games} games, {sims} simulations, "
                f"net {config['model']}, {torch.get_num_threads()} torch threads"
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
    return rows
