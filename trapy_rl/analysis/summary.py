"""What an opening table says: the fairest and strongest first moves, the swap share, and a
test of the original description's claim about the middle of the long edge.

The description of Trap Y says the area "close to the center and both the red and turquoise
regions" is the main focus of the game, so a first move there should be swapped. The red
(bottom-right) and turquoise (bottom-left) regions meet at the middle cell of the bottom row
(``j1`` on side 10). We call a cell *near the middle of the long edge* when its hex distance to
that cell is at most ``radius`` (default: 2 on side 10, side // 5 in general, at least 1): on
side 10 these are the 12 cells h1..l1, h2..k2, h3..j3. The claim predicts larger v there;
`summarize` compares v near and elsewhere with a one-sided Mann-Whitney U test.

Shapes: K cells.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from trapy_rl.game.board import Board

__all__ = ["OpeningSummary", "hex_distance", "near_long_edge_middle", "summarize"]


def hex_distance(board: Board, cell: int) -> np.ndarray:
    """[K] int: the hex (axial) distance of every cell to ``cell``."""
    q, r = board.coords[:, 0].astype(int), board.coords[:, 1].astype(int)
    dq, dr = q - q[cell], r - r[cell]
    return (np.abs(dq) + np.abs(dr) + np.abs(dq + dr)) // 2


def near_long_edge_middle(board: Board, *, radius: int | None = None) -> np.ndarray:
    """[K] bool: cells within ``radius`` of the middle of the bottom row (where red meets
    turquoise); ``radius`` defaults to max(1, side // 5), 2 on side 10.

    >>> board = Board(10)
    >>> [board.names[c] for c in np.flatnonzero(near_long_edge_middle(board))]
    ['h1', 'i1', 'j1', 'k1', 'l1', 'h2', 'i2', 'j2', 'k2', 'h3', 'i3', 'j3']
    """
    radius = _radius(board, radius)
    middle = board.cell_index(0, 0)
    return hex_distance(board, middle) <= radius


def _radius(board: Board, radius: int | None) -> int:
    radius = max(1, board.side // 5) if radius is None else radius
    if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 0:
        raise ValueError(f"radius must be an integer >= 0, got {radius!r}")
    return int(radius)


@dataclasses.dataclass(frozen=True)
class OpeningSummary:
    """The short account of an opening table.

    Attributes:
        side: the board's side.
        fairest: [(name, v)] the openings with v closest to 1/2, fairest first.
        strongest: (name, v), the opening with the largest v (yellow's best swap).
        weakest: (name, v), the opening with the smallest v.
        swap_share: the share of first moves yellow should swap (v > 1/2).
        middle, radius: the middle cell of the bottom row and the distance that counts as near.
        near_cells: the names of the cells near the middle of the long edge.
        near_mean, elsewhere_mean: mean v near there and on the other cells.
        strongest_near: how many of the ``len(near_cells)`` strongest openings lie near there.
        mann_whitney_u, p_value: one-sided test that v is larger near there (NaN if undefined).
    """

    side: int
    fairest: list[tuple[str, float]]
    strongest: tuple[str, float]
    weakest: tuple[str, float]
    swap_share: float
    middle: str
    radius: int
    near_cells: list[str]
    near_mean: float
    elsewhere_mean: float
    strongest_near: int
    mann_whitney_u: float
    p_value: float

    def __str__(self) -> str:
        fair = ", ".join(f"{name} ({v:.3f})" for name, v in self.fairest)
        n = len(self.near_cells)
        return "\n".join(
            [
                f"Opening values on side {self.side} (v = the stone owner's winning chance)",
                f"  fairest openings (v closest to 0.5): {fair}",
                f"  strongest opening: {self.strongest[0]} (v = {self.strongest[1]:.3f}); "
                f"weakest: {self.weakest[0]} (v = {self.weakest[1]:.3f})",
                f"  yellow should swap {self.swap_share:.1%} of the first moves (v > 0.5)",
                f"  near the middle of the long edge ({n} cells within distance {self.radius} "
                f"of {self.middle}, where red meets turquoise): "
                f"mean v {self.near_mean:.3f} against {self.elsewhere_mean:.3f} elsewhere; "
                f"{self.strongest_near} of the {n} strongest openings lie there",
                f"  Mann-Whitney U = {self.mann_whitney_u:.1f}, one-sided p = {self.p_value:.3g} "
                f"({'supports' if self.p_value < 0.05 else 'does not support'} the claim at 5%)",
            ]
        )


def summarize(
    table: pd.DataFrame, board: Board, *, fairest: int = 5, radius: int | None = None
) -> OpeningSummary:
    """Summarize an `opening_table` (K rows in cell order).

    Args:
        fairest: how many of the fairest openings to list.
        radius: see `near_long_edge_middle`.
    """
    if len(table) != board.num_cells or "v" not in table or "rank" not in table:
        raise ValueError(
            f"table must be an opening table with {board.num_cells} rows for the side-"
            f"{board.side} board (columns v and rank), got {len(table)} rows"
        )
    v = table["v"].to_numpy(dtype=np.float64)
    names = list(board.names)
    near = near_long_edge_middle(board, radius=radius)
    order = np.argsort(table["rank"].to_numpy(), kind="stable")
    strongest, weakest = int(np.argmax(v)), int(np.argmin(v))
    strongest_cells = np.argsort(-v, kind="stable")[: int(near.sum())]
    if near.any() and (~near).any() and np.ptp(v) > 0:
        from scipy.stats import mannwhitneyu  # here: 0.6 s an import, for one figure

        test = mannwhitneyu(v[near], v[~near], alternative="greater")
        u, p = float(test.statistic), float(test.pvalue)
    else:
        u = p = float("nan")
    return OpeningSummary(
        side=board.side,
        fairest=[(names[c], float(v[c])) for c in order[:fairest]],
        strongest=(names[strongest], float(v[strongest])),
        weakest=(names[weakest], float(v[weakest])),
        swap_share=float((v > 0.5).mean()),
        middle=board.names[board.cell_index(0, 0)],
        radius=_radius(board, radius),
        near_cells=[names[c] for c in np.flatnonzero(near)],
        near_mean=float(v[near].mean()) if near.any() else float("nan"),
        elsewhere_mean=float(v[~near].mean()) if (~near).any() else float("nan"),
        strongest_near=int(near[strongest_cells].sum()),
        mann_whitney_u=u,
        p_value=p,
    )
