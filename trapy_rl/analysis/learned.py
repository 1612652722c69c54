"""What nets learned of the opening question: their maps against the exact values, and against
each other's.

Two measurements, both of opening maps (`trapy_rl.analysis.openings`):

- **against the truth** (`exact_swap_agreement`), on a side whose first moves are solved
  (`trapy_rl.solve.openings`): a map's swap decisions (v > 1/2) against v*, cell by cell;
- **across seeds** (`seed_agreement`), on any side: the maps of two or more nets (one a seed
  of a recipe) compared pair by pair, and, from four nets on, every split of them into two
  halves, each half's map the mean of its nets' maps (the answer that depends on no one seed).

`maps_by_search` makes the maps both use: each net's search on the position after ``c, swap``
for every first move c (``estimator=search``, cached), a minute or less a net on side 10.

Where seeds decide a cell oppositely, `arbitrate` asks play who is right: the nets' games
against each other from that cell's swapped opening, each net on each side. A net whose map
sits on the other side of 1/2 from the games has a blind spot its own search does not see.

The agent-level scores (won positions kept, value signs, an agent's own swap decisions) are
`trapy_rl.eval.truth`'s.

>>> import numpy as np
>>> v = np.array([[0.1, 0.3, 0.6, 0.8, 0.9], [0.2, 0.4, 0.45, 0.7, 0.95],
...               [0.1, 0.35, 0.7, 0.6, 0.9]])
>>> result = seed_agreement(v, Board(2))
>>> [row.label for row in result.rows], round(result.min_pair, 3)
(['A against B', 'A against C', 'B against C'], 0.9)
"""

from __future__ import annotations

import itertools
import os
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from trapy_rl.agents.kinds import parse_agent
from trapy_rl.analysis.agreement import MapAgreement, compare_maps
from trapy_rl.analysis.estimators import mirror_pool, playout_counts
from trapy_rl.analysis.openings import estimate_openings, opening_table
from trapy_rl.game.board import Board
from trapy_rl.mcts.settings import SearchSettings

__all__ = [
    "LABELS",
    "MAP_SIMULATIONS",
    "SeedAgreement",
    "arbitrate",
    "exact_swap_agreement",
    "maps_by_search",
    "seed_agreement",
]

LABELS = string.ascii_uppercase  # the nets' names in tables: A, B, C, ...
MAP_SIMULATIONS = 800  # a first move, in the maps by search seeds are compared with


def maps_by_search(
    checkpoints: Sequence[str | os.PathLike],
    *,
    side: int,
    search: SearchSettings | None = None,
    cache_dir: str | os.PathLike | None = "default",
    progress: bool = False,
) -> np.ndarray:
    """[n, K] float64: each checkpoint's map by search (v of every first move), mirror-averaged.

    ``search`` without noise, `MAP_SIMULATIONS` a first move by default (the published maps
    by search).
    """
    search = search or SearchSettings(num_simulations=MAP_SIMULATIONS)
    v = [
        estimate_openings(
            side=side, estimator="search", checkpoint=checkpoint, search=search,
            cache_dir=cache_dir, progress=progress,
        )["v"].to_numpy(np.float64)
        for checkpoint in checkpoints
    ]  # fmt: skip
    return np.stack(v)


