"""``trapy-openings``: the value of every first move, as a CSV, two pictures and a summary.

    trapy-openings                                      # side 10, rollout MCTS (no net needed)
    trapy-openings side=5 estimator=rollout playouts=5000
    trapy-openings checkpoint=outputs/2026-01-01/12-00-00 estimator=net
    trapy-openings estimator=playout agent=uct:100 playouts=50
    trapy-openings estimator=playout "agent='mcts:pretrained:64,noise=true,temperature_moves=12'" \
        playouts=128                                    # one net's map of docs/openings.md
    trapy-openings out_dir=/tmp/openings                # anywhere; default: Hydra's run folder
    trapy-openings estimator=playout ... workers=4      # games on 4 processes; Ctrl-C, then
                                                        # the same command resumes
    trapy-openings estimator=playout ... playouts=64 extend=docs/openings-seed_0.json
                                                        # 64 more games a cell for that map
    trapy-openings side=5 compare=[RUN_A,RUN_B,RUN_C] search.num_simulations=800
                                                        # do seeds agree? their maps by search,
                                                        # every pair (and on sides 4-5, v*)

The configuration is ``configs/openings.yaml``, checked against `OpeningsConfig` (registered
here as ``openings_schema``), so a typo in an override fails naming the key; ``trapy-openings
--cfg job`` prints the composed configuration.
Writes ``openings_<estimator>.csv`` and ``.json`` (the table; the JSON also holds the settings
it was computed with), ``openings_<estimator>.png`` (the map),
``openings_<estimator>_ranking.png`` (the fairest openings) and ``summary.txt``. With
``compare``, the maps by search of two or more nets (seeds of one recipe, say) are compared
instead (`trapy_rl.analysis.learned.seed_agreement`: every pair, and from four nets every split
into halves; on a solved side each map's swap decisions against v*), into ``agreement.md``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from trapy_rl.analysis.openings import ESTIMATORS
from trapy_rl.config import CONFIG_DIR, check_command_line, register_schema, settings_of
from trapy_rl.errors import reported
from trapy_rl.game.board import MAX_SIDE
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.nn.checkpoint import load_network
from trapy_rl.nn.device import check_device

__all__ = ["OpeningsConfig", "main", "run"]

MAX_PLAYOUTS = 10_000_000  # rollouts per leaf, playouts or games per opening
MAX_SIMULATIONS = 1_000_000  # the search's, per opening


@dataclass(frozen=True)
class OpeningsConfig:
    """The settings of ``trapy-openings``: the keywords of `trapy_rl.analysis.estimate_openings`
    with its defaults (a test holds them equal), and how the results are written.

    ``search`` is the search of ``estimator=search`` (the keys of `trapy_rl.mcts.SearchSettings`);
    ``cache_dir`` "default" is ``~/.cache/trapy_rl/openings``, null caches nothing; ``out_dir``
    null writes into Hydra's run folder; ``fairest`` openings are ringed on the map and listed
    in the summary, ``top`` are in the ranking chart and table. ``compare`` names two or more
    checkpoints (files or run folders) whose maps by search are compared with each other.
    """

    side: int = 10
    estimator: str = "search"
    checkpoint: str | None = None
    search: SearchSettings = field(default_factory=SearchSettings)
    rollouts: int = 4
    playouts: int = 1000
    agent: str = "random"
    opponent: str | None = None
    refine_fairest: int = 20
    half_width: float = 0.05
    mirror: bool = True
    seed: int = 0
    device: str = "cpu"
    workers: int = 1
    extend: str | None = None
    cache_dir: str | None = "default"
    out_dir: str | None = None
    fairest: int = 5
    top: int = 20
    compare: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Sizes checked against their caps, and the settings that only one estimator reads
        refused with another."""
        p = []
        bounds = {
            "side": (2, MAX_SIDE, self.side),
            "rollouts": (1, MAX_PLAYOUTS, self.rollouts),
            "playouts": (1, MAX_PLAYOUTS, self.playouts),
            "refine_fairest": (0, MAX_SIDE * MAX_SIDE, self.refine_fairest),
            "workers": (1, 1024, self.workers),
            "fairest": (0, MAX_SIDE * MAX_SIDE, self.fairest),
            "top": (0, MAX_SIDE * MAX_SIDE, self.top),
            "seed": (0, 2**63 - 1, self.seed),
            "search.num_simulations": (1, MAX_SIMULATIONS, self.search.num_simulations),
        }
        for key, (least, most, value) in bounds.items():
            if not least <= value <= most:
                p.append(f"{key} must be between {least} and {most:,}, got {value}")
        if not 0 < self.half_width <= 0.5:
            p.append(f"half_width must be in (0, 0.5], got {self.half_width}")
        if self.estimator not in ESTIMATORS:  # before Hydra makes the output folder
            p.append(f"estimator must be one of {', '.join(ESTIMATORS)}; got {self.estimator!r}")
        try:
            check_device(self.device)
        except ValueError as error:
            p.append(str(error))
        if self.estimator == "net" and self.checkpoint is None:
            p.append("estimator=net needs checkpoint=FILE_OR_RUN")
        playout_only = {
            "agent": self.agent != "random",
            "opponent": self.opponent is not None,
            "extend": self.extend is not None,
            "workers": self.workers > 1,
        }
        for key, given in playout_only.items():
            if given and self.estimator != "playout":
                p.append(f"{key} is read by estimator=playout alone, not {self.estimator}")
        if self.compare and (
            len(self.compare) < 2 or self.checkpoint or self.estimator != "search"
        ):
            p.append("compare=[A,B,...] takes two or more nets and compares their maps by search "
                     "(estimator=search, no checkpoint)")  # fmt: skip
        if p:
            raise ValueError("; ".join(p))


