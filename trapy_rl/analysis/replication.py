"""What two played maps of one agent agree on: the published method replayed on a known truth.

Two played opening maps differ by sampling even when their agents are the same, so agreement
bars (Spearman's rho, the fairest cells shared, no opposite sure decisions; `compare_maps`)
can be out of reach of a method before any net is asked. `replicate_playout_map` measures
that: it takes a map's chances as the truth and plays the method twice on it, binomial games
in place of the agents' games (the first ``playouts`` games from every opening, then
`refine_fairest` with its own adaptive choices, the counts pooled with the mirror cell's), and
compares the two maps, ``draws`` times. Since both maps measure the same chances, what they
reach is the ceiling of any two agents' agreement by that method, and the settings that
reach the bars can be chosen before the games are paid for.

Shapes: K cells, D draws.

>>> from trapy_rl.game import Board
>>> from trapy_rl.analysis.openings import opening_table
>>> board = Board(3)
>>> truth = opening_table(np.linspace(0.05, 0.95, board.num_cells), board)
>>> few = replicate_playout_map(truth, board, playouts=2, refine_fairest=0, fairest=4, draws=50)
>>> many = replicate_playout_map(truth, board, playouts=2000, refine_fairest=0, fairest=4, draws=50)
>>> bool(np.median(few.spearman) < np.median(many.spearman))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from trapy_rl.analysis.agreement import compare_maps, true_chances
from trapy_rl.analysis.estimators import _check_positive, check_refinement, mirror_pool
from trapy_rl.analysis.estimators import refine_fairest as refine_counts
from trapy_rl.analysis.openings import played_table, sittings
from trapy_rl.game.board import Board

__all__ = [
    "FAIREST_SHARED_BAR",
    "SPEARMAN_BAR",
    "Replication",
    "playout_method",
    "replicate_playout_map",
]

# The bars a converged opening answer is held to (with no opposite sure decision).
SPEARMAN_BAR = 0.95
FAIREST_SHARED_BAR = 15


@dataclass(frozen=True)
class Replication:
    """Pairs of maps of one truth (`replicate_playout_map`), one entry a pair.

    Attributes:
        spearman: [D] float64, the pair's Spearman's rho.
        fairest_shared: [D] int64, how many of each map's ``fairest`` cells the other shares.
        opposite: [D] int64, cells sure in both maps with opposite swap decisions.
        games: [D] int64, the games of one map of the pair (the first), mirror pairs once.
        fairest: the number of fairest cells compared.
    """

    spearman: np.ndarray
    fairest_shared: np.ndarray
    opposite: np.ndarray
    games: np.ndarray
    fairest: int

    def meets(
        self, *, spearman: float = SPEARMAN_BAR, fairest_shared: int = FAIREST_SHARED_BAR
    ) -> np.ndarray:
        """[D] bool: the pair has rho >= ``spearman``, at least ``fairest_shared`` fairest
        cells shared, and no opposite sure decision."""
        return (
            (self.spearman >= spearman)
            & (self.fairest_shared >= fairest_shared)
            & (self.opposite == 0)
        )

    def __str__(self) -> str:
        rho_low, rho_high = np.percentile(self.spearman, [5, 95])
        shared_low, shared_high = np.percentile(self.fairest_shared, [5, 95])
        return (
            f"{np.median(self.games):.0f} games a map: rho {np.median(self.spearman):.3f} "
            f"[{rho_low:.3f}, {rho_high:.3f}], fairest {self.fairest} shared "
            f"{np.median(self.fairest_shared):.0f} [{shared_low:.0f}, {shared_high:.0f}], "
            f"no opposite sure decision in {np.mean(self.opposite == 0):.0%} "
            f"(medians, 90% ranges, {len(self.spearman)} pairs)"
        )


def playout_method(key: dict) -> dict:
    """The settings of `replicate_playout_map` that replay the method a played map was made
    with, from its cache key (``table.attrs["key"]``, as `read_opening_json` reads it): the
    first games of all its sittings added, its refinement and mirror pooling."""
    return {
        "playouts": sum(sitting["playouts"] for sitting in sittings(key)),
        "refine_fairest": key["refine_fairest"],
        "half_width": key["half_width"],
        "mirror": key["mirror"],
    }


def replicate_playout_map(
    truth: pd.DataFrame,
    board: Board,
    *,
    playouts: int,
    refine_fairest: int = 20,
    half_width: float = 0.05,
    mirror: bool = True,
    fairest: int = 20,
    draws: int = 200,
    seed: int = 0,
) -> Replication:
    """Two maps of the played method drawn from ``truth``, compared, ``draws`` times.

    Each cell's chance is the truth's (`true_chances`). The settings are those of
    ``estimate_openings(estimator="playout")``.

    Args:
        truth: an opening table of ``board`` (`trapy_rl.analysis.opening_table`).
        board: the board.
        playouts: games from every opening at first (pooled with the mirror cell's).
        refine_fairest, half_width: the refinement (`refine_fairest`; 0: none).
        mirror: pool each cell's counts with its mirror cell's.
        fairest: how many of each map's fairest cells are compared (`compare_maps`).
        draws: how many pairs of maps.
        seed: seeds the draws.

    Raises:
        ValueError: for a truth of another board or a bad setting.
    """
    if len(truth) != board.num_cells or list(truth["name"]) != list(board.names):
        raise ValueError("the truth is not an opening table of this board")
    _check_positive(playouts, "playouts")
    _check_positive(draws, "draws")
    check_refinement(refine_fairest, half_width, name="refine_fairest")
    chance = true_chances(truth)
    rng = np.random.default_rng(seed)

    def play(num_games: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.broadcast_to(np.asarray(num_games, dtype=np.int64), chance.shape).copy()
        return rng.binomial(n, chance), n

    def one_map() -> tuple[pd.DataFrame, int]:
        wins, played = refine_counts(
            play,
            board,
            *play(playouts),
            fairest=refine_fairest,
            half_width=half_width,
            mirror=mirror,
        )
        total = int(played.sum())
        if mirror:
            wins, played = mirror_pool(wins, played, board)
        return played_table(wins, played, board), total

    agreements, totals = [], []
    for _ in range(draws):
        (a, games_a), (b, _) = one_map(), one_map()
        agreements.append(compare_maps(a, b, fairest=fairest))
        totals.append(games_a)
    return Replication(
        spearman=np.array([g.spearman for g in agreements]),
        fairest_shared=np.array([g.fairest_shared for g in agreements], dtype=np.int64),
        opposite=np.array([len(g.disagree) for g in agreements], dtype=np.int64),
        games=np.array(totals, dtype=np.int64),
        fairest=agreements[0].fairest,
    )
