"""OpenSpiel's bots as agents: the ``openspiel`` agent kind.

    openspiel:mcts:1000             OpenSpiel's MCTSBot, random rollouts, 1000 simulations a move
    openspiel:mcts:200,uct_c=1.4    the same with options (uct_c, num_rollouts, solve)
    openspiel:random                OpenSpiel's uniform random bot

The bots play the ``trap_y`` game of `trapy_rl.game.openspiel` and need the ``openspiel`` extra
(``pip install 'trapy-rl[openspiel]'``). This module imports neither when it is imported: the
kind is registered without OpenSpiel, and building one of its agents without OpenSpiel installed
is a one-line `MissingExtraError` (a ValueError, as for any spec that cannot be built).

The other direction, any agent spec (``uct:1000``, ``mcts:PATH:200``, ...) as a ``pyspiel.Bot``,
is `trapy_rl.agents.openspiel_bot.AgentBot`.

The MCTS bot is OpenSpiel's Python ``open_spiel.python.algorithms.mcts.MCTSBot``: its C++
``pyspiel.MCTSBot`` crashes (a segmentation fault) on games written in Python, OpenSpiel's
own ``python_tic_tac_toe`` included, in open_spiel 2.0.2. OpenSpiel's random bot picks
uniformly among the legal actions, the swap included (the toolkit's ``random`` swaps half the
time).

Shapes: B games in the batch, n games to move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trapy_rl.agents.base import AgentSpec
from trapy_rl.errors import MissingExtraError
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board

__all__ = ["OPENSPIEL_MCTS_DEFAULTS", "OpenSpielAgent"]

OPENSPIEL_MCTS_DEFAULTS: dict[str, Any] = {"uct_c": 2.0, "num_rollouts": 1, "solve": True}
"""The options of ``openspiel:mcts`` and their defaults (those of OpenSpiel's MCTS example)."""
_DEFAULT_SIMULATIONS = 1000
USAGE = "openspiel:mcts[:SIMULATIONS][,uct_c=C][,num_rollouts=R][,solve=B] or openspiel:random"


class OpenSpielAgent:
    """OpenSpiel bots playing in the toolkit, one position at a time, on the ``trap_y`` game.

    Each game asked about is replayed into a fresh OpenSpiel state, and the bot of the player
    to move takes one ``step`` on it; bots that keep state between moves are not supported.

    Args:
        game: the ``trap_y`` game (a ``pyspiel.Game``) of the boards this agent plays on.
        bots: the bot of each player, [blue's, yellow's]; one bot twice if it plays both.
        name: the label in tables and records.
    """

    def __init__(self, game: Any, bots: Sequence[Any], *, name: str) -> None:
        from trapy_rl.game.openspiel import board_of  # needs the openspiel extra

        if len(bots) != 2:
            raise ValueError(f"OpenSpielAgent needs a bot for each of the 2 players, got {bots}")
        self.game = game
        self.board = board_of(game)
        self.bots = tuple(bots)
        self.name = name

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: the bot's action in each of ``games`` [n] int (unfinished games)."""
        if batch.board is not self.board:
            raise ValueError(
                f"agent {self.name!r} plays on the side-{self.board.side} board, "
                f"not side {batch.board.side}"
            )
        games = np.asarray(games, dtype=np.intp)
        actions = np.empty(len(games), dtype=np.int64)
        for i, game in enumerate(games):
            state = self.game.new_initial_state()
            for action in batch.history[game, : batch.move_count[game]]:
                state.apply_action(int(action))
            actions[i] = self.bots[state.current_player()].step(state)
        return actions

    def __repr__(self) -> str:
        return f"OpenSpielAgent({self.name!r}, side={self.board.side})"


def from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> OpenSpielAgent:
    spec.check_args(1, 2, USAGE)
    bot = spec.args[0].lower()
    if bot not in ("mcts", "random"):
        raise ValueError(f"agent spec {spec.text!r}: unknown OpenSpiel bot {bot!r}: {USAGE}")
    if bot == "random":
        spec.check_args(1, 1, "'openspiel:random' with no further arguments")
        spec.typed_options({})
    try:  # the openspiel extra, only when one of its agents is built
        import pyspiel

        from trapy_rl.game.openspiel import load_game
    except ModuleNotFoundError as error:
        needed_by = f"the agent spec {spec.text!r}"
        raise MissingExtraError("openspiel", module="pyspiel", needed_by=needed_by) from error
    game = load_game(board.side)
    # Two seeds (rollouts and search, or one per player), non-negative int32 as C++ bots take.
    seeds = [int(s) >> 1 for s in np.random.SeedSequence(seed).generate_state(2)]
    if bot == "random":
        bots = [pyspiel.make_uniform_random_bot(player, seeds[player]) for player in (0, 1)]
        return OpenSpielAgent(game, bots, name=spec.text)

    from open_spiel.python.algorithms import mcts  # the openspiel extra, as above

    simulations = _DEFAULT_SIMULATIONS
    if len(spec.args) > 1:
        try:
            simulations = int(spec.args[1])
        except ValueError:
            raise ValueError(
                f"agent spec {spec.text!r}: simulations {spec.args[1]!r} is not an integer"
            ) from None
    options = {**OPENSPIEL_MCTS_DEFAULTS, **spec.typed_options(OPENSPIEL_MCTS_DEFAULTS)}
    if simulations < 1 or options["num_rollouts"] < 1 or options["uct_c"] < 0:
        raise ValueError(
            f"agent spec {spec.text!r}: simulations and num_rollouts must be >= 1 and uct_c >= 0"
        )
    evaluator = mcts.RandomRolloutEvaluator(
        n_rollouts=options["num_rollouts"], random_state=np.random.RandomState(seeds[0])
    )
    search = mcts.MCTSBot(
        game,
        options["uct_c"],
        simulations,
        evaluator,
        solve=options["solve"],
        random_state=np.random.RandomState(seeds[1]),
    )
    return OpenSpielAgent(game, [search, search], name=spec.text)
