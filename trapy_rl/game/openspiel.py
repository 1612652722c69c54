"""Trap Y as an OpenSpiel game (``trap_y``): the rules behind OpenSpiel's Game and State API.

Needs the ``openspiel`` extra (``pip install 'trapy-rl[openspiel]'``); nothing else in the
toolkit imports this module at import time. Importing it registers the game with OpenSpiel:

>>> import pyspiel
>>> import trapy_rl.game.openspiel  # registers "trap_y"
>>> game = pyspiel.load_game("trap_y(side=5)")  # side: 2 to 40, default 10
>>> game.observation_tensor_shape()
[9, 5, 9]
>>> state = game.new_initial_state()
>>> state.apply_action(state.legal_actions()[0])
>>> state.current_player(), len(state.legal_actions()), state.action_to_string(35)
(1, 35, 'swap')

The game, in OpenSpiel's terms: sequential, deterministic, perfect information, zero-sum, with
terminal rewards (+1 to the winner, -1 to the loser; never a draw). Player 0 is blue, who moves
first, and player 1 yellow; a player keeps its colour through the swap (docs/rules.md), so the
players alternate throughout. Actions are the toolkit's: cell indices 0..K-1, and K the swap,
legal only as the second move. ``state.game_state`` is the game as a `GameState`, the
reference engine that every move goes through.

Observations: ``observation_tensor(player)`` is the input planes of the toolkit's nets
(`trapy_rl.game.planes`, C = 9 on the H x W = n x (2n - 1) grid, float32, flattened) from
``player``'s side (plane 0 its stones, plane 1 the other player's); ``observation_string(player)``
the text board; the information state string is the history, as for OpenSpiel's other
perfect-information games. Two game parameters shape the tensor:

- ``layout``: ``chw`` (the default) lays it out [C, H, W], as the toolkit's torch nets read it;
  ``hwc`` lays the same planes out [H, W, C], channels last, as the Flax models of OpenSpiel's
  AlphaZero read it (they reshape the flat tensor to ``observation_tensor_shape()`` and
  convolve over its first two axes, the last one being the channels).
- ``turn_plane``: ``false`` (the default) gives the 9 planes; ``true`` adds a tenth, 1 on every
  cell while blue is to move and 0 while yellow is. The nine planes are drawn from the
  observer's side and do not say whose turn it is: after ``a1 swap b2`` yellow is to move
  with its stone on a1 against b2, as blue is after ``a1 b2``, and the planes of the player
  to move are the same. OpenSpiel's AlphaZero observes the player to move and learns player
  0's return, which without this plane is not a function of what it observes.

>>> hwc = pyspiel.load_game("trap_y(side=5,layout=hwc,turn_plane=true)")
>>> hwc.observation_tensor_shape()
[5, 9, 10]

The toolkit's agents as OpenSpiel bots are `trapy_rl.agents.openspiel_bot.AgentBot`, and
OpenSpiel's bots as agent specs (``openspiel:mcts:1000``) `trapy_rl.agents.openspiel`.

Shapes: K cells, A = K + 1 actions, C planes, H x W grid (all from the `Board`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from trapy_rl.errors import MissingExtraError
from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, PLANE_NAMES, encode_state_planes
from trapy_rl.game.render import render_state_ascii
from trapy_rl.game.state import GameState

try:
    import pyspiel
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ModuleNotFoundError as error:
    raise MissingExtraError(
        "openspiel", module="pyspiel", needed_by="trapy_rl.game.openspiel"
    ) from error

__all__ = [
    "GAME_NAME",
    "LAYOUTS",
    "TrapYGame",
    "TrapYObserver",
    "TrapYState",
    "board_of",
    "load_game",
]

GAME_NAME = "trap_y"
LAYOUTS = ("chw", "hwc")
"""The observation tensor's axis orders: planes, rows, columns; or rows, columns, planes."""
_DEFAULT_PARAMETERS = {"side": 10, "layout": "chw", "turn_plane": False}

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Trap Y",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULT_PARAMETERS,
)


@functools.cache
def _board(side: int) -> Board:
    return Board(side)


def load_game(side: int = 10, *, layout: str = "chw", turn_plane: bool = False) -> pyspiel.Game:
    """``pyspiel.load_game("trap_y", {...})``: the game on the board of ``side``.

    ``layout`` and ``turn_plane`` shape the observation tensor (the module docstring).
    """
    return pyspiel.load_game(
        GAME_NAME, {"side": int(side), "layout": layout, "turn_plane": bool(turn_plane)}
    )


def board_of(game: pyspiel.Game) -> Board:
    """The `Board` of a ``trap_y`` game; ValueError for any other game."""
    if game.get_type().short_name != GAME_NAME:
        raise ValueError(f"expected a {GAME_NAME!r} game, got {game}")
    return Board(game.get_parameters()["side"])


