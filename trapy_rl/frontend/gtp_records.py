"""Game records from GTP text: the move list ``showboard`` prints, or a session's commands.

`GtpEngine`'s ``showboard`` (so ``trapy-gtp``'s) ends its answer with the game so far on one
line (`trapy_rl.frontend.gtp_engine.history_line`),

    moves (side 10): e5 swap f6, yellow resigned

(``moves (side 10): none`` before the first move), and such a line is a game by itself. Text
without such lines is read as a GTP session (a controller's log, or the commands typed at a
terminal) and replayed as the engine read it: ``boardsize`` and ``clear_board`` start a new
game, ``play`` and ``undo`` change it, and a ``genmove`` followed by its ``= MOVE`` answer plays
that move; answers, comments and other commands are skipped. A move the engine refuses is an
error naming its line and move number, unless the log holds the session's ``?`` answer to it
(then the session refused it too, and it changes nothing, as there); a refused ``boardsize``
or ``undo`` changes nothing. The board is side 10 until a ``boardsize``.

Each game with at least one move becomes a record as `trapy_rl.eval.records` describes, its
players both named ``gtp``; an unfinished game has ``winner`` 0.

>>> [r["moves"] for r in records_from_gtp("boardsize 3\\nplay b b2\\ngenmove y\\n= swap\\n")]
[['b2', 'swap']]
>>> records_from_gtp("moves (side 3): b2 swap, blue resigned")[0]["winner"]
2
"""

from __future__ import annotations

import re

from trapy_rl.eval.records import make_record
from trapy_rl.frontend.gtp_engine import GtpEngine
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState

__all__ = ["records_from_gtp"]

_HISTORY = re.compile(r"moves \(side (\d+)\):(.*)")
_RESIGNED = re.compile(r"(blue|yellow) resigned")
_ANSWER = re.compile(r"=[0-9]*(?: (.*))?")
PLAYER = "gtp"  # both players' name: a GTP text does not say who played


def records_from_gtp(text: str) -> list[dict]:
    """The games of GTP text (``showboard`` move lines, else a session's commands), in order.

    Raises:
        ValueError: naming the line of a move list that is not a legal game, or the line and
            move number of a logged move that the engine refuses and the log does not.
    """
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    histories = [(n, m) for n, line in enumerate(lines, 1) if (m := _HISTORY.fullmatch(line))]
    if histories:
        states = [_history_state(n, match) for n, match in histories]
        # A showboard answer that a later one extends is an earlier view of the same game.
        games = [
            state
            for state, after in zip(states, [*states[1:], None], strict=True)
            if state.history and not (after is not None and _extends(after, state))
        ]
    else:
        games = _replay_session(lines)
    return [_record(state, game) for game, state in enumerate(games)]


def _history_state(number: int, match: re.Match[str]) -> GameState:
    side, rest = int(match.group(1)), match.group(2)
    moves, _, ending = rest.partition(",")
    try:
        state = GameState(Board(side))
        for name in moves.split():
            if name != "none":
                try:
                    state.play(name)
                except ValueError as error:
                    raise ValueError(f"move {state.move_count + 1}: {error}") from None
        if ending.strip():
            resigned = _RESIGNED.fullmatch(ending.strip())
            if resigned is None:
                raise ValueError(f"unknown ending {ending.strip()!r}")
            state.resign(1 if resigned.group(1) == "blue" else 2)
    except ValueError as error:  # an unknown cell or an illegal move
        raise ValueError(f"line {number}: {error}") from None
    return state


def _extends(later: GameState, earlier: GameState) -> bool:
    n = len(earlier.history)
    return later.board.side == earlier.board.side and later.history[:n] == earlier.history


def _replay_session(lines: list[str]) -> list[GameState]:
    engine = GtpEngine("random", seed=0)  # its agent is never asked: genmove comes from answers
    games: list[GameState] = []
    asked: str | None = None  # the colour of a genmove waiting for its answer
    for number, line in enumerate(lines, start=1):
        if line.startswith(("=", "?")):
            answer = _ANSWER.fullmatch(line)
            if asked and answer and answer.group(1):
                _play(engine, f"play {asked} {answer.group(1)}", number, refused_in_log=False)
            asked = None
            continue
        words = line.split()
        if words and words[0].isascii() and words[0].isdigit():  # a command's id
            words = words[1:]
        if not words:
            continue
        command, asked = words[0].lower(), None
        if command == "genmove" and len(words) == 2:
            asked = words[1]
        elif command == "play":
            refused = _next_answer(lines, number).startswith("?")
            _play(engine, " ".join(words), number, refused_in_log=refused)
        elif command in ("boardsize", "clear_board", "undo"):
            before = engine.state
            engine.handle(" ".join(words))
            if command != "undo" and engine.state is not before and before.history:
                games.append(before)  # a new game began
    if engine.state.history:
        games.append(engine.state)
    return games


def _next_answer(lines: list[str], number: int) -> str:
    """The answer to the command on line ``number`` (1-based): the next line that is one, or
    '' when a command or the end comes first."""
    for line in lines[number:]:
        if line.startswith(("=", "?")):
            return line
        if line:
            return ""
    return ""


def _play(engine: GtpEngine, command: str, number: int, *, refused_in_log: bool) -> None:
    """Play a logged move; one the engine refuses is an error naming its line and move number,
    unless the log shows that the session refused it too (its answer is ``?``)."""
    answer = engine.handle(command)
    if answer.startswith("?") and not refused_in_log:
        move = engine.state.move_count + 1
        raise ValueError(f"line {number}: move {move} ({command}) refused: {answer[1:].strip()}")


def _record(state: GameState, game: int) -> dict:
    board = state.board
    record = make_record(
        moves=[board.action_name(a) for a in state.history],
        winner=int(state.winner),
        side=board.side,
        agent_a=PLAYER,
        agent_b=PLAYER,
        a_is_blue=True,
        seed=None,
        game=game,
        resigned=bool(state.resigned),
    )
    if not state.winner:
        record["winner_agent"] = None  # unfinished
    return record
