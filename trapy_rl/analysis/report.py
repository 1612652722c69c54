"""The published opening map: two agents' played maps, their agreement, and a Markdown report.

`opening_report` plays (or reads from the cache) the map of each of two agents, usually the
same recipe's nets trained with two seeds, values the openings with the first net's value head
as well, and writes into a folder:

    openings.md            the report: how it was computed, the agreement, the original
                           description's claims tested, and a table of every cell
    openings-map.png       the two maps side by side (swap boundary, fairest numbered,
                           cells where the two disagree marked x)
    openings-fairest.png   the fairest openings of the first map with both maps' intervals
    openings-<label>.csv   each table, as `trapy-openings` writes it (and .json; the label
                           with every run of other characters than letters and digits as _)

and, with ``ship``, the same JSON files into a second folder: trapy_rl/analysis/data, the
copies the package ships (`trapy_rl.analysis.published` reads them).

``scripts/openings_report.py`` is its command line; docs/openings.md is its output.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from trapy_rl.agents.base import AgentSpec
from trapy_rl.agents.network import checkpoint_file
from trapy_rl.analysis.agreement import (
    MapAgreement,
    compare_maps,
    corrected_pearson,
    sampling_ceiling,
    sure_of_decision,
)
from trapy_rl.analysis.figures import draw_opening_map, draw_ranking
from trapy_rl.analysis.openings import (
    estimate_openings,
    read_opening_json,
    sittings,
    write_opening_table,
)
from trapy_rl.analysis.published import map_stem
from trapy_rl.analysis.replication import (
    FAIREST_SHARED_BAR,
    SPEARMAN_BAR,
    playout_method,
    replicate_playout_map,
)
from trapy_rl.analysis.summary import OpeningSummary, summarize
from trapy_rl.game.board import Board
from trapy_rl.nn.checkpoint import load_checkpoint

__all__ = ["OpeningReport", "opening_report"]


@dataclass(frozen=True)
class OpeningReport:
    """What `opening_report` computed and where it wrote it.

    Attributes:
        tables: label -> the played opening table of each agent.
        net_table: the first agent's net's value head, per cell (None for agents without one).
        agreement: the two played maps compared.
        net_agreement: the value head against the first played map (None without a net).
        summaries: label -> `summarize` of each played map (the long-edge claim).
        paths: name -> file written.
    """

    tables: dict[str, pd.DataFrame]
    net_table: pd.DataFrame | None
    agreement: MapAgreement
    net_agreement: MapAgreement | None
    summaries: dict[str, OpeningSummary]
    paths: dict[str, Path]


def opening_report(
    out_dir: str | Path,
    *,
    agents: Sequence[str],
    labels: Sequence[str],
    net: str | None = None,
    side: int = 10,
    playouts: int = 32,
    refine_fairest: int = 20,
    half_width: float = 0.05,
    seed: int = 0,
    workers: int = 1,
    extend: str | Path | None = None,
    before: str | Path | None = None,
    notes: str | Path | None = None,
    ship: str | Path | None = None,
    cache_dir: str | Path | None = "default",
    command: str | None = None,
) -> OpeningReport:
    """Play both maps (or read them from the cache), compare them and write the report.

    Args:
        out_dir: the folder written (created).
        agents: two agent specs; each plays both sides of its own map.
        labels: their short names in the report (file names, legends).
        net: a checkpoint (or shipped name) whose value head is reported beside the first map.
        side, playouts, refine_fairest, half_width, seed, workers, cache_dir: as in
            `trapy_rl.analysis.estimate_openings` (estimator ``playout``, mirrored).
        extend: a folder of an earlier report (docs/): each map keeps the games of its
            ``openings-<label>.json`` there and gets ``playouts`` more a cell.
        before: a folder of an earlier report of other agents with the same labels (the
            pair of nets these were trained past): its two maps' agreement goes beside these
            maps' in the report, so that it says whether agreement grew.
        notes: a Markdown file written into the report after the agreement (its own
            ``##`` heading first, its links relative to ``out_dir``): what later experiments
            found about these maps, kept with the command that writes the report so that
            writing it again keeps them.
        ship: a folder each map's JSON is copied into as well, byte for byte (the package's
            trapy_rl/analysis/data for docs/: `trapy_rl.analysis.published` reads it there).
        command: the command line printed in the report (default: this process's).

    Returns:
        The `OpeningReport`.
    """
    if len(agents) != 2 or len(labels) != 2 or len(set(labels)) != 2:
        raise ValueError("opening_report compares two agents with two different labels")
    board = Board(side)
    # The pair before is read first: a wrong folder is reported before hours of games.
    earlier = None
    if before is not None:
        earlier = {label: _earlier_table(Path(before), label, board) for label in labels}
    notes_text = None if notes is None else Path(notes).read_text(encoding="utf-8").strip()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        label: estimate_openings(
            side=side,
            estimator="playout",
            agent=agent,
            playouts=playouts,
            refine_fairest=refine_fairest,
            half_width=half_width,
            seed=seed,
            workers=workers,
            extend=None if extend is None else Path(extend) / f"{map_stem(label)}.json",
            cache_dir=cache_dir,
            progress=True,
        )
        for label, agent in zip(labels, agents)
    }
    net_table = None
    if net is not None:
        net_table = estimate_openings(
            side=side, estimator="net", checkpoint=net, seed=seed, cache_dir=cache_dir
        )
    first, second = (tables[label] for label in labels)
    agreement = compare_maps(first, second)
    net_agreement = compare_maps(net_table, first) if net_table is not None else None
    summaries = {label: summarize(table, board) for label, table in tables.items()}

    paths: dict[str, Path] = {}
    for label, table in tables.items():
        paths[f"csv-{label}"], paths[f"json-{label}"] = write_opening_table(
            table, out / map_stem(label)
        )
    if ship is not None:
        Path(ship).mkdir(parents=True, exist_ok=True)
        for label in labels:
            source = paths[f"json-{label}"]
            paths[f"shipped-{label}"] = Path(ship) / source.name
            shutil.copyfile(source, paths[f"shipped-{label}"])
    paths["map"] = out / "openings-map.png"
    _draw_maps(tables, board, agreement, labels).savefig(paths["map"], dpi=130, bbox_inches="tight")
    paths["fairest"] = out / "openings-fairest.png"
    draw_ranking(
        first,
        other=second,
        labels=tuple(labels),
        top=max(refine_fairest, 1),
        title=f"the fairest first moves of {labels[0]}, with {labels[1]}'s estimate",
    ).savefig(paths["fairest"], dpi=130, bbox_inches="tight")
    paths["report"] = out / "openings.md"
    text = _markdown(
        tables=tables,
        labels=labels,
        agents=agents,
        net=net,
        net_table=net_table,
        agreement=agreement,
        net_agreement=net_agreement,
        summaries=summaries,
        board=board,
        command=command or " ".join(shlex.quote(a) for a in sys.argv),
        earlier=earlier,
        before=before,
        notes=notes_text,
    )
    paths["report"].write_text(text, encoding="utf-8")
    return OpeningReport(tables, net_table, agreement, net_agreement, summaries, paths)


def _earlier_table(folder: Path, label: str, board: Board) -> pd.DataFrame:
    """The map labelled ``label`` of the report in ``folder`` (its JSON, with its settings)."""
    table_board, table = read_opening_json(folder / f"{map_stem(label)}.json")
    if table_board.side != board.side:
        raise ValueError(f"{folder}: its {label} map is of side {table_board.side}")
    return table


def _agreement_row(
    tables, labels, board: Board, what: str, agreement: MapAgreement | None = None
) -> str:
    """One row of the table of two maps' agreement: the nets and each measure of it
    (``agreement``: their `compare_maps`, where it is already computed)."""
    agreement = agreement or compare_maps(*(tables[label] for label in labels))
    nets = ", ".join(
        f"`{AgentSpec.parse(t.attrs['key']['agent']['spec']).args[0]}` "
        f"({t.attrs['key']['agent'].get('sha256', '?')[:12]})"
        for t in (tables[label] for label in labels)
    )
    corrected = corrected_pearson(
        *(tables[label] for label in labels), _mirror_cells(tables[labels[0]], board)
    ).corrected
    return (
        f"| {what} | {nets} | {agreement.spearman:.3f} | {agreement.fairest_shared} of "
        f"{agreement.fairest} | {agreement.same_decision} of {agreement.sure_in_both} | "
        f"{', '.join(agreement.disagree) or 'none'} | {corrected:.2f} |"
    )


def _games_sentence(key: dict) -> str:
    """How a map's games were played: the first games a cell, then each later sitting's."""
    first, *later = sittings(key)
    text = f"{first['playouts']} per cell first"
    for sitting in later:
        text += f", then {sitting['playouts']} more per cell in a later sitting (seeds of its own)"
    return text


def _draw_maps(tables, board: Board, agreement: MapAgreement, labels):
    from matplotlib.figure import Figure

    flagged = [board.names.index(name) for name in agreement.disagree]
    fig = Figure(figsize=(15, 6.2), layout="constrained")
    for ax, label in zip(fig.subplots(1, 2), labels):
        draw_opening_map(
            tables[label],
            board,
            ax=ax,
            fairest=5,
            flagged=flagged,
            title=f"{label}: v from play (line: swap boundary; 1-5 fairest; x: the maps disagree)",
            colorbar_label="v: the stone owner's winning chance (red: swap)",
        )
    return fig


def _training_line(spec: str) -> str:
    """How the net of an agent spec was trained, from its checkpoint (for an agent without a
    net, the spec and "no net")."""
    path = checkpoint_file(spec)
    if path is None:
        return f"`{spec}` (no net)"
    payload = load_checkpoint(path)
    counters, config = payload.get("counters") or {}, payload.get("config") or {}
    clock = payload.get("clock") or {}
    minutes = float(clock.get("seconds", 0.0)) / 60
    cpu = f" ({float(clock['cpu_seconds']) / 3600:.2f} CPU-hours)" if "cpu_seconds" in clock else ""
    return (
        f"`{spec}`: the side-{payload['side']} net of a run with seed {config.get('seed')}, "
        f"{minutes:.0f} minutes of training clock{cpu}, {int(counters.get('iteration', 0)):,} "
        f"iterations, {int(counters.get('games', 0)):,} self-play games"
    )


def _mirror_cells(table: pd.DataFrame, board: Board) -> np.ndarray | None:
    """The board's mirror where the map pooled its counts with the mirror cell's, else None."""
    return board.mirror_cells if table.attrs["key"].get("mirror") else None


def _ceiling_line(tables, labels, board: Board) -> str:
    """What rho sampling alone allows at the maps' game counts (`sampling_ceiling`)."""
    mirror = _mirror_cells(tables[labels[0]], board)
    games = [tables[label]["games"].to_numpy() for label in labels]
    ranges = []
    for label in labels:
        rhos = sampling_ceiling(tables[label], *games, mirror)
        low, high = np.percentile(rhos, [5, 95])
        ranges.append(f"{rhos.mean():.2f} [{low:.2f}, {high:.2f}] with {label}'s map as the truth")
    return (
        "- Sampling alone: two maps drawn from one truth with these game counts correlate at "
        + " and ".join(ranges)
        + " (a parametric bootstrap, 200 draws, 90% ranges). A rho below that is a "
        "disagreement of the nets, not only too few games. " + _bars_sentence(tables, labels, board)
    )


def _bars_sentence(tables, labels, board: Board) -> str:
    """How often two maps of one agent by this method meet the agreement bars
    (`replicate_playout_map` with the first map's settings, its sittings' games added)."""
    method = playout_method(tables[labels[0]].attrs["key"])
    shares = []
    for label in labels:
        replication = replicate_playout_map(tables[label], board, **method, draws=100)
        shares.append(f"{np.mean(replication.meets()):.0%} with {label}'s map as the truth")
    return (
        "Replaying the whole method (refinement included) on one truth, two maps of one agent "
        f"meet all three bars of a converged answer (rho >= {SPEARMAN_BAR}, "
        f"{FAIREST_SHARED_BAR} of the {replication.fairest} fairest cells shared, no opposite "
        "sure decision) in " + " and ".join(shares) + " of 100 pairs "
        "(`scripts/opening_bars.py` says what richer settings reach)."
    )


def _unlimited_line(tables, labels, board: Board) -> str:
    """Where unlimited games would take the two maps (`corrected_pearson`)."""
    mirror = _mirror_cells(tables[labels[0]], board)
    c = corrected_pearson(*(tables[label] for label in labels), mirror)
    if not np.isfinite(c.corrected):
        return (
            f"- Unlimited games: the maps' Pearson r is {c.pearson:.2f}, and a map's spread "
            "is no larger than its binomial noise, so where more games would take it is unknown."
        )
    # Spearman's rho of two jointly normal variables whose Pearson r is c.
    rho = 6 / np.pi * np.arcsin(np.clip(c.corrected, -1, 1) / 2)
    return (
        f"- Unlimited games: the maps' Pearson r is {c.pearson:.2f}; corrected for each "
        f"map's binomial noise (reliabilities {c.reliability_a:.2f} and {c.reliability_b:.2f}) "
        f"it is {c.corrected:.2f} [{c.low:.2f}, {c.high:.2f}] (95%, a bootstrap over the "
        f"cells), the agreement of the two agents' own chances, which more games cannot "
        f"raise; for normally distributed chances that r means Spearman's rho {rho:.2f}."
    )


def _temperature_sentence(agents: Sequence[str]) -> str:
    """What ``temperature_moves`` in the agents' specs means for the map ('' without it)."""
    moves = sorted({int(AgentSpec.parse(a).options.get("temperature_moves", 0)) for a in agents})
    if moves == [0]:
        return ""
    k = " and ".join(str(m) for m in moves)
    return (
        f" `temperature_moves={k}` draws the first {k} moves of a game, counted from the "
        "empty board (the stone and the swap are the first two), in proportion to the visit "
        "counts, as self-play does: v(c) is the stone owner's chance in games played the way "
        "the net's own self-play plays them, the outcome its value head learns to predict."
    )


def _interval(row) -> str:
    return f"[{row.low:.2f}, {row.high:.2f}]" if np.isfinite(row.low) else "-"


def _decision(table: pd.DataFrame) -> np.ndarray:
    """[K] str: 'swap' / 'keep' where the interval is clear of 1/2, else 'swap?' / 'keep?'."""
    sure = sure_of_decision(table)
    word = np.where(table["swap"].to_numpy(), "swap", "keep")
    return np.where(sure, word, np.char.add(word.astype(str), "?"))


def _markdown(
    *,
    tables,
    labels,
    agents,
    net,
    net_table,
    agreement,
    net_agreement,
    summaries,
    board,
    command,
    earlier=None,
    before=None,
    notes=None,
) -> str:
    first = tables[labels[0]]
    key = first.attrs["key"]
    fair = first.sort_values("rank").head(max(key["refine_fairest"], 1))
    widths = (fair["high"] - fair["low"]) / 2
    # The tables' games are pooled with the mirror cell's: count each pair once.
    one_of_each = np.arange(board.num_cells) <= board.mirror_cells
    games = {label: int(t["games"][one_of_each].sum()) for label, t in tables.items()}
    lines = [
        f"# Trap Y openings: which first moves are fair (side {board.side})",
        "",
        "v(c) is the chance that the owner of a lone first stone on c wins when the opponent",
        "moves next, the swap decided. Yellow should swap exactly when v(c) > 1/2, and blue's",
        "chance after opening c is min(v, 1 - v): the fairest first moves have v nearest 1/2.",
        "",
        "![the two maps](openings-map.png)",
        "",
        "![the fairest openings](openings-fairest.png)",
        "",
        "## How it was computed",
        "",
        f"- **From play.** For every first move c, games from the position after `c, swap` "
        f"(a lone yellow stone, blue to move), each agent playing both sides of its own map: "
        f"{', '.join(f'`{a}` ({label})' for a, label in zip(agents, labels))}. "
        "`noise=true` searches with self-play's root noise (Dirichlet noise at the root), so "
        "games from one position differ; ties are broken at random."
        + _temperature_sentence(agents),
        f"- **Games.** {_games_sentence(key)}; the counts of c and its mirror cell "
        "are pooled (the rules are symmetric under the mirror). Then more games from the "
        f"openings nearest 1/2 until the {key['refine_fairest']} nearest all have 95% Wilson "
        f"intervals no wider than +-{key['half_width']}. In all: "
        + ", ".join(f"{games[label]:,} games ({label})" for label in labels)
        + ".",
        f"- **The {len(fair)} fairest cells of {labels[0]}**: interval half-widths "
        f"{widths.min():.3f} to {widths.max():.3f}.",
    ]
    if net_table is not None:
        lines.append(
            f"- **The value head** of `{net}` on the same positions, one call, no search: "
            f"the column 'head' below."
        )
    for agent, label in zip(agents, labels):
        lines.append(f"- **{label}**: {_training_line(agent)}")
    lines += [
        "",
        "Reproduce (hours on a CPU; the tables are cached, so a second run only redraws;"
        " `--workers N` plays N batches of games at once with the same result, and a map that"
        " was stopped resumes from its journal in the cache when the command runs again):",
        "",
        "```",
        command,
        "```",
        "",
        *(
            [
                f"The maps were played in {len(sittings(key))} sittings; this command added the "
                "last one's games to the tables of the report in the folder its `--extend` "
                "names, each earlier sitting's command with its own `--playouts` before it.",
                "",
            ]
            if "extends" in key
            else []
        ),
        "## Do two nets agree?",
        "",
        f"{labels[0]} and {labels[1]} are nets of two independent training runs (above).",
        "",
        f"- Spearman's rho of the two maps over the {board.num_cells} cells: "
        f"**{agreement.spearman:.3f}** (p = {agreement.spearman_p:.1e}); mean |difference| "
        f"{agreement.mean_abs_difference:.3f}.",
        f"- Swap decisions, on the {agreement.sure_in_both} cells where both intervals are "
        f"clear of 1/2: **{agreement.same_decision} agree "
        f"({100 * agreement.decision_agreement:.1f}%)**.",
        "- Opposite sure decisions (marked x on the maps): "
        + (", ".join(agreement.disagree) or "none")
        + ".",
        f"- Sure in one map only: {len(agreement.sure_in_one)} cells; the table marks an "
        "unsure decision with '?'.",
        f"- The fairest cells: **{agreement.fairest_shared} of each map's "
        f"{agreement.fairest}** nearest 1/2 are among the other's.",
        _ceiling_line(tables, labels, board),
        _unlimited_line(tables, labels, board),
    ]
    if earlier is not None:
        lines += [
            "",
            f"**Against the pair before** (the maps in `{before}`): does agreement grow with "
            "the nets' strength? Nets are named as each map recorded them when it was played; "
            "a shipped name may since mean another net, the SHA-256 says which file it was.",
            "",
            "| maps | nets (sha256) | Spearman's rho | fairest cells shared | swap decisions "
            "agreeing | opposite sure decisions | r corrected for sampling |",
            "|---|---|---|---|---|---|---|",
            _agreement_row(earlier, labels, board, "before"),
            _agreement_row(tables, labels, board, "these", agreement),
        ]
    if net_agreement is not None:
        error = np.abs(net_table["v"].to_numpy() - first["v"].to_numpy())
        lines += [
            "",
            f"**The value head against play ({labels[0]}).** Mean |error| {error.mean():.3f}, "
            f"largest {error.max():.3f}; Spearman's rho {net_agreement.spearman:.3f}; it says "
            f"swap for {100 * net_table['swap'].mean():.0f}% of first moves, play says "
            f"{100 * first['swap'].mean():.0f}%. The head's numbers are not a substitute "
            "for play.",
        ]
    if notes:
        lines += ["", notes]
    lines += ["", "## The original description's claims", ""]
    for label in labels:
        s = summaries[label]
        verdict = "supports" if s.p_value < 0.05 else "does not support"
        lines.append(
            f"- **{label}: the middle of the long edge is strongest.** Near {s.middle} "
            f"({len(s.near_cells)} cells within distance {s.radius}, where red meets "
            f"turquoise) mean v is {s.near_mean:.3f} against {s.elsewhere_mean:.3f} "
            f"elsewhere; {s.strongest_near} of the {len(s.near_cells)} strongest openings "
            f"lie there; one-sided Mann-Whitney p = {s.p_value:.2g}: it {verdict} the claim. "
            f"The strongest first move is {s.strongest[0]} (v = {s.strongest[1]:.3f})."
        )
    for label in labels:
        table = tables[label]
        even = table[~sure_of_decision(table)]  # intervals containing 1/2
        lines.append(
            f"- **{label}: blue can open where the chances are about even.** "
            f"{len(even)} first moves have 95% intervals that contain 1/2"
            + (f": {', '.join(even.sort_values('rank')['name'])}." if len(even) else ".")
            + f" Yellow should swap {100 * table['swap'].mean():.0f}% of first moves."
        )
    lines += [
        "",
        "## Every first move",
        "",
        f"Ordered by fairness in {labels[0]} (rank 1 = v nearest 1/2). 'games' are pooled "
        "with the mirror cell's; a decision with '?' has an interval touching 1/2.",
        "",
    ]
    head = "| rank | cell | " + " | ".join(
        f"v {label} | 95% interval | games | decision" for label in labels
    )
    head += " | head |" if net_table is not None else " |"
    lines.append(head)
    lines.append("|" + "---|" * (head.count("|") - 1))
    decisions = {label: _decision(t) for label, t in tables.items()}
    for cell in first.sort_values("rank").index:
        cells = [f"{first.at[cell, 'rank']}", first.at[cell, "name"]]
        for label in labels:
            row = tables[label].loc[cell]
            cells += [f"{row.v:.3f}", _interval(row), f"{int(row.games)}", decisions[label][cell]]
        if net_table is not None:
            cells.append(f"{net_table.at[cell, 'v']:.3f}")
        if first.at[cell, "name"] in agreement.disagree:
            cells[1] += " (x)"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