register_schema("openings", OpeningsConfig)


def run(cfg: DictConfig | OpeningsConfig, out_dir: str | Path) -> dict[str, Path]:
    """Estimate, then write the CSV, the pictures and the summary into ``out_dir``.

    Returns:
        ``{"csv", "json", "map", "ranking", "summary"}`` -> the paths written.

    Raises:
        ValueError: naming the problem, for a bad setting.
    """
    from trapy_rl.analysis.figures import draw_opening_map, draw_ranking, ranking_text
    from trapy_rl.analysis.openings import estimate_openings, write_opening_table
    from trapy_rl.analysis.summary import summarize
    from trapy_rl.game.board import Board

    if not isinstance(cfg, OpeningsConfig):
        cfg = settings_of(cfg, OpeningsConfig)
    if cfg.compare:
        return {"agreement": compare(cfg, out_dir)}
    table = estimate_openings(
        side=cfg.side,
        estimator=cfg.estimator,
        checkpoint=cfg.checkpoint,
        search=cfg.search,
        rollouts=cfg.rollouts,
        playouts=cfg.playouts,
        agent=cfg.agent,
        opponent=cfg.opponent,
        refine_fairest=cfg.refine_fairest,
        half_width=cfg.half_width,
        mirror=cfg.mirror,
        seed=cfg.seed,
        device=cfg.device,
        workers=cfg.workers,
        extend=cfg.extend,
        cache_dir=cfg.cache_dir,
        progress=True,
    )
    board = Board(cfg.side)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"openings_{cfg.estimator}"
    csv_path, json_path = write_opening_table(table, out / stem)
    paths = {
        "csv": csv_path,
        "json": json_path,
        "map": out / f"{stem}.png",
        "ranking": out / f"{stem}_ranking.png",
        "summary": out / "summary.txt",
    }
    settings = ", ".join(
        f"{k}={v['spec'] if k in ('agent', 'opponent') else v}"
        for k, v in table.attrs["key"].items()
        if k not in ("format", "checkpoint", "extends")
    )
    if "checkpoint" in table.attrs["key"]:
        settings += f", checkpoint={table.attrs['key']['checkpoint']['name']}"
    draw_opening_map(table, board, fairest=cfg.fairest, title=f"v(first move): {settings}").savefig(
        paths["map"], dpi=150, bbox_inches="tight"
    )
    draw_ranking(table, top=cfg.top).savefig(paths["ranking"], dpi=120, bbox_inches="tight")
    summary = summarize(table, board, fairest=cfg.fairest)
    text = "\n\n".join(
        [
            f"settings: {settings}" + (" (from the cache)" if table.attrs["cached"] else ""),
            str(summary),
            ranking_text(table, top=cfg.top),
        ]
    )
    paths["summary"].write_text(text + "\n", encoding="utf-8")
    print(text)
    return paths


def compare(cfg: OpeningsConfig, out_dir: str | Path) -> Path:
    """``compare``'s nets' maps by search against each other (and v* on a solved side), printed
    and written to ``agreement.md``."""
    # imported here, as in `run`: the command line starts (and checks its settings) first
    from trapy_rl.analysis.learned import (
        LABELS,
        exact_swap_agreement,
        maps_by_search,
        seed_agreement,
    )
    from trapy_rl.analysis.openings import opening_table
    from trapy_rl.game.board import Board
    from trapy_rl.solve.openings import exact_values, load_openings

    board = Board(cfg.side)
    v = maps_by_search(
        cfg.compare, side=cfg.side, search=cfg.search, cache_dir=cfg.cache_dir, progress=True
    )
    lines = [
        f"side {cfg.side}, maps by search, {cfg.search.num_simulations} simulations an opening"
    ]
    lines += [f"- {LABELS[i]}: {net}" for i, net in enumerate(cfg.compare)]
    lines += ["", seed_agreement(v, board).table()]
    try:
        v_star = exact_values(load_openings(cfg.side))
    except ValueError:  # no exact values on this side
        v_star = None
    if v_star is not None:
        lines.append("\nswap decisions (v > 1/2) against v*:")
        for i, values in enumerate(v):
            scored = exact_swap_agreement(opening_table(values, board), v_star, board)
            wrong = ", ".join(name for name, *_ in scored["wrong"]) or "none"
            lines.append(f"- {LABELS[i]}: {scored['agree']} of {scored['solved']}; wrong: {wrong}")
    text = "\n".join(lines)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "agreement.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return out / "agreement.md"


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="openings")
def _hydra_main(cfg: DictConfig) -> None:
    with reported("trapy-openings"):
        settings = settings_of(cfg, OpeningsConfig)
        run(settings, settings.out_dir or HydraConfig.get().runtime.output_dir)


def main() -> None:
    """``trapy-openings [OVERRIDES]``: the command line and the checkpoint checked (one line
    for a mistake), then Hydra's main: the output folder, then `run`."""
    with reported("trapy-openings"):
        config = check_command_line("openings", OpeningsConfig, sys.argv[1:])
        if config is not None and config.checkpoint is not None:  # before Hydra's folder
            load_network(config.checkpoint)
    _hydra_main()


if __name__ == "__main__":
    main()
