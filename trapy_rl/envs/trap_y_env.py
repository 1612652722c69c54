"""The single Gymnasium environment: one game of Trap Y, in self-play or against an opponent.

Shapes: K cells, A = K + 1 actions, C planes, H x W grid (all from the `Board`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from trapy_rl.envs.spaces import LegalActions
from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, encode_state_planes
from trapy_rl.game.render import render_state_ascii
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.game.state import BLUE, PLAYER_NAMES, YELLOW, GameState, IllegalMoveError

__all__ = ["RENDER_MODES", "Opponent", "TrapYEnv", "as_move", "as_seed", "render_state"]

Opponent = Callable[[GameState, np.ndarray], "int | str"]
"""A callable opponent: ``(state, action_mask) -> action``.

``state`` is a copy of the game (a `GameState`, the opponent to move), ``action_mask`` the [A]
bool legal actions; it returns an action index (or a move name such as ``"c3"`` or ``"swap"``).
"""

RENDER_MODES = ("ansi", "rgb_array")


class TrapYEnv(gym.Env[np.ndarray, np.int64]):
    """Trap Y, a Hex/Y-family connection game on a trapezoid of hexagonal cells.

    ## Description

    Two players, blue (player 1, moves first) and yellow (player 2), place stones of their
    colour on empty cells. Stones never move. A player wins by making a group that touches
    three of the five perimeter regions (bottom-left, bottom-right, right, top, left), unless
    the three are consecutive around the board, or any four or more. On the second move of the
    game yellow may *swap* instead of placing: blue's stone becomes yellow on the same cell and
    blue moves again. The game never ends in a draw. The full rules are the project's
    ``docs/rules.md``. The board of side 10 (Trap Y proper, 145 cells) and its cell names:

    ```
                      a10 b10 c10 d10 e10 f10 g10 h10 i10 j10
                     a9  b9  c9  d9  e9  f9  g9  h9  i9  j9  k9
                   a8  b8  c8  d8  e8  f8  g8  h8  i8  j8  k8  l8
                 a7  b7  c7  d7  e7  f7  g7  h7  i7  j7  k7  l7  m7
               a6  b6  c6  d6  e6  f6  g6  h6  i6  j6  k6  l6  m6  n6
             a5  b5  c5  d5  e5  f5  g5  h5  i5  j5  k5  l5  m5  n5  o5
           a4  b4  c4  d4  e4  f4  g4  h4  i4  j4  k4  l4  m4  n4  o4  p4
         a3  b3  c3  d3  e3  f3  g3  h3  i3  j3  k3  l3  m3  n3  o3  p3  q3
       a2  b2  c2  d2  e2  f2  g2  h2  i2  j2  k2  l2  m2  n2  o2  p2  q2  r2
     a1  b1  c1  d1  e1  f1  g1  h1  i1  j1  k1  l1  m1  n1  o1  p1  q1  r1  s1
    ```

    Any side ``n >= 2`` works (``n(3n - 1)/2`` cells), for tests and curricula.

    ## Action Space

    ``Discrete(A)`` with A = K + 1: action ``i < K`` places a stone on cell ``i`` (row-major
    from the bottom row: ``a1`` is 0, ``j10`` is 144 on side 10), action ``K`` is the swap.
    Only some actions are legal; ``info["action_mask"]`` says which. An illegal action raises
    `trapy_rl.game.IllegalMoveError` naming the move and why, and changes nothing. ``step``
    also takes a move name (``"c3"``, ``"swap"``), which is handy in scripts.
    ``env.action_space.sample()`` draws uniformly among the legal actions of the current
    position (see `trapy_rl.envs.spaces.LegalActions`).

    ## Observation Space

    ``Box(0, 1, (C, H, W), float32)``: the input planes of `trapy_rl.game.planes.encode_planes`
    (C = 9; H = n rows, W = 2n - 1 columns), from the view of the player to move: plane 0 their
    stones, 1 the opponent's, 2 the board, 3 whether the swap is legal, 4..8 the regions. With an
    opponent the view is always the agent's, who is the player to move whenever it acts.

    ## Rewards

    Self-play (no opponent): +1 to the mover for the winning move, else 0. With an opponent:
    +1 to the agent when it wins, -1 when the opponent wins (on the step that ends the game,
    whether the agent's move or the opponent's reply ended it), else 0.

    ## Starting State

    The empty board, blue to move. With an opponent playing blue, the opponent's first move
    is already on the board and the agent (yellow) may swap.

    ## Episode End

    Terminated when a player wins. Never truncated: a game lasts at most K + 1 moves. After
    the end, ``step`` raises `gymnasium.error.ResetNeeded` until ``reset``.

    ## Info

    ``action_mask`` [A] bool (all False once the game is over), ``to_move`` (1 or 2; after the
    end, the player who would have moved), ``winner`` (0 while the game goes on, else 1 or 2),
    ``move_count``, ``last_action`` (-1 before the first move; with an opponent, usually the
    opponent's reply), and with an opponent ``agent_player`` (the agent's colour, 1 or 2).

    ## Arguments

    ```python
    gymnasium.make("trapy_rl/TrapY-v0", side=10, opponent=None, agent_player=1, render_mode=None)
    ```

    * ``side``: the board's side, an integer from 2 to 40 (10 is Trap Y).
    * ``opponent``: None for self-play (each step is the move of the player to move);
      ``"random"`` (the swap with probability 1/2 when legal, otherwise a uniform legal cell,
      drawn from the env's seeded ``np_random``); or a callable
      ``(state: GameState, action_mask: np.ndarray [A] bool) -> int`` given a copy of the game
      with the opponent to move, returning its action (an index or a move name).
    * ``agent_player``: the agent's colour with an opponent: 1 (blue, moves first), 2 (yellow)
      or ``"random"`` (drawn at each reset from ``np_random``). Only 1 without an opponent.
    * ``render_mode``: None, ``"ansi"`` (the ASCII board as a string) or ``"rgb_array"``
      ([h, w, 3] uint8 picture).

    ## Version History

    * v0: Initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(
        self,
        *,
        side: int = 10,
        opponent: str | Opponent | None = None,
        agent_player: int | str = 1,
        render_mode: str | None = None,
    ) -> None:
        self.board = Board(side)
        self.opponent = _check_opponent(opponent)
        self.agent_player = _check_agent_player(agent_player, opponent)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}"
            )
        self.render_mode = render_mode

        height, width = self.board.grid_shape
        self.observation_space = spaces.Box(
            0.0, 1.0, shape=(NUM_PLANES, height, width), dtype=np.float32
        )
        self.action_space = LegalActions(self.board.num_actions, self._legal_mask_or_none)

        self._state: GameState | None = None
        self._agent = BLUE

    # ------------------------------------------------------------------ queries
    @property
    def state(self) -> GameState:
        """A copy of the current game."""
        if self._state is None:
            raise ResetNeeded("the environment has no game yet: call reset() first")
        return self._state.copy()

    def _legal_mask_or_none(self) -> np.ndarray | None:
        return None if self._state is None else self._state.legal_mask()

    # ------------------------------------------------------------------ the Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=as_seed(seed))
        if options:
            raise ValueError(f"TrapYEnv.reset takes no options, got {sorted(options)}")
        self._state = GameState(self.board)
        if self.opponent is not None:
            if self.agent_player == "random":
                self._agent = int(self.np_random.choice((BLUE, YELLOW)))
            else:
                self._agent = int(self.agent_player)
            if self._agent == YELLOW:
                self._opponent_move()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self._state
        if state is None:
            raise ResetNeeded("step() before reset(): call reset() to start a game")
        if state.is_over:
            raise ResetNeeded(
                f"the game is over ({PLAYER_NAMES[state.winner]} won after {state.move_count} "
                "moves): call reset() before stepping again"
            )
        mover = state.to_move
        self._play(as_move(action), who=PLAYER_NAMES[mover])
        if self.opponent is None:
            reward = 1.0 if state.winner == mover else 0.0
        else:
            if not state.is_over:
                self._opponent_move()
            reward = 0.0 if not state.is_over else (1.0 if state.winner == self._agent else -1.0)
        return self._observation(), reward, state.is_over, False, self._info()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode to the env")
            return None
        state = self._state if self._state is not None else GameState(self.board)
        return render_state(state, self.render_mode)

    # ------------------------------------------------------------------ internals
    def _play(self, move: int | str, *, who: str) -> None:
        """Play ``move`` for the player to move; nothing changes if it is illegal."""
        state = self._state
        try:
            index = state.check_move(move)
        except IllegalMoveError as error:
            raise IllegalMoveError(
                f"illegal action {move!r} by {who} at move {state.move_count + 1}: {error}"
            ) from None
        state.play(index)

    def _opponent_move(self) -> None:
        state = self._state
        mask = state.legal_mask()
        if self.opponent == "random":
            move: int | str = int(random_legal_actions(mask[None], self.np_random)[0])
        else:
            move = as_move(self.opponent(state.copy(), mask.copy()))
        self._play(move, who=f"the opponent ({PLAYER_NAMES[state.to_move]})")

    def _observation(self) -> np.ndarray:
        """[C, H, W] float32 planes, from the agent's view with an opponent."""
        view = self._agent if self.opponent is not None else None
        return encode_state_planes(self._state, view)

    def _info(self) -> dict[str, Any]:
        state = self._state
        last = state.last_action
        info = {
            "action_mask": state.legal_mask(),
            "to_move": int(state.to_move),
            "winner": int(state.winner),
            "move_count": int(state.move_count),
            "last_action": -1 if last is None else int(last),
        }
        if self.opponent is not None:
            info["agent_player"] = int(self._agent)
        return info


