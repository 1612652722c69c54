"""The native vector environment: N games of Trap Y in one `BatchGame`, stepped together.

Each step is a handful of numpy operations over all N games (no Python loop over games): the
agents' moves, the autoresets, the opponents' replies, the planes and the infos. Every single
game behaves as `TrapYEnv` with the same arguments; the tests check it move by move.

Shapes: N environments, K cells, A = K + 1 actions, C planes, H x W grid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from trapy_rl.envs.spaces import BatchedLegalActions
from trapy_rl.envs.trap_y_env import RENDER_MODES, TrapYEnv, as_seed, render_state
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.planes import encode_planes
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.game.state import BLUE, YELLOW

__all__ = ["BatchOpponent", "TrapYVectorEnv"]

BatchOpponent = Callable[[BatchGame, np.ndarray], np.ndarray]
"""A callable opponent for all games at once: ``(batch, action_mask) -> actions``.

``batch`` is a copy of the N games, ``action_mask`` their [N, A] bool legal actions; it returns
[N] int actions, of which only those of the games where the opponent is to move are played.
"""


class TrapYVectorEnv(VectorEnv):
    """N games of Trap Y as one native `gymnasium.vector.VectorEnv` on a single `BatchGame`.

    The game, actions, observations, rewards and arguments are those of `TrapYEnv`, batched:
    observations [N, C, H, W] float32, actions [N] int, rewards [N] float64, terminations and
    truncations [N] bool (truncations always False), and ``infos`` a dict of arrays:
    ``action_mask`` [N, A] bool, ``to_move`` [N] int8, ``winner`` [N] int8, ``move_count``
    [N] int16, ``last_action`` [N] int16 (-1 before the first move), and with an opponent
    ``agent_player`` [N] int8.

    Autoreset follows ``AutoresetMode.NEXT_STEP`` (``metadata["autoreset_mode"]``): the step
    that ends a game returns its final observation with ``terminated`` True; the next step
    ignores that env's action, starts a new game there and returns its first observation with
    reward 0 and ``terminated`` False. In a finished game's row ``action_mask`` is all False.

    ``reset(options={"reset_mask": mask})`` restarts only the games where the [N] bool mask is
    True. ``action_space.sample()`` draws a legal action per game (see
    `trapy_rl.envs.spaces.BatchedLegalActions`).

    Args:
        num_envs: N, the number of games.
        side: the board's side (10 is Trap Y).
        opponent: None (self-play: each step is the move of each game's player to move),
            ``"random"`` (batched: the swap with probability 1/2 where legal, otherwise a
            uniform legal cell, from the env's seeded ``np_random``), or a `BatchOpponent`
            ``(batch: BatchGame, action_mask: [N, A] bool) -> [N] int``.
        agent_player: the agents' colour with an opponent: 1, 2, or ``"random"`` (drawn per
            game at every reset).
        render_mode: None, ``"ansi"`` or ``"rgb_array"``; ``render()`` returns a tuple of N
            frames.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "render_fps": 2,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        side: int = 10,
        opponent: str | BatchOpponent | None = None,
        agent_player: int | str = 1,
        render_mode: str | None = None,
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        # The single env validates the shared arguments with the same messages.
        template = TrapYEnv(
            side=side, opponent=opponent, agent_player=agent_player, render_mode=render_mode
        )
        self.num_envs = int(num_envs)
        self.board: Board = template.board
        self.opponent = template.opponent
        self.agent_player = template.agent_player
        self.render_mode = render_mode

        self.single_observation_space = template.observation_space
        self.single_action_space = spaces.Discrete(self.board.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = BatchedLegalActions(
            self.board.num_actions, self.num_envs, self._legal_mask_or_none
        )

        self.batch = BatchGame(self.num_envs, self.board)
        self._agent = np.full(self.num_envs, BLUE, dtype=np.int8)  # [N] the agents' colours
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)  # [N] ended on the last step
        self._started = False

    def _legal_mask_or_none(self) -> np.ndarray | None:
        return self.batch.legal_mask() if self._started else None

    # ------------------------------------------------------------------ the Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=as_seed(seed, note=" (one generator drives all games)"))
        options = dict(options or {})
        reset_mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; only 'reset_mask' is known")
        if reset_mask is None:
            games = np.ones(self.num_envs, dtype=bool)
        else:
            games = np.asarray(reset_mask)
            if games.shape != (self.num_envs,) or games.dtype != bool:
                raise ValueError(
                    f"reset_mask must be a [{self.num_envs}] bool array, got {games.dtype} "
                    f"of shape {games.shape}"
                )
            if not self._started and not games.all():
                raise ValueError("the first reset must reset every game (no reset_mask)")
        self._started = True
        self._start_games(games)
        self._opponent_moves()
        self._needs_reset &= ~games
        return self._observations(), self._infos()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise ResetNeeded("step() before reset(): call reset() to start the games")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got "
                f"{actions.dtype} of shape {actions.shape}"
            )
        batch = self.batch
        resetting = self._needs_reset
        # The finished games are exactly those being reset, and BatchGame.step leaves finished
        # games alone, so this moves every other game; an illegal action raises before any
        # game changes.
        ended = batch.step(actions)
        self._start_games(resetting)
        if self.opponent is None:
            rewards = ended.astype(np.float64)  # only the mover can win by a move
        else:
            self._opponent_moves()  # replies, and first moves where a new game has it
            ended = (batch.winner != 0) & ~resetting
            rewards = np.where(ended, np.where(batch.winner == self._agent, 1.0, -1.0), 0.0)
        terminated = ended
        self._needs_reset = terminated.copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._observations(), rewards, terminated, truncated, self._infos()

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(
            render_state(self.batch.to_state(game), self.render_mode)
            for game in range(self.num_envs)
        )

    # ------------------------------------------------------------------ internals
    def _start_games(self, games: np.ndarray) -> None:
        """New games where ``games`` ([N] bool), with the agents' colours drawn if random."""
        if not games.any():
            return
        self.batch.reset(games)
        if self.opponent is None:
            return
        if self.agent_player == "random":
            colours = self.np_random.integers(BLUE, YELLOW + 1, size=self.num_envs, dtype=np.int8)
            self._agent[games] = colours[games]
        else:
            self._agent[games] = self.agent_player

    def _opponent_moves(self) -> None:
        """The opponent replies in every game not over where it is to move."""
        if self.opponent is None:
            return
        batch = self.batch
        replying = (batch.winner == 0) & (batch.to_move != self._agent)
        if not replying.any():
            return
        mask = batch.legal_mask()
        if self.opponent == "random":
            actions = random_legal_actions(mask, self.np_random)
        else:
            actions = np.asarray(self.opponent(batch.copy(), mask.copy()))
            if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
                raise ValueError(
                    f"the opponent must return an integer array of shape ({self.num_envs},), "
                    f"got {actions.dtype} of shape {actions.shape}"
                )
        batch.step(actions, games=replying)

    def _observations(self) -> np.ndarray:
        """[N, C, H, W] float32, from the agents' view with an opponent."""
        planes = encode_planes(self.batch)
        if self.opponent is not None:
            flip = np.flatnonzero(self.batch.to_move != self._agent)
            if len(flip):
                planes[flip[:, None], [0, 1]] = planes[flip[:, None], [1, 0]]
        return planes

    def _infos(self) -> dict[str, Any]:
        batch = self.batch
        infos = {
            "action_mask": batch.legal_mask(),
            "to_move": batch.to_move.copy(),
            "winner": batch.winner.copy(),
            "move_count": batch.move_count.copy(),
            "last_action": batch.last_action.astype(np.int16),
        }
        if self.opponent is not None:
            infos["agent_player"] = self._agent.copy()
        return infos
