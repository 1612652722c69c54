"""Trap Y as a PettingZoo AEC environment, in the style of PettingZoo's classic board games.

Needs the ``pettingzoo`` extra (``pip install 'trapy-rl[pettingzoo]'``); nothing else in the
toolkit imports this module. The usual AEC loop:

>>> from trapy_rl.envs.pettingzoo import env
>>> game = env(side=5)
>>> game.reset(seed=0)
>>> for agent in game.agent_iter():
...     observation, reward, termination, truncation, info = game.last()
...     mask = observation["action_mask"]
...     game.step(None if termination else game.action_space(agent).sample(mask))
>>> game.unwrapped.game_state.winner in (1, 2)  # blue or yellow: never a draw
True

Copies: ``pickle`` and ``copy.deepcopy`` carry the game in play (the constructor's arguments,
as Gymnasium's ``EzPickle`` keeps them, then the position, the rewards and the agent to move),
so a copy plays on from where its original was; its action spaces' random generators start
afresh.

The parallel API: PettingZoo's ``aec_to_parallel`` refuses this env, with PettingZoo's
AssertionError that names ``is_parallelizable``: the agents take turns, and that conversion,
which steps every agent at once, is safe only for an env that updates once at the end of each
cycle. PettingZoo's ``turn_based_aec_to_parallel`` is the one for turn-based games: each
parallel step takes an action from every agent and plays the one of the agent to move, whose
name is in ``infos[agent]["active_agent"]``:

>>> from pettingzoo.utils.conversions import turn_based_aec_to_parallel
>>> parallel = turn_based_aec_to_parallel(env(side=5))
>>> observations, infos = parallel.reset(seed=0)
>>> actions = {agent: parallel.action_space(agent).sample() for agent in parallel.agents}
>>> observations, rewards, terminations, truncations, infos = parallel.step(actions)
>>> infos["blue"]["active_agent"]
'yellow'

Shapes: K cells, A = K + 1 actions, C planes, H x W grid (all from the `Board`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from trapy_rl.envs.spaces import LegalActions
from trapy_rl.envs.trap_y_env import RENDER_MODES, as_move, render_state
from trapy_rl.errors import MissingExtraError
from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, encode_state_planes
from trapy_rl.game.state import PLAYER_NAMES, GameState, IllegalMoveError

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ModuleNotFoundError as error:
    raise MissingExtraError(
        "pettingzoo", module="pettingzoo", needed_by="trapy_rl.envs.pettingzoo"
    ) from error

__all__ = ["env", "raw_env"]

# The agents are the colours, which the players keep through the swap (docs/rules.md).
AGENTS: tuple[str, ...] = (PLAYER_NAMES[1], PLAYER_NAMES[2])
# What a pickle or deep copy carries besides the constructor's arguments: the game in play.
_EPISODE = (
    "_state",
    "agents",
    "rewards",
    "_cumulative_rewards",
    "terminations",
    "truncations",
    "infos",
    "agent_selection",
)


def env(*, side: int = 10, render_mode: str | None = None) -> AECEnv:
    """Trap Y with PettingZoo's classic wrappers: an illegal move ends the game, losing.

    The wrappers are those of PettingZoo's classic games: ``TerminateIllegalWrapper`` (an illegal
    action terminates the game with reward -1 to its player and 0 to the other),
    ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``. Arguments as for `raw_env`.
    """
    game: AECEnv = raw_env(side=side, render_mode=render_mode)
    game = wrappers.TerminateIllegalWrapper(game, illegal_reward=-1)
    game = wrappers.AssertOutOfBoundsWrapper(game)
    return wrappers.OrderEnforcingWrapper(game)


class raw_env(AECEnv, EzPickle):  # PettingZoo's name for the unwrapped class
    """Trap Y, a Hex/Y-family connection game, for two agents: ``"blue"`` and ``"yellow"``.

    ## Description

    Blue moves first; the agents alternate placing a stone of their colour on an empty cell. A
    group of stones wins when it touches three of the five perimeter regions, unless they are
    consecutive around the board, or any four. On the game's second move yellow may swap
    instead of placing: blue's stone becomes yellow on the same cell, and blue moves again, so
    the agents still alternate. There are no draws. The full rules and the cell names are the
    project's ``docs/rules.md``; the Gymnasium env `trapy_rl.envs.TrapYEnv` shows the board.

    ## Action Space

    ``Discrete(A)`` for each agent, A = K + 1: action ``i < K`` places a stone on cell ``i``
    (``a1`` is 0, row-major from the bottom row), action ``K`` is the swap. An agent's
    ``action_space(agent).sample()`` without a mask draws among the legal actions of the
    current position (`trapy_rl.envs.spaces.LegalActions`). The unwrapped env raises
    `trapy_rl.game.IllegalMoveError` for an illegal action; `env` turns it into a loss.

    ## Observation Space

    A ``Dict`` as in PettingZoo's classic games:

    * ``"observation"``: ``Box(0, 1, (C, H, W), float32)``, the input planes of the toolkit's
      nets (`trapy_rl.game.planes`; C = 9, H = n, W = 2n - 1) from the observing agent's side:
      plane 0 its own stones, plane 1 the other agent's, 2 the board, 3 whether the swap is
      legal, 4..8 the regions. Channels come first, as the nets take them (PettingZoo's classic
      games put them last).
    * ``"action_mask"``: ``Box(0, 1, (A,), int8)``, 1 for the legal actions of the agent to
      move, the swap last; all zeros for the other agent and once the game is over.

    ## Rewards

    +1 to the winner and -1 to the loser on the move that ends the game, else 0.

    ## Starting State

    The empty board, blue to move.

    ## Episode End

    Both agents terminate when a group wins. Never truncated: a game lasts at most K + 1
    moves. ``reset(seed, options)`` accepts a seed and options for the API's sake; the game
    has no randomness and no options.

    ## Arguments

    * ``side``: the board's side, an integer from 2 to 40 (10 is Trap Y, 145 cells).
    * ``render_mode``: None, ``"ansi"`` (the text board, returned as a string),
      ``"rgb_array"`` (the matplotlib picture as an [h, w, 3] uint8 array) or ``"human"``
      (the text board printed after every move; ``render()`` returns None).

    ## Version History

    * v0: Initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": [*RENDER_MODES, "human"],
        "name": "trap_y_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, *, side: int = 10, render_mode: str | None = None) -> None:
        EzPickle.__init__(self, side=side, render_mode=render_mode)
        super().__init__()
        self.board = Board(side)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode

        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        height, width = self.board.grid_shape
        num_actions = self.board.num_actions
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(
                        0.0, 1.0, shape=(NUM_PLANES, height, width), dtype=np.float32
                    ),
                    "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
                }
            )
            for agent in AGENTS
        }
        self.action_spaces = {
            agent: LegalActions(num_actions, self._legal_mask_or_none) for agent in AGENTS
        }
        self._state: GameState | None = None

    # ------------------------------------------------------------------ queries
    @property
    def game_state(self) -> GameState:
        """A copy of the current game (PettingZoo's ``state()`` would be a global observation)."""
        if self._state is None:
            raise RuntimeError("the environment has no game yet: call reset() first")
        return self._state.copy()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _legal_mask_or_none(self) -> np.ndarray | None:
        return None if self._state is None else self._state.legal_mask()

    # ------------------------------------------------------------------ the AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._state = GameState(self.board)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = PLAYER_NAMES[self._state.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The observation of ``agent`` (see the class docstring), fresh arrays."""
        state = self._state
        mask = np.zeros(self.board.num_actions, dtype=np.int8)
        if agent == self.agent_selection:
            mask[state.legal_mask()] = 1  # all False once the game is over
        return {
            "observation": encode_state_planes(state, AGENTS.index(agent) + 1),
            "action_mask": mask,
        }

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state
        try:
            state.play(as_move(action))
        except IllegalMoveError as error:
            raise IllegalMoveError(
                f"illegal action {action!r} by {agent} at move {state.move_count + 1}: {error}"
            ) from None
        # Rewards are paid at the end only, so there is nothing to clear between moves.
        if state.is_over:
            for other in self.agents:
                self.rewards[other] = 1.0 if other == PLAYER_NAMES[state.winner] else -1.0
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        self.agent_selection = PLAYER_NAMES[state.to_move]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode")
            return None
        state = self._state if self._state is not None else GameState(self.board)
        if self.render_mode == "human":
            print(render_state(state, "ansi"), end="\n\n")
            return None
        return render_state(state, self.render_mode)

    def close(self) -> None:
        """Nothing to release: pictures are drawn on figures that are not kept."""

    # ------------------------------------------------------------------ copies
    def __getstate__(self) -> dict[str, Any]:
        """The constructor's arguments (as `EzPickle` keeps them) and the game in play."""
        state = EzPickle.__getstate__(self)
        state["episode"] = {name: getattr(self, name) for name in _EPISODE if hasattr(self, name)}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Built anew by __init__ rather than EzPickle's stand-in, so that the action spaces ask
        # this env, not the stand-in, for the legal moves; then the game goes on where it was.
        self.__init__(*state["_ezpickle_args"], **state["_ezpickle_kwargs"])
        self.__dict__.update(state.get("episode", {}))