def render_state(state: GameState, render_mode: str) -> str | np.ndarray:
    """A picture of a game in a render mode: the last move marked, the winning group shown.

    Args:
        state: the game.
        render_mode: ``"ansi"`` (the text board of `trapy_rl.game.render.render_ascii`) or
            ``"rgb_array"`` (the matplotlib picture of `trapy_rl.game.draw.board_image`).

    Returns:
        A string, or an [h, w, 3] uint8 image.
    """
    if render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be one of {RENDER_MODES}, got {render_mode!r}")
    if render_mode == "ansi":
        return render_state_ascii(state)
    from trapy_rl.game.draw import board_image  # imports matplotlib: only when drawing

    return board_image(
        state.stones,
        state.board,
        last_action=state.last_action,
        winning_cells=state.winning_group() or None,
    )


def as_seed(seed: Any, *, note: str = "") -> int | None:
    """``seed`` as Gymnasium's seeding takes it: None or a Python int (numpy integers too).

    Raises:
        TypeError: for anything else (bools included); ``note`` is added to the message.
    """
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None{note}, got {seed!r}")
    return int(seed)


def as_move(action: Any) -> int | str:
    """An action as an int index or a move name; one-element arrays are unwrapped."""
    if isinstance(action, np.ndarray):
        if action.size != 1:
            raise IllegalMoveError(f"an action is one index, got an array of shape {action.shape}")
        action = action.reshape(()).item()
    if isinstance(action, np.integer):
        return int(action)
    return action


def _check_opponent(opponent: Any) -> str | Opponent | None:
    if (
        opponent is None
        or callable(opponent)
        or (isinstance(opponent, str) and opponent == "random")
    ):
        return opponent
    raise ValueError(
        f"opponent must be None (self-play), 'random' or a callable (state, action_mask) -> "
        f"action, got {opponent!r}"
    )


def _check_agent_player(agent_player: Any, opponent: Any) -> int | str:
    if agent_player not in (BLUE, YELLOW, "random") or isinstance(agent_player, bool):
        raise ValueError(
            f"agent_player must be 1 (blue), 2 (yellow) or 'random', got {agent_player!r}"
        )
    if opponent is None and agent_player != BLUE:
        raise ValueError(
            f"agent_player={agent_player!r} needs an opponent: in self-play (opponent=None) "
            "each step is the move of the player to move"
        )
    return agent_player
