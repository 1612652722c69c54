"""Pictures of an opening table: the map of v on the board, and the ranked list.

Shapes: K cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from trapy_rl.game.board import Board
from trapy_rl.game.draw import draw_board

__all__ = ["draw_opening_map", "draw_ranking", "ranking_text"]


def draw_opening_map(
    table: pd.DataFrame,
    board: Board,
    *,
    ax: Any = None,
    fairest: int = 5,
    show_values: bool | None = None,
    title: str | None = None,
    figwidth: float = 7.0,
    flagged: Iterable[int] = (),
    colorbar_label: str = "v: the stone owner's winning chance (red: yellow swaps)",
):
    """v on the board: a diverging map centred on 1/2, the swap boundary (v = 1/2) outlined,
    the ``fairest`` fairest openings ringed and numbered (1 = fairest).

    Args:
        table: an `opening_table` (K rows in cell order).
        ax: draw into these axes (default: a new figure ``figwidth`` inches wide).
        show_values: write v in every cell (default: on boards of side 6 or less).
        title: the title (default: says what the colours mean).
        flagged: cells ringed and marked "x" (such as those where two maps disagree).
        colorbar_label: the colour bar's label.

    Returns:
        The matplotlib Figure.
    """
    v = _values(table, board)
    order = np.argsort(table["rank"].to_numpy(), kind="stable")[:fairest]
    if show_values is None:
        show_values = board.side <= 6
    span = max(float(np.abs(v - 0.5).max()), 0.01)  # a colour scale symmetric about 1/2
    marks = {int(c): "x" for c in flagged}
    marks.update({int(c): f"{i + 1}{marks.get(int(c), '')}" for i, c in enumerate(order)})
    return draw_board(
        np.zeros(board.num_cells, dtype=np.int8),
        board,
        ax=ax,
        values=v,
        center=0.5,
        vmin=0.5 - span,
        vmax=0.5 + span,
        contour_at=0.5,
        colorbar_label=colorbar_label,
        value_format="{:.2f}" if show_values else None,
        marks=marks,
        title=title or "first-move values (black line: swap boundary; ringed: fairest)",
        figwidth=figwidth,
    )


def draw_ranking(
    table: pd.DataFrame,
    *,
    top: int = 20,
    ax: Any = None,
    title: str | None = None,
    other: pd.DataFrame | None = None,
    labels: tuple[str, str] = ("", ""),
):
    """A bar chart of the ``top`` fairest openings: v with its interval, 1/2 marked.

    With ``other`` (a second table of the same board, e.g. another net's map), its v and
    interval for the same cells are drawn beside each bar as a hollow diamond, and
    ``labels`` name the two in a legend.

    Returns:
        The matplotlib Figure.
    """
    # matplotlib only when drawing (slow to import)
    from matplotlib.figure import Figure

    ranked = table.sort_values("rank").head(top)
    if ax is None:
        fig = Figure(figsize=(7, 0.25 * len(ranked) + 1.2))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    y = np.arange(len(ranked))[::-1]
    v = ranked["v"].to_numpy()
    colours = np.where(v > 0.5, "#c0392b", "#2e6fb7")
    ax.barh(y, v - 0.5, left=0.5, color=colours, height=0.7)
    low, high = ranked["low"].to_numpy(), ranked["high"].to_numpy()
    has = np.isfinite(low) & np.isfinite(high)
    if has.any():
        ax.errorbar(
            v[has],
            y[has],
            xerr=[v[has] - low[has], high[has] - v[has]],
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=2,
        )
    if other is not None:
        cells = ranked["cell"].to_numpy()
        v2 = other["v"].to_numpy(np.float64)[cells]
        low2, high2 = (other[c].to_numpy(np.float64)[cells] for c in ("low", "high"))
        has2 = np.isfinite(low2) & np.isfinite(high2)
        ax.errorbar(
            v2,
            y - 0.3,
            xerr=np.where(has2, [v2 - low2, high2 - v2], 0.0),
            fmt="D",
            mfc="white",
            mec="#333333",
            ms=3.5,
            ecolor="#777777",
            elinewidth=0.8,
            capsize=1.5,
            label=labels[1] or "other",
        )
        low, high = np.r_[low, low2], np.r_[high, high2]
        has = np.r_[has, has2]
        v = np.r_[v, v2]
        if labels[0]:
            ax.plot([], [], "s", color="#888888", label=f"{labels[0]} (bars)")
        # Above the axes, not over them: the hollow markers can fall anywhere in the plot.
        ax.legend(
            loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize="small", frameon=False
        )
    ax.axvline(0.5, color="black", linewidth=0.8)
    ax.set_yticks(y, [f"{rank}. {name}" for rank, name in zip(ranked["rank"], ranked["name"])])
    span = max(0.02, float(np.nanmax(np.abs(np.r_[v, low[has], high[has]] - 0.5))) * 1.15)
    ax.set_xlim(0.5 - span, 0.5 + span)
    ax.set_xlabel("v (red: yellow should swap; bars with 95% intervals where there are some)")
    ax.set_title(
        title or f"the {len(ranked)} fairest first moves", pad=22 if other is not None else None
    )
    fig.tight_layout()
    return fig


def ranking_text(table: pd.DataFrame, *, top: int = 20) -> str:
    """The ``top`` fairest openings as a plain-text table."""
    ranked = table.sort_values("rank").head(top)
    lines = [f"{'rank':>4}  {'cell':<5} {'v':>6}  {'95% interval':<16} {'swap':<5} blue's chance"]
    for row in ranked.itertuples():
        interval = f"[{row.low:.3f}, {row.high:.3f}]" if np.isfinite(row.low) else "-".center(16)
        lines.append(
            f"{row.rank:>4}  {row.name:<5} {row.v:6.3f}  {interval:<16} "
            f"{'yes' if row.swap else 'no':<5} {row.blue_chance:.3f}"
        )
    return "\n".join(lines)


def _values(table: pd.DataFrame, board: Board) -> np.ndarray:
    if len(table) != board.num_cells or "v" not in table:
        raise ValueError(
            f"table must be an opening table with {board.num_cells} rows for the side-"
            f"{board.side} board, got {len(table)} rows"
        )
    return table["v"].to_numpy(dtype=np.float64)
