"""Do two opening maps agree? Rank correlation, swap decisions, and where they differ.

Two maps of the same board (two nets' played maps, or a net's value head against play) are
compared cell by cell:

- **Spearman's rho** of v over the K cells (how alike the orderings are);
- **swap decisions** where both maps are sure: a map is sure of a cell when its 95% interval
  lies wholly on one side of 1/2 (a map without intervals is sure everywhere); on the cells
  where both are sure, the share with the same decision (swap or not);
- **the cells they disagree on**: sure in both, opposite decisions; and the cells where only
  one map is sure, or neither;
- **the fairest cells shared**: of each map's ``fairest`` cells nearest v = 1/2 (its ``rank``),
  how many are among the other's (the question a fair-opening rule asks of a map);
- **what sampling alone allows** (`sampling_ceiling`): the rho of two maps drawn from one
  truth with the two maps' game counts, so that a measured rho can be read against it;
- **where unlimited games would take them** (`corrected_pearson`): the maps' Pearson
  correlation corrected for the binomial noise in each (Spearman's correction for
  attenuation), the agreement of the two agents' true chances.

Shapes: K cells.

>>> import numpy as np
>>> from trapy_rl.game import Board
>>> from trapy_rl.analysis.openings import opening_table
>>> board = Board(2)
>>> a = opening_table(np.array([0.1, 0.3, 0.6, 0.8, 0.9]), board)
>>> b = opening_table(np.array([0.2, 0.4, 0.45, 0.7, 0.95]), board)
>>> agreement = compare_maps(a, b)
>>> round(agreement.spearman, 3), agreement.sure_in_both, agreement.same_decision
(1.0, 5, 4)
>>> c = opening_table(np.array([0.5, 0.1, 0.9, 0.45, 0.3]), board)
>>> compare_maps(a, c, fairest=3).fairest_shared  # {c1, b1, a2} and {a1, a2, b2}
1
>>> agreement.disagree
('c1',)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

__all__ = [
    "CorrectedCorrelation",
    "MapAgreement",
    "compare_maps",
    "corrected_pearson",
    "sampling_ceiling",
    "sure_of_decision",
    "true_chances",
]


@dataclass(frozen=True)
class MapAgreement:
    """How far two opening maps agree (`compare_maps`).

    Attributes:
        spearman: Spearman's rank correlation of v over the K cells.
        spearman_p: its two-sided p-value against no correlation.
        mean_abs_difference: mean |v_a - v_b| over the cells.
        sure_in_both: cells whose intervals both lie wholly on one side of 1/2.
        same_decision: of those, the cells with the same swap decision.
        disagree: names of the cells sure in both maps with opposite decisions.
        sure_in_one: names of the cells only one map is sure of.
        fairest: how many of each map's fairest cells (``rank`` 1 to ``fairest``) were compared.
        fairest_shared: how many cells are among the ``fairest`` of both maps.
    """

    spearman: float
    spearman_p: float
    mean_abs_difference: float
    sure_in_both: int
    same_decision: int
    disagree: tuple[str, ...]
    sure_in_one: tuple[str, ...]
    fairest: int
    fairest_shared: int

    @property
    def decision_agreement(self) -> float:
        """The share of ``sure_in_both`` cells with the same decision (NaN if there are none)."""
        return self.same_decision / self.sure_in_both if self.sure_in_both else float("nan")

    def __str__(self) -> str:
        lines = [
            f"Spearman rho {self.spearman:.3f} (p = {self.spearman_p:.1e}); "
            f"mean |difference| {self.mean_abs_difference:.3f}",
            f"swap decisions: {self.same_decision} of the {self.sure_in_both} cells both maps "
            f"are sure of agree ({100 * self.decision_agreement:.1f}%)",
            "opposite decisions: " + (", ".join(self.disagree) or "none"),
            f"sure in one map only: {len(self.sure_in_one)} cells",
            f"fairest cells: {self.fairest_shared} of each map's {self.fairest} in both",
        ]
        return "\n".join(lines)


def sure_of_decision(table: pd.DataFrame) -> np.ndarray:
    """[K] bool: the map's 95% interval lies wholly above or below 1/2 (no interval: True).

    A cell with an interval touching 1/2 is not sure: its swap decision could go either way.
    """
    low, high = table["low"].to_numpy(np.float64), table["high"].to_numpy(np.float64)
    no_interval = np.isnan(low) | np.isnan(high)
    return no_interval | (low > 0.5) | (high < 0.5)


def _check_same_cells(a: pd.DataFrame, b: pd.DataFrame) -> None:
    if len(a) != len(b) or list(a["name"]) != list(b["name"]):
        raise ValueError("the two opening tables are not of the same board's cells")


def _pair_of(k: int, mirror_cells: np.ndarray | None) -> np.ndarray:
    """[K] int: the lower cell of each cell's mirror pair (the cell itself without a mirror),
    the one cell that stands for a pair whose counts are pooled."""
    cells = np.arange(k)
    return cells if mirror_cells is None else np.minimum(cells, mirror_cells)


def compare_maps(a: pd.DataFrame, b: pd.DataFrame, *, fairest: int = 20) -> MapAgreement:
    """Compare two opening tables of one board (`trapy_rl.analysis.opening_table`).

    Args:
        a, b: the two tables.
        fairest: how many of each map's cells nearest v = 1/2 to compare (all K on a board
            with fewer cells).

    Raises:
        ValueError: if the tables are not of the same cells, or ``fairest`` is negative.
    """
    _check_same_cells(a, b)
    if fairest < 0:
        raise ValueError(f"fairest must be >= 0, got {fairest}")
    fairest = min(fairest, len(a))
    fair_a, fair_b = (t["rank"].to_numpy() <= fairest for t in (a, b))
    va, vb = a["v"].to_numpy(np.float64), b["v"].to_numpy(np.float64)
    rho, p = spearmanr(va, vb)
    both = sure_of_decision(a) & sure_of_decision(b)
    one = sure_of_decision(a) ^ sure_of_decision(b)
    same = (va > 0.5) == (vb > 0.5)
    names = np.asarray(a["name"])
    return MapAgreement(
        spearman=float(rho),
        spearman_p=float(p),
        mean_abs_difference=float(np.abs(va - vb).mean()),
        sure_in_both=int(both.sum()),
        same_decision=int((both & same).sum()),
        disagree=tuple(names[both & ~same]),
        sure_in_one=tuple(names[one]),
        fairest=fairest,
        fairest_shared=int((fair_a & fair_b).sum()),
    )


def true_chances(truth: pd.DataFrame) -> np.ndarray:
    """[K] float64: the chances a map is taken to measure, for drawing maps from it: a played
    cell's (wins + 1/2) / (games + 1), so that a cell won or lost in every game keeps some
    spread; the map's v where a cell has no games (a map by the net or search)."""
    v = truth["v"].to_numpy(np.float64)
    games = truth["games"].to_numpy(np.float64)
    return np.where(games > 0, (v * games + 0.5) / (games + 1), v)


