"""A game between a person and an agent: who made each move (`movers`; the swap changes the
order), taking back the person's last move with the agent's replies to it (`takeback`), and
the finished game's record (`game_record`), in which the person is `HUMAN`. The terminal
player (`trapy_rl.play`) uses `takeback` and `game_record`; the web board
(`trapy_rl.web.sessions`) takes back moves with `takeback` and names the person `HUMAN`, but
writes its records itself, since its games are trees and may be unfinished.

>>> from trapy_rl.game import Board, GameState
>>> state = GameState.from_moves(["a1", "swap", "b2"], Board(3))  # blue, yellow, blue again
>>> movers(state)
[1, 2, 1]
>>> takeback(state, 2).move_names()  # before yellow's swap
['a1']
"""

from __future__ import annotations

from trapy_rl.eval.records import make_record
from trapy_rl.game.state import BLUE, GameState

__all__ = ["HUMAN", "game_record", "movers", "takeback"]

HUMAN = "human"
"""The person's name in game records."""


def movers(state: GameState) -> list[int]:
    """The player who made each move of ``state.history`` (the swap changes the order)."""
    replay = GameState(state.board)
    players = []
    for action in state.history:
        players.append(replay.to_move)
        replay.play(action)
    return players


def takeback(state: GameState, player: int) -> GameState | None:
    """The position before ``player``'s last move (so taking back every later move too).

    Returns None when ``player`` has not moved. A resignation is not a move: the position
    returned is never resigned.
    """
    made_by = movers(state)
    mine = [ply for ply, mover in enumerate(made_by) if mover == player]
    if not mine:
        return None
    return GameState.from_moves(state.history[: mine[-1]], state.board)


def game_record(state: GameState, *, agent_name: str, human: int, seed: int | None) -> dict:
    """The game record of a finished game against a person (see `trapy_rl.eval.records`).

    Args:
        state: the game, over.
        agent_name: the agent's name, recorded as agent a; the person is agent b, `HUMAN`.
        human: the person's player, 1 (blue) or 2 (yellow).
        seed: the agent's seed, as recorded.

    Raises:
        ValueError: if the game is not over.
    """
    if not state.is_over:
        raise ValueError("only a finished game has a record")
    return make_record(
        moves=state.move_names(),
        winner=state.winner,
        side=state.board.side,
        agent_a=agent_name,
        agent_b=HUMAN,
        a_is_blue=human != BLUE,
        seed=seed,
        resigned=state.resigned,
    )