class TrapYGame(pyspiel.Game):
    """The ``trap_y`` game of one board size.

    Args:
        params: OpenSpiel's game parameters: ``side`` (default 10, from 2 to 40), ``layout``
            (``chw`` or ``hwc``) and ``turn_plane`` (a bool), as in the module docstring.

    Attributes:
        board: the `Board` of the side, derived from the game's parameters (not stored: a game
            that goes through ``pickle`` or ``copy.deepcopy`` comes back without running
            ``__init__``, as OpenSpiel's own algorithms send it to their workers).
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_DEFAULT_PARAMETERS, **(params or {})}
        board = Board(params["side"])  # ValueError for a side off the range
        if params["layout"] not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {params['layout']!r}")
        info = pyspiel.GameInfo(
            num_distinct_actions=board.num_actions,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            # Every cell filled, and the swap: the swap places no stone.
            max_game_length=board.num_cells + 1,
        )
        super().__init__(GAME_TYPE, info, params)

    @property
    def board(self) -> Board:
        return _board(int(self.get_parameters()["side"]))

    def new_initial_state(self) -> TrapYState:
        return TrapYState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> TrapYObserver | IIGObserverForPublicInfoGame:
        """The planes observer; OpenSpiel's history observer for information states."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            game_params = self.get_parameters()
            return TrapYObserver(
                self.board,
                params,
                layout=game_params["layout"],
                turn_plane=bool(game_params["turn_plane"]),
            )
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class TrapYState(pyspiel.State):
    """A position of ``trap_y``: a `GameState` behind OpenSpiel's State API.

    Attributes:
        game_state: the game; OpenSpiel clones and serializes a state through its attributes
            (deep copies, pickles), so it is the only one.
    """

    def __init__(self, game: TrapYGame) -> None:
        super().__init__(game)
        self.game_state = GameState(game.board)

    def current_player(self) -> int:
        if self.game_state.is_over:
            return pyspiel.PlayerId.TERMINAL
        return self.game_state.to_move - 1

    def _legal_actions(self, player: int) -> list[int]:
        # OpenSpiel asks only for the player to move: the others have none.
        return self.game_state.legal_actions()

    def _apply_action(self, action: int) -> None:
        self.game_state.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return self.game_state.board.action_name(int(action))

    def is_terminal(self) -> bool:
        return self.game_state.is_over

    def returns(self) -> list[float]:
        winner = self.game_state.winner
        if not winner:
            return [0.0, 0.0]
        return [1.0, -1.0] if winner == 1 else [-1.0, 1.0]

    def __str__(self) -> str:
        return render_state_ascii(self.game_state)


class TrapYObserver:
    """OpenSpiel's observer of ``trap_y``: the planes of the toolkit's nets.

    Args:
        board: the board.
        params: observer parameters; none are taken.
        layout: ``chw`` or ``hwc``, the axis order of the tensor.
        turn_plane: add the plane of the player to move (1 on the cells while blue is to move).

    Attributes:
        tensor: [C' * H * W] float32, the planes flattened (C' = C, or C + 1 with the turn
            plane, which comes last).
        dict: ``{"observation": [C', H, W] or [H, W, C'] float32}``, a view of ``tensor``.
    """

    def __init__(
        self, board: Board, params: Any = None, *, layout: str = "chw", turn_plane: bool = False
    ) -> None:
        if params:
            raise ValueError(f"the trap_y observer takes no parameters, got {params}")
        self.turn_plane = turn_plane
        self._planes = np.zeros((NUM_PLANES + turn_plane, *board.grid_shape), dtype=np.float32)
        # The on-board mask, which the turn plane is while blue is to move.
        self._on_board = encode_state_planes(GameState(board), 1)[PLANE_NAMES.index("on_board")]
        # [C', H, W] -> the layout's axis order: (0, 1, 2) for chw, (1, 2, 0) for hwc.
        self._axes = (0, 1, 2) if layout == "chw" else (1, 2, 0)
        shape = tuple(self._planes.shape[axis] for axis in self._axes)
        self.tensor = np.zeros(int(np.prod(shape)), dtype=np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: TrapYState, player: int) -> None:
        """The planes of ``state`` from ``player``'s side (0 blue, 1 yellow)."""
        game_state = state.game_state
        self._planes[:NUM_PLANES] = encode_state_planes(game_state, player + 1)
        if self.turn_plane:
            self._planes[NUM_PLANES] = self._on_board * (game_state.to_move == 1)
        self.dict["observation"][:] = self._planes.transpose(self._axes)

    def string_from(self, state: TrapYState, player: int) -> str:
        """The text board (the same for both players: nothing is hidden)."""
        return str(state)


if GAME_NAME not in {game_type.short_name for game_type in pyspiel.registered_games()}:
    pyspiel.register_game(GAME_TYPE, TrapYGame)
