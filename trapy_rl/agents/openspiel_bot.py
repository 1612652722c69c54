"""The toolkit's agents as OpenSpiel bots: `AgentBot` plays any agent spec in OpenSpiel's code.

>>> from trapy_rl.agents.openspiel_bot import AgentBot
>>> from trapy_rl.game.openspiel import load_game
>>> game = load_game(side=3)
>>> bot = AgentBot("uct:20", game, seed=0)
>>> state = game.new_initial_state()
>>> state.apply_action(bot.step(state))
>>> len(state.history())
1

Needs the ``openspiel`` extra (``pip install 'trapy-rl[openspiel]'``). The other direction,
OpenSpiel's bots as agent specs, is `trapy_rl.agents.openspiel`.
"""

from __future__ import annotations

from trapy_rl.agents.base import Agent
from trapy_rl.agents.kinds import parse_agent
from trapy_rl.agents.moves import checked_move
from trapy_rl.errors import MissingExtraError
from trapy_rl.game.openspiel import board_of
from trapy_rl.game.state import GameState

try:
    import pyspiel
except ModuleNotFoundError as error:
    raise MissingExtraError(
        "openspiel", module="pyspiel", needed_by="trapy_rl.agents.openspiel_bot"
    ) from error

__all__ = ["AgentBot"]


class AgentBot(pyspiel.Bot):
    """One of the toolkit's agents as an OpenSpiel bot on ``trap_y``; plays for either player.

    Each ``step`` replays the state's history into a `GameState`, resets the agent for it and
    asks for one move, checked for legality (`trapy_rl.agents.moves.checked_move`).

    Args:
        agent: an agent spec (``"uct:1000"``, ``"mcts:PATH:200"``, ...) or an `Agent`.
        game: the ``trap_y`` game the bot plays.
        seed: seeds an agent built from a spec (None: fresh entropy).
    """

    def __init__(self, agent: str | Agent, game: pyspiel.Game, *, seed: int | None = None):
        pyspiel.Bot.__init__(self)
        self.board = board_of(game)
        if isinstance(agent, str):
            agent = parse_agent(agent, board=self.board, seed=seed)
        self.agent = agent

    def step(self, state: pyspiel.State) -> int:
        position = GameState.from_moves(state.history(), self.board)
        return checked_move(self.agent, position)

    def restart_at(self, state: pyspiel.State) -> None:
        """Nothing to do: every step starts from the state's whole history."""

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to do, as for `restart_at`."""

    def provides_policy(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"AgentBot({self.agent.name!r}, side={self.board.side})"
