"""What a training run measures about its net: matches, and the values of the opening moves.

The agents (`trapy_rl.agents`) and the opening values (`trapy_rl.analysis`) are the toolkit's
own; this module only picks what a training log shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from trapy_rl.agents import Agent, parse_agent
from trapy_rl.agents.network import NetworkPolicyAgent
from trapy_rl.analysis import draw_opening_map, net_values, opening_table
from trapy_rl.errors import one_line
from trapy_rl.eval import MatchResult, play_match
from trapy_rl.eval.pool import load_pool
from trapy_rl.eval.truth import score_agent, truth_sides
from trapy_rl.game.board import Board

if TYPE_CHECKING:
    from trapy_rl.train.settings import TrainConfig

__all__ = ["check_opponents", "evaluate", "opening_values_figure", "truth_metrics"]


def evaluate(
    agent: Agent,
    board: Board,
    *,
    opponents: Sequence[str],
    num_games: int,
    seed: int,
    starts: Sequence[Sequence[int]] = (),
    progress: bool = False,
) -> dict[str, MatchResult]:
    """Matches of ``agent`` against each opponent spec (``random``, ``uct:32``, ...).

    Args:
        agent: the agent measured.
        board: the board.
        opponents: agent specs.
        num_games: games per opponent.
        seed: seeds the opponents and picks the starts.
        starts: start positions of the pairs of games (see `trapy_rl.eval.play_match`).
        progress: a progress bar over each match's games.

    Returns:
        ``{spec: MatchResult}`` in the order of ``opponents``.
    """
    results = {}
    for i, spec in enumerate(opponents):
        opponent = parse_agent(spec, board=board, seed=seed + 1 + i)
        results[spec] = play_match(
            agent, opponent, num_games=num_games, board=board, seed=seed, starts=starts,
            progress=progress,
        )  # fmt: skip
    return results


def check_opponents(cfg: TrainConfig) -> None:
    """Build, once, every agent the run's matches may play (``eval.opponents`` and
    ``eval.final_opponents``, checked even where no match plays them: a spec given is a spec
    meant) and check a pool's members, so that a bad spec or checkpoint is refused before the
    run starts.

    Raises:
        ValueError: naming the setting and the spec's problem.
    """
    board = Board(cfg.side)
    given = {"eval.opponents": cfg.eval.opponents, "eval.final_opponents": cfg.eval.final_opponents}
    for key, specs in given.items():
        for spec in specs:
            try:
                parse_agent(spec, board=board, seed=0)
            except ValueError as error:
                raise ValueError(f"{key}: {one_line(error)}") from None
    if cfg.eval.pool:  # the opponents must be the pool's members
        load_pool(cfg.eval.pool, side=cfg.side).select(list(cfg.eval.opponents))


def opening_values_figure(evaluator, board: Board, *, title: str | None = None):
    """The net's opening map: v(c), the stone value of every first move, on the board.

    v(c) is the chance that the owner of a lone stone on c wins with the opponent to move
    (`trapy_rl.analysis.net_values`); yellow should swap where v > 1/2.
    """
    table = opening_table(net_values(evaluator, board), board)
    return draw_opening_map(table, board, title=title)


def truth_metrics(agent: Agent, evaluator, board: Board) -> dict[str, float]:
    """The scores against the exact values (`trapy_rl.eval.truth`) of ``agent`` (the run's
    search, ``truth/search_*``) and of its net's policy and value head alone (``truth/net_*``);
    empty where ``board``'s side is not solved."""
    if board.side not in truth_sides():
        return {}
    net = NetworkPolicyAgent(evaluator, name="net")
    return {
        **score_agent(agent, board.side).metrics("truth/search_"),
        **score_agent(net, board.side).metrics("truth/net_"),
    }
