"""A diagnostic, not an estimator: is a net's played opening map off because its self-play never
reached the position the map plays from?

v(c) is played from the position after *c*, *swap*: one opponent stone, the swap gone. The input
planes are the mover's view, so that position differs from the swap decision itself (one
opponent stone, the swap still legal) only in the ``swap_allowed`` plane. A net whose self-play
never swaps has trained on the second and never on the first. This script plays the first-round
map (``--games`` per cell, mirror pairs pooled, no refinement) with that plane switched on in
positions of a single stone, so that the net replies as it learned to, and compares the result
with published maps by Spearman's rho.

    python scripts/swap_plane_map.py pretrained --plane on      # the net's known view
    python scripts/swap_plane_map.py pretrained --plane off     # the same games, as the map
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import trapy_rl.nn.evaluator as evaluator_module
from trapy_rl.agents.kinds import parse_agent
from trapy_rl.analysis.estimators import mirror_pool, playout_counts
from trapy_rl.game import Board
from trapy_rl.game.planes import PLANE_NAMES, encode_planes

ROOT = Path(__file__).resolve().parents[1]
SWAP, ON_BOARD = PLANE_NAMES.index("swap_allowed"), PLANE_NAMES.index("on_board")


def planes_with_swap_shown(batch, games=None) -> np.ndarray:
    """`encode_planes`, with the swap plane on where a single stone is on the board."""
    planes = encode_planes(batch, games)  # [n, C, H, W]
    stones = planes[:, :2].sum(axis=(1, 2, 3))  # [n]
    lone = (stones == 1) & (planes[:, SWAP].max(axis=(1, 2)) == 0)
    planes[lone, SWAP] = planes[lone, ON_BOARD]
    return planes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("net", help="a checkpoint or shipped name")
    parser.add_argument("--plane", choices=["on", "off"], default="on")
    parser.add_argument("--games", type=int, default=16, help="games per cell")
    parser.add_argument("--simulations", type=int, default=64)
    parser.add_argument("--side", type=int, default=10)
    parser.add_argument(
        "--maps", nargs="*", type=Path,
        default=sorted((ROOT / "docs").glob("openings-seed_*.csv")),
        help="published tables (CSV of trapy-openings) to compare with",
    )  # fmt: skip
    args = parser.parse_args()
    if args.plane == "on":  # what NetEvaluator encodes; nothing else is changed
        evaluator_module.encode_planes = planes_with_swap_shown
    board = Board(args.side)
    agent = parse_agent(f"mcts:{args.net}:{args.simulations},noise=true", board=board, seed=0)
    wins, games = playout_counts(agent, agent, board, num_games=args.games, progress=True)
    wins, games = mirror_pool(wins, games, board)
    v = wins / games  # [K]
    print(f"{args.net}, swap plane {args.plane}: yellow should swap {np.mean(v > 0.5):.0%}")
    for path in args.maps:
        other = pd.read_csv(path).sort_values("cell")["v"].to_numpy()
        print(f"  Spearman's rho against {path.name}: {spearmanr(v, other)[0]:.3f}")


if __name__ == "__main__":
    main()