def sampling_ceiling(
    truth: pd.DataFrame,
    games_a: np.ndarray,
    games_b: np.ndarray,
    mirror_cells: np.ndarray | None = None,
    *,
    draws: int = 200,
    seed: int = 0,
) -> np.ndarray:
    """Spearman's rho of two maps that differ by sampling alone (a parametric bootstrap).

    Each cell's chance is taken from ``truth`` (`true_chances`); two maps are drawn with
    ``games_a`` and ``games_b`` games a cell (binomial), and their rho computed, ``draws``
    times.

    Args:
        truth: an opening table with played counts (columns ``v`` and ``games``).
        games_a, games_b: [K] int, the games of each map's cells.
        mirror_cells: [K] int, each cell's mirror cell, for maps whose counts are pooled with
            the mirror cell's (`Board.mirror_cells`): a pair is drawn once. None: every cell
            drawn on its own.
        draws: how many pairs of maps.
        seed: seeds the draws.

    Returns:
        [draws] float64, the rho of each pair of drawn maps.
    """
    if (truth["games"].to_numpy() < 1).any():
        raise ValueError("sampling_ceiling needs played counts in every cell of the truth")
    chance = true_chances(truth)
    k = len(chance)
    drawn_of = _pair_of(k, mirror_cells)
    counts = [np.asarray(g, dtype=np.int64) for g in (games_a, games_b)]
    if any(c.shape != (k,) or (c < 1).any() for c in counts):
        raise ValueError(f"games_a and games_b must be [{k}] counts >= 1")
    rng = np.random.default_rng(seed)
    rhos = np.empty(draws)
    for i in range(draws):
        a, b = ((rng.binomial(c, chance) / c)[drawn_of] for c in counts)
        rhos[i] = spearmanr(a, b)[0]
    return rhos


