"""Reports of a tournament: the ratings table and files, the Elo curve of a run's checkpoints,
and their win rates against fixed baselines (table, CSV, plot).

`write_tournament` writes them all into one folder; the pieces are public for notebooks.
Plots are PNG files drawn with matplotlib's Agg backend, so no display is needed.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from trapy_rl.agents.network import checkpoint_file
from trapy_rl.eval.arena import MatchResult
from trapy_rl.eval.cache import flip_result
from trapy_rl.eval.elo import EloRatings, write_ratings_json
from trapy_rl.eval.tournament import TournamentResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "BaselineRow",
    "baseline_rows",
    "baseline_table",
    "plot_curve_panels",
    "plot_elo_curve",
    "plot_ladder",
    "plot_rating_curves",
    "plot_win_rates",
    "write_baseline_csv",
    "write_tournament",
]


@contextlib.contextmanager
def _plot_file(path: Path, width: float = 7.0) -> Iterator[Axes]:
    """Axes of a ``width`` x 4.5-inch figure, saved to ``path`` (PNG, 120 dpi) and closed on
    exit."""
    with _plot_panels(path, 1, width=width) as (axes,):
        yield axes


@contextlib.contextmanager
def _plot_panels(
    path: Path, columns: int, width: float = 7.0, height: float = 4.5
) -> Iterator[list[Axes]]:
    """``columns`` axes side by side, sharing y, in a ``width`` x ``height``-inch figure saved
    to ``path`` (PNG, 120 dpi) and closed on exit."""
    # matplotlib only when drawing (slow to import)
    import matplotlib

    matplotlib.use("Agg", force=False)
    # matplotlib only when drawing (slow to import)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(
        1, columns, figsize=(width, height), layout="constrained", sharey=True, squeeze=False
    )
    try:
        yield list(axes[0])
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def plot_ladder(ratings: EloRatings, path: str | Path, *, title: str | None = None) -> Path:
    """A rating ladder: the agents weakest first, Elo with its interval, and between each
    neighbouring pair that met the stronger one's score; a PNG file.

    Args:
        ratings: the fit (a pool's calibration; held agents are drawn as squares).
        path: the PNG to write.
        title: the plot's title.

    Returns:
        The path written.
    """
    order = np.argsort(ratings.ratings, kind="stable")  # [M] weakest first
    elo = ratings.ratings[order]
    x = np.arange(len(order))
    held = np.array([i in ratings.fixed for i in order], dtype=bool)  # [M]
    below, above = elo - ratings.lower[order], ratings.upper[order] - elo
    path = Path(path)
    with _plot_file(path, width=max(7.0, 0.33 * len(order))) as axes:  # a long ladder: wider
        for mask, marker, label in ((~held, "o", "fitted"), (held, "s", "held")):
            if mask.any():
                axes.errorbar(
                    x[mask],
                    elo[mask],
                    yerr=[below[mask], above[mask]],
                    fmt=marker,
                    capsize=3,
                    label=label,
                )
        axes.plot(x, elo, color="grey", linewidth=0.8, zorder=0)
        for k in range(len(order) - 1):
            weak, strong = order[k], order[k + 1]
            games = ratings.wins[weak, strong] + ratings.wins[strong, weak]
            if games:
                axes.annotate(
                    f"{ratings.wins[strong, weak] / games:.0%}",
                    ((k + 0.5), (elo[k] + elo[k + 1]) / 2),
                    xytext=(0, 6),  # above the line, on its gap
                    textcoords="offset points",
                    ha="center",
                    fontsize=7,
                )
        axes.set_xticks(x, [ratings.names[i] for i in order], rotation=40, ha="right", fontsize=7)
        axes.set_ylabel("Elo (random = 0), 95% intervals")
        axes.set_title(title or "rating ladder: the stronger neighbour's score on each gap")
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize=8)
    return path


def plot_elo_curve(
    ratings: EloRatings,
    points: Sequence[tuple[str, int]],
    path: str | Path,
    *,
    baselines: Sequence[str] = (),
    title: str | None = None,
    x_label: str = "training step (gradient steps)",
) -> Path:
    """Elo against training progress, with the rating intervals as error bars; a PNG file.

    Args:
        ratings: the fit (names = specs).
        points: (spec, x) of each checkpoint agent to plot (x: its step or minutes).
        path: the PNG to write.
        baselines: specs drawn as horizontal lines (random, uct, ...), each with its rating.
        title: the plot's title.
        x_label: what x is.
        y_label: what y is (another measure of the runs, its points' bars of zero length where
            it has no interval).

    Returns:
        The path written.

    Raises:
        ValueError: naming the specs of ``points`` or ``baselines`` that were not rated.
    """
    index = {name: i for i, name in enumerate(ratings.names)}
    unknown = [spec for spec, _ in points if spec not in index] + [
        spec for spec in baselines if spec not in index
    ]
    if unknown:
        raise ValueError(f"not among the rated agents: {unknown}")
    ordered = sorted(points, key=lambda point: point[1])
    steps = np.array([step for _, step in ordered], dtype=np.float64)
    rows = np.array([index[spec] for spec, _ in ordered], dtype=np.intp)
    elo = ratings.ratings[rows]
    below, above = elo - ratings.lower[rows], ratings.upper[rows] - elo

    # matplotlib only when drawing (slow to import)
    import matplotlib

    path = Path(path)
    with _plot_file(path) as axes:
        axes.errorbar(steps, elo, yerr=[below, above], fmt="o-", capsize=3, label="checkpoints")
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        for number, spec in enumerate(baselines):
            i = index[spec]
            colour = colours[(number + 1) % len(colours)]
            axes.axhline(ratings.ratings[i], color=colour, linestyle="--", linewidth=1)
            if ratings.stderr[i] > 0:
                axes.axhspan(ratings.lower[i], ratings.upper[i], color=colour, alpha=0.12)
            axes.annotate(
                f"{spec} ({ratings.ratings[i]:.0f})",
                (0.01, ratings.ratings[i]),
                xycoords=("axes fraction", "data"),
                textcoords="offset points",
                xytext=(0, 3),
                color=colour,
                fontsize=8,
            )
        level = f"{math.erf(ratings.z / math.sqrt(2.0)):.0%}"
        axes.set_xlabel(x_label)
        anchor = ratings.names[ratings.anchor]
        scale = (  # a pool fixes its members' ratings: its scale, not the anchor at 0
            f"the pool's scale, {anchor} = {ratings.ratings[ratings.anchor]:.0f}"
            if ratings.fixed
            else f"{anchor} = 0"
        )
        axes.set_ylabel(f"Elo ({scale}), {level} intervals")
        axes.set_title(title or f"Elo against {x_label.split(' (')[0]}")
        axes.grid(alpha=0.3)
    return path


def plot_rating_curves(
    curves: Mapping[str, Sequence[tuple[float, float, float, float]]],
    path: str | Path,
    *,
    references: Mapping[str, float] | None = None,
    marks: Mapping[str, Sequence[tuple[float, str]]] | None = None,
    title: str = "Elo against training time",
    x_label: str = "CPU-hours of training",
    y_label: str = "Elo on the pool (random = 0), 95% intervals",
    legend: str = "upper left",
) -> Path:
    """Several runs' strength on one scale (a pool's), each a line through its rated points
    with their 95% intervals as error bars; a PNG file.

    Args:
        curves: {run name: [(x, elo, low, high)]}, the points in any order.
        path: the PNG to write.
        references: {label: Elo} drawn as dashed horizontal lines (the pool's members near
            the curves, say).
        marks: {run name: [(x, label)]} drawn as dotted vertical lines in the run's colour
            (where its recipe changed, say).
        title: the plot's title.
        x_label: what x is.
        y_label: what y is (another measure of the runs, its points' bars of zero length where
            it has no interval).
        legend: where the legend goes: a matplotlib ``loc`` inside the axes, or ``"outside"``
            (right of the axes, in a wider figure: many curves, and no free corner).

    Returns:
        The path written.
    """
    path = Path(path)
    outside = legend == "outside"
    with _plot_file(path, width=9.0 if outside else 7.0) as axes:
        _draw_curves(axes, curves, references, marks)
        axes.set_xlabel(x_label)
        axes.set_ylabel(y_label)
        axes.set_title(title)
        if outside:
            axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        else:
            axes.legend(fontsize=8, loc=legend)
    return path


def plot_curve_panels(
    panels: Mapping[str, Mapping[str, Sequence[tuple[float, float, float, float]]]],
    path: str | Path,
    *,
    title: str,
    x_label: str = "CPU-hours of training",
    y_label: str,
) -> Path:
    """Families of curves too many for one plot, a panel each, side by side on one y scale,
    each panel's legend below it (so it covers no data); a PNG file.

    Args:
        panels: {panel title: {curve name: [(x, y, low, high)]}}, as `plot_rating_curves`'s
            ``curves`` (bars of zero length where a point has no interval).
        path: the PNG to write.
        title: the figure's title.
        x_label: what x is (every panel).
        y_label: what y is (the first panel's axis; the others share it).

    Returns:
        The path written.
    """
    path = Path(path)
    with _plot_panels(path, len(panels), width=5.0 * len(panels), height=6.0) as axes:
        for ax, (name, curves) in zip(axes, panels.items(), strict=True):
            _draw_curves(ax, curves)
            ax.set_title(name, fontsize=10)
            ax.set_xlabel(x_label)
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16))
        axes[0].set_ylabel(y_label)
        axes[0].figure.suptitle(title)
    return path


def _draw_curves(
    axes: Axes,
    curves: Mapping[str, Sequence[tuple[float, float, float, float]]],
    references: Mapping[str, float] | None = None,
    marks: Mapping[str, Sequence[tuple[float, str]]] | None = None,
) -> None:
    """`plot_rating_curves`'s lines, marks and reference lines drawn on ``axes``, with a grid
    (and room above the top reference line for its label)."""
    colours = {}
    for name, points in curves.items():
        x, elo, low, high = (np.array(v, dtype=np.float64) for v in zip(*sorted(points)))
        line = axes.errorbar(x, elo, yerr=[elo - low, high - elo], fmt="o-", capsize=3, label=name)
        colours[name] = line.lines[0].get_color()
    for name, points in (marks or {}).items():
        colour = colours.get(name, "grey")
        for x, label in points:
            axes.axvline(x, color=colour, linestyle=":", linewidth=1.2)
            axes.annotate(label, (x, 0.01), xycoords=("data", "axes fraction"),
                          textcoords="offset points", xytext=(2, 0), rotation=90,
                          va="bottom", color=colour, fontsize=7)  # fmt: skip
    for label, elo in (references or {}).items():
        axes.axhline(elo, color="grey", linestyle="--", linewidth=0.8)
        axes.annotate(label, (0.99, elo), xycoords=("axes fraction", "data"),
                      textcoords="offset points", xytext=(0, 2), ha="right",
                      color="grey", fontsize=7)  # fmt: skip
    axes.grid(alpha=0.3)
    if references:
        bottom, top = axes.get_ylim()
        axes.set_ylim(bottom, top + 0.05 * (top - bottom))  # room for the top line's label


@dataclasses.dataclass(frozen=True)
class BaselineRow:
    """One checkpoint's match against one baseline, from the checkpoint's side.

    Attributes:
        agent: the checkpoint agent's spec.
        step: where it stands in training: gradient steps, or minutes where the run
            recorded them (the x of the curve).
        baseline: the baseline's spec.
        match: the match, agent a = the checkpoint agent.
    """

    agent: str
    step: float
    baseline: str
    match: MatchResult


def baseline_rows(
    result: TournamentResult, curve: Sequence[tuple[str, float]], baselines: Sequence[str]
) -> list[BaselineRow]:
    """The matches between the ``curve`` agents and the ``baselines``, from the agents' side.

    Args:
        result: the tournament.
        curve: (spec, x) of each checkpoint agent (its step or minutes).
        baselines: the baselines' specs.

    Returns:
        One row per match played, by step then in the order of ``baselines``; pairs that did
        not play (a gauntlet's other agents) are left out.
    """
    played = {(m.agent_a, m.agent_b): m for m in result.matches}
    rows = []
    for spec, step in sorted(curve, key=lambda point: point[1]):
        for baseline in baselines:
            match = played.get((spec, baseline))
            if match is None and (baseline, spec) in played:
                match = flip_result(played[(baseline, spec)])
            if match is not None:
                rows.append(BaselineRow(spec, step, baseline, match))
    return rows


def _checkpoint_label(spec: str) -> str:
    """A checkpoint agent's file name (the spec itself for other agents)."""
    path = checkpoint_file(spec)
    return spec if path is None else Path(path).name


def baseline_table(rows: Sequence[BaselineRow], *, x_name: str = "step") -> str:
    """A text table: one line per checkpoint, one column per baseline.

    Args:
        rows: from `baseline_rows`.
        x_name: the heading of the rows' x (``step`` or ``minutes``).

    Returns:
        The table, without a final newline; each cell holds the checkpoint's wins / games,
        win rate and 95% Wilson interval, or ``-`` where the pair did not play.
    """
    baselines = list(dict.fromkeys(row.baseline for row in rows))
    agents = list(dict.fromkeys((row.agent, row.step) for row in rows))
    cells = {(row.agent, row.baseline): row.match for row in rows}
    width = max(len("checkpoint"), *(len(_checkpoint_label(a)) for a, _ in agents))
    column = 24
    lines = [
        f"{x_name:>7}  {'checkpoint':<{width}}  "
        + "".join(f"{baseline:>{column}}" for baseline in baselines)
    ]
    for agent, step in agents:
        text = []
        for baseline in baselines:
            match = cells.get((agent, baseline))
            if match is None:
                text.append(f"{'-':>{column}}")
                continue
            low, high = match.interval
            cell = f"{match.wins}/{match.games} {match.win_rate:4.0%} [{low:.0%},{high:.0%}]"
            text.append(f"{cell:>{column}}")
        lines.append(f"{step:>7g}  {_checkpoint_label(agent):<{width}}  " + "".join(text))
    return "\n".join(lines)


def write_baseline_csv(
    rows: Sequence[BaselineRow], path: str | Path, *, x_name: str = "step"
) -> Path:
    """Write one CSV line per (checkpoint, baseline) after a header.

    Columns: step (or ``x_name``), agent, baseline, wins, games, win_rate, low, high (the 95%
    Wilson interval of the win rate), the rates with four decimals.

    Args:
        rows: from `baseline_rows`.
        path: the CSV file (overwritten).
        x_name: the first column's name.

    Returns:
        The path written.
    """
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow([x_name, "agent", "baseline", "wins", "games", "win_rate", "low", "high"])
        for row in rows:
            low, high = row.match.interval
            writer.writerow(
                [
                    f"{row.step:g}",
                    row.agent,
                    row.baseline,
                    row.match.wins,
                    row.match.games,
                    f"{row.match.win_rate:.4f}",
                    f"{low:.4f}",
                    f"{high:.4f}",
                ]
            )
    return path


def plot_win_rates(
    rows: Sequence[BaselineRow],
    path: str | Path,
    *,
    title: str | None = None,
    x_label: str = "training step (gradient steps)",
) -> Path:
    """Win rate against training progress, one line per baseline with its 95% Wilson band; a
    PNG.

    Args:
        rows: from `baseline_rows`.
        path: the PNG to write.
        title: the plot's title.
        x_label: what the rows' x is.

    Returns:
        The path written.
    """
    path = Path(path)
    with _plot_file(path) as axes:
        for baseline in dict.fromkeys(row.baseline for row in rows):
            mine = [row for row in rows if row.baseline == baseline]
            steps = np.array([row.step for row in mine], dtype=np.float64)
            rates = np.array([row.match.win_rate for row in mine])
            bands = np.array([row.match.interval for row in mine])
            (line,) = axes.plot(steps, rates, "o-", label=f"vs {baseline}")
            axes.fill_between(steps, bands[:, 0], bands[:, 1], color=line.get_color(), alpha=0.15)
        axes.axhline(0.5, color="grey", linestyle=":", linewidth=1)
        games = sorted({row.match.games for row in rows})
        each = f"{games[0]}" if len(games) == 1 else f"{games[0]}-{games[-1]}"
        axes.set_xlabel(x_label)
        axes.set_ylabel(f"win rate ({each} games per point, 95% Wilson band)")
        axes.set_ylim(-0.02, 1.02)
        axes.set_title(title or "Win rate against the baselines")
        axes.grid(alpha=0.3)
        axes.legend(loc="lower right")
    return path


def write_tournament(
    result: TournamentResult,
    folder: str | Path,
    *,
    curve: Sequence[tuple[str, float]] = (),
    baselines: Sequence[str] = (),
    x_label: str = "training step (gradient steps)",
) -> dict[str, Path]:
    """Write the table (``ratings.txt``), ``ratings.csv``, ``ratings.json`` (with every match)
    and, when ``curve`` gives (spec, step) points, ``elo_curve.png`` into ``folder``; when the
    curve's agents also played ``baselines``, their win rates too (``winrates.txt``,
    ``winrates.csv``, ``winrate_curve.png``).

    Args:
        result: the tournament.
        folder: where to write (created if missing).
        curve: (spec, x) of each checkpoint agent to plot.
        baselines: specs drawn as lines in the Elo plot, and the columns of the win rates.
        x_label: what the curve's x is (gradient steps unless it says minutes).

    Returns:
        {"table": path, "csv": path, "json": path[, "plot": path][, "winrates": path,
        "winrates_csv": path, "winrate_plot": path]}.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table = result.ratings.table()
    paths = {
        "table": folder / "ratings.txt",
        "csv": result.ratings.write_csv(folder / "ratings.csv"),
        "json": write_ratings_json(
            result.ratings,
            folder / "ratings.json",
            side=result.side,
            seed=result.seed,
            num_games=result.num_games,
            matches=[dataclasses.asdict(match) for match in result.matches],
            curve=[{"agent": spec, _x_key(x_label): x} for spec, x in curve],
        ),
    }
    paths["table"].write_text(table + "\n", encoding="utf-8")
    if curve:
        paths["plot"] = plot_elo_curve(
            result.ratings, curve, folder / "elo_curve.png", baselines=baselines, x_label=x_label
        )
    rows = baseline_rows(result, curve, baselines)
    if rows:
        paths["winrates"] = folder / "winrates.txt"
        x_name = _x_key(x_label)
        table_text = baseline_table(rows, x_name=x_name)
        paths["winrates"].write_text(table_text + "\n", encoding="utf-8")
        paths["winrates_csv"] = write_baseline_csv(rows, folder / "winrates.csv", x_name=x_name)
        paths["winrate_plot"] = plot_win_rates(rows, folder / "winrate_curve.png", x_label=x_label)
    return paths


def _x_key(x_label: str) -> str:
    return "minutes" if "minutes" in x_label else "step"
