"""Asking an agent for moves and refusing what the rules do not allow.

An agent's answer is checked before anyone plays it: one integer action per game asked about,
each legal in its game. A wrong answer raises `IllegalMoveError` (a ValueError) with a
one-line message naming the agent and the move, so that a faulty agent is found where it
fails, not moves later. Matches (`trapy_rl.eval.arena`) ask for many games at once with
`checked_actions`; a game against a person (`trapy_rl.play`, `trapy_rl.web.sessions`) and the
GTP engine (`trapy_rl.frontend.gtp_engine`) ask for one position with `checked_move`.

Shapes: B games, A actions, n games asked about.

>>> from trapy_rl.agents import RandomAgent
>>> from trapy_rl.game import Board, GameState
>>> state = GameState.from_moves(["a1"], Board(3))
>>> bool(state.legal_mask()[checked_move(RandomAgent(seed=0), state)])
True
"""

from __future__ import annotations

import numpy as np

from trapy_rl.agents.base import Agent, reset_agent
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState, IllegalMoveError

__all__ = ["checked_actions", "checked_move"]


def checked_actions(
    agent: Agent, batch: BatchGame, games: np.ndarray, *, legal: np.ndarray | None = None
) -> np.ndarray:
    """The agent's actions for ``games``, checked for shape and legality.

    Args:
        agent: asked once, with ``agent.act(batch, games)``.
        batch: the games; not modified.
        games: [n] int, indices of unfinished games of ``batch``.
        legal: [B, A] bool, ``batch.legal_mask()`` when the caller has it already.

    Returns:
        [n] int actions, one per game of ``games``, each legal.

    Raises:
        IllegalMoveError: naming the agent, if it returns anything but [n] integers, or
            naming the agent, the first illegal move and its move number, and, when the batch
            holds more than one game, the move's game and how many of the actions are illegal.
    """
    games = np.asarray(games)
    actions = _ask(agent, batch, games)
    bad = ~_legal(actions, batch, games, legal)
    if bad.any():
        game, action = int(games[bad][0]), int(actions[bad][0])
        where = f" in game {game}" if batch.num_games > 1 else ""
        count = f"; {int(bad.sum())} illegal in all" if batch.num_games > 1 else ""
        raise IllegalMoveError(
            f"agent {agent.name!r} played illegal move {_move_name(batch.board, action)!r}"
            f"{where} (move {int(batch.move_count[game]) + 1}){count}"
        )
    return actions


def checked_move(agent: Agent, state: GameState) -> int:
    """The agent's action in one position, checked for legality.

    The agent is reset for the position first (``reset(games)`` where it has one), as a
    takeback or an undo may have changed the position in any way since its last move.

    Args:
        agent: the player to ask.
        state: the position; not modified.

    Returns:
        A legal action of ``state`` (``state.board.swap_action`` is the swap).

    Raises:
        IllegalMoveError: naming the agent, if it returns anything but one integer action,
            or naming the agent, the move and its move number, if the action is illegal
            (`checked_actions` on a batch of this one position).
    """
    batch = BatchGame.from_states([state])
    games = np.zeros(1, dtype=np.intp)
    reset_agent(agent, games)
    return int(checked_actions(agent, batch, games)[0])


def _ask(agent: Agent, batch: BatchGame, games: np.ndarray) -> np.ndarray:
    """``agent.act(batch, games)`` as an array, refused unless it holds [n] integers."""
    actions = np.asarray(agent.act(batch, games))
    if actions.shape != games.shape or not np.issubdtype(actions.dtype, np.integer):
        n = len(games)
        raise IllegalMoveError(
            f"agent {agent.name!r} returned {actions.dtype} actions of shape {actions.shape} "
            f"for {n} game{'s' * (n != 1)}, not one action per game ([{n}] integers)"
        )
    return actions


def _legal(
    actions: np.ndarray, batch: BatchGame, games: np.ndarray, legal: np.ndarray | None
) -> np.ndarray:
    """[n] bool: whether each action is in range and legal in its game."""
    legal = batch.legal_mask() if legal is None else legal
    in_range = (actions >= 0) & (actions < batch.board.num_actions)
    return in_range & legal[games, np.where(in_range, actions, 0)]


def _move_name(board: Board, action: int) -> str | int:
    """The move's name, or the number itself when it is no action at all."""
    return board.action_name(action) if 0 <= action < board.num_actions else action