def arbitrate(
    agents: Sequence[str],
    board: Board,
    cells: Sequence[int],
    *,
    games: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The stone owner's wins where maps disagree, played out between the agents.

    Every ordered pair of two different agents plays ``games`` games from the swapped opening
    of each of ``cells`` (the first owns the stone, the second moves), so each agent plays both
    sides against each other one; a cell's counts are pooled with its mirror's.

    Args:
        agents: two or more agent specs (``mcts:NET:200``: the nets whose maps disagree).
        board: the board.
        cells: the first moves to play out.
        games: games a cell for each ordered pair.
        seed: seeds the agents.

    Returns:
        (wins [K] int64, games [K] int64): the owner's wins, 0 games at the cells not asked
        (nor mirrors of them).
    """
    if len(agents) < 2:
        raise ValueError(f"arbitrate needs two agents or more, got {len(agents)}")
    counts = np.zeros(board.num_cells, dtype=np.int64)
    counts[list(cells)] = games
    wins = np.zeros(board.num_cells, dtype=np.int64)
    played = np.zeros(board.num_cells, dtype=np.int64)
    pairs = list(itertools.permutations(agents, 2))
    seeds = np.random.SeedSequence(seed).generate_state(2 * len(pairs))
    for (a, b), owner_seed, mover_seed in zip(pairs, seeds[0::2], seeds[1::2], strict=True):
        owner = parse_agent(a, board=board, seed=int(owner_seed))
        mover = parse_agent(b, board=board, seed=int(mover_seed))
        w, g = playout_counts(owner, mover, board, num_games=counts)
        wins, played = wins + w, played + g
    return mirror_pool(wins, played, board)


@dataclass(frozen=True)
class AgreementRow:
    """Two groups of nets (indices into the maps), and how far their mean maps agree."""

    first: tuple[int, ...]
    second: tuple[int, ...]
    agreement: MapAgreement

    @property
    def label(self) -> str:
        return " against ".join("+".join(LABELS[i] for i in g) for g in (self.first, self.second))


@dataclass(frozen=True)
class SeedAgreement:
    """Every pair of n maps compared, and from four maps on every split into two halves."""

    rows: tuple[AgreementRow, ...]

    @property
    def pairs(self) -> tuple[AgreementRow, ...]:
        return tuple(row for row in self.rows if len(row.first) == 1 == len(row.second))

    @property
    def halves(self) -> tuple[AgreementRow, ...]:
        return tuple(row for row in self.rows if len(row.first) > 1)

    @property
    def min_pair(self) -> float:
        """The lowest Spearman's rho of two single maps: the bar seeds must clear together."""
        return min(row.agreement.spearman for row in self.pairs)

    @property
    def mean_pair(self) -> float:
        return float(np.mean([row.agreement.spearman for row in self.pairs]))

    @property
    def opposite(self) -> tuple[str, ...]:
        """Cells some pair of single maps decides oppositely (sorted, each once)."""
        return tuple(sorted({c for row in self.pairs for c in row.agreement.disagree}))

    def table(self) -> str:
        """A Markdown table, one row a comparison."""
        lines = [
            "| maps | rho | 20 fairest shared | opposite decisions |",
            "| --- | ---: | ---: | --- |",
        ]
        for row in self.rows:
            a = row.agreement
            opposite = ", ".join(a.disagree) or "none"
            lines.append(f"| {row.label} | {a.spearman:.3f} | {a.fairest_shared} | {opposite} |")
        return "\n".join(lines)


def seed_agreement(v: np.ndarray, board: Board) -> SeedAgreement:
    """Compare n >= 2 maps: every pair, then (from n = 4) every split into two halves, each
    split once (map A stays in the first half); a half's map is the mean of its maps.

    Args:
        v: [n, K] stone values, one map a row.
        board: their board.

    Raises:
        ValueError: for fewer than two maps, more than `LABELS` has names for, or maps not
            of ``board``'s K cells.
    """
    v = np.asarray(v, dtype=np.float64)
    n = len(v)
    if v.ndim != 2 or v.shape[1] != board.num_cells:
        raise ValueError(f"maps must have shape (n, {board.num_cells}), got {v.shape}")
    if not 2 <= n <= len(LABELS):
        raise ValueError(f"seed agreement takes 2 to {len(LABELS)} maps, got {n}")
    groups = [((i,), (j,)) for i, j in itertools.combinations(range(n), 2)]
    if n >= 4:
        for rest in itertools.combinations(range(1, n), n // 2 - 1):
            first = (0, *rest)
            groups.append((first, tuple(i for i in range(n) if i not in first)))
    rows = []
    for a, b in groups:
        maps = (opening_table(v[list(g)].mean(axis=0), board) for g in (a, b))
        rows.append(AgreementRow(a, b, compare_maps(*maps)))
    return SeedAgreement(tuple(rows))


def exact_swap_agreement(map_table: pd.DataFrame, v_star: np.ndarray, board: Board) -> dict:
    """A map's swap decisions (v > 1/2) against v* on the solved cells (v* not NaN).

    Returns:
        ``agree`` and ``solved`` (cells), ``share``, ``sure`` (cells whose interval lies clear
        of 1/2) and ``sure_agree``, and ``wrong``: (name, v, low, high) of each wrong cell.
    """
    solved = ~np.isnan(v_star)
    v = map_table["v"].to_numpy(dtype=np.float64)
    low = map_table["low"].to_numpy(dtype=np.float64)
    high = map_table["high"].to_numpy(dtype=np.float64)
    right = (v > 0.5) == (v_star == 1.0)
    wrong = np.flatnonzero(solved & ~right)
    sure = solved & ((low > 0.5) | (high < 0.5))
    return {
        "agree": int((solved & right).sum()),
        "solved": int(solved.sum()),
        "share": float((solved & right).sum() / solved.sum()),
        "sure": int(sure.sum()),
        "sure_agree": int((sure & right).sum()),
        "wrong": [
            (
                board.names[c],
                round(float(v[c]), 3),
                round(float(low[c]), 2),
                round(float(high[c]), 2),
            )
            for c in wrong
        ],
    }
