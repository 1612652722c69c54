"""What a training run measures about its net: matches, and the values of the opening moves.

The agents (`trapy_rl.agents`) and the opening values (`trapy_rl.analysis`) are the toolkit's
own; this module only picks what a training log shows.
"""

from __future__ import annotations

from trapy_rl.agents import RandomAgent, RolloutMCTSAgent
from trapy_rl.analysis import draw_opening_map, net_values, opening_table
from trapy_rl.eval import MatchResult, play_match
from trapy_rl.game.board import Board

__all__ = ["evaluate", "opening_values_figure"]


def evaluate(
    agent, board: Board, *, num_games: int, uct_simulations: int, seed: int
) -> dict[str, MatchResult]:
    """Matches of ``agent`` against random play and against rollout MCTS (UCT).

    Returns:
        ``{"random": MatchResult, "uct": MatchResult}``.
    """
    random_agent = RandomAgent(seed=seed)
    uct_agent = RolloutMCTSAgent(uct_simulations, seed=seed + 1)
    return {
        "random": play_match(agent, random_agent, num_games=num_games, board=board, seed=seed),
        "uct": play_match(agent, uct_agent, num_games=num_games, board=board, seed=seed),
    }


def opening_values_figure(evaluator, board: Board, *, title: str | None = None):
    """The net's opening map: v(c), the stone value of every first move, on the board.

    v(c) is the chance that the owner of a lone stone on c wins with the opponent to move
    (`trapy_rl.analysis.net_values`); yellow should swap where v > 1/2.
    """
    table = opening_table(net_values(evaluator, board), board)
    return draw_opening_map(table, board, title=title)