@dataclass(frozen=True)
class CorrectedCorrelation:
    """Two played maps' Pearson correlation, with and without their sampling noise.

    Attributes:
        pearson: the measured Pearson correlation of v over the units (cells, or mirror pairs).
        reliability_a, reliability_b: each map's share of its variance across cells that is
            not binomial noise, 1 - mean(v (1 - v) / (games - 1)) / var(v).
        corrected: pearson / sqrt(reliability_a * reliability_b), the correlation of the two
            agents' true chances (it may exceed 1 by sampling; NaN when a reliability is not
            positive: a map that is all noise says nothing of its agent's chances).
        low, high: its 95% interval, from a bootstrap over the units.
    """

    pearson: float
    reliability_a: float
    reliability_b: float
    corrected: float
    low: float
    high: float

    def __str__(self) -> str:
        return (
            f"Pearson r {self.pearson:.3f}; reliabilities {self.reliability_a:.2f} and "
            f"{self.reliability_b:.2f}; corrected for sampling {self.corrected:.3f} "
            f"[{self.low:.3f}, {self.high:.3f}]"
        )


def _reliability(v: np.ndarray, games: np.ndarray) -> float:
    """1 - the mean unbiased binomial variance of v over its variance across the units (NaN
    for a map whose values are all equal)."""
    spread = v.var()
    return float(1 - (v * (1 - v) / (games - 1)).mean() / spread) if spread > 0 else float("nan")


def _attenuation(
    va: np.ndarray, vb: np.ndarray, ga: np.ndarray, gb: np.ndarray
) -> tuple[float, float, float, float]:
    """(r, reliability_a, reliability_b, corrected r) of two maps' units; r is NaN for a map
    without spread, the corrected r NaN where a map has no spread beyond its noise."""
    ra, rb = _reliability(va, ga), _reliability(vb, gb)
    r = float(np.corrcoef(va, vb)[0, 1]) if va.var() > 0 and vb.var() > 0 else float("nan")
    corrected = r / np.sqrt(ra * rb) if ra > 0 and rb > 0 else float("nan")  # NaN fails too
    return r, ra, rb, float(corrected)


def corrected_pearson(
    a: pd.DataFrame,
    b: pd.DataFrame,
    mirror_cells: np.ndarray | None = None,
    *,
    draws: int = 1000,
    seed: int = 0,
) -> CorrectedCorrelation:
    """The Pearson correlation two played maps would reach with unlimited games.

    A cell's v is its agent's true chance plus binomial noise of variance p (1 - p) / games,
    which lowers the measured correlation by sqrt(reliability_a * reliability_b); dividing by
    that factor estimates the correlation of the true chances. The interval comes from
    resampling the units with replacement (``draws`` times), so it holds both the binomial
    noise and the choice of cells.

    Args:
        a, b: opening tables of one board with played counts (columns ``v`` and ``games``,
            every cell at least 2 games).
        mirror_cells: [K] int, each cell's mirror cell, for maps whose counts are pooled with
            the mirror cell's (`Board.mirror_cells`): a pair counts once. None: every cell does.
        draws: bootstrap draws of the interval.
        seed: seeds the draws.

    Raises:
        ValueError: if the tables are not of the same cells, or a cell has fewer than 2 games.
    """
    _check_same_cells(a, b)
    units = np.unique(_pair_of(len(a), mirror_cells))
    va, vb = (t["v"].to_numpy(np.float64)[units] for t in (a, b))
    ga, gb = (t["games"].to_numpy(np.float64)[units] for t in (a, b))
    if (ga < 2).any() or (gb < 2).any():
        raise ValueError("corrected_pearson needs at least 2 played games in every cell")
    rng = np.random.default_rng(seed)
    boot = np.empty(draws)
    for i in range(draws):
        pick = rng.integers(0, len(units), len(units))
        boot[i] = _attenuation(va[pick], vb[pick], ga[pick], gb[pick])[3]
    finite = boot[np.isfinite(boot)]
    low, high = np.percentile(finite, [2.5, 97.5]) if len(finite) else (np.nan, np.nan)
    return CorrectedCorrelation(*_attenuation(va, vb, ga, gb), low=float(low), high=float(high))
