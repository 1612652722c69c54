"""The Go Text Protocol engine for Trap Y: `GtpEngine` answers one command line at a time,
playing with any agent built from a spec string.

``trapy-gtp`` (`trapy_rl.gtp`) serves it on stdin and stdout to a controller (HexGui, a
tournament script, a person at a terminal), and `trapy_rl.frontend.gtp_records` replays logged
sessions through it. The protocol is GTP version 2 as Hex programs use it, with Trap Y cell
names:

    request:   [id] command [arguments]        e.g.  "7 play b j1"
    success:   =[id] result, then a blank line  e.g.  "=7 \\n\\n"
    failure:   ?[id] message, then a blank line e.g.  "?7 j1: the cell is occupied by blue\\n\\n"

Input is preprocessed as GTP 2 (section 3.1) asks: control characters other than tab and
newline are dropped, everything after ``#`` is a comment, and tabs become spaces. Words are
separated by spaces only (GTP's whitespace is space and tab; other Unicode spaces are parts of
words). A line with no word left gets no response, however long it was; every other line gets
exactly one. Nothing a client sends ends the engine except ``quit`` and the end of input:
unknown commands, missing or extra arguments, illegal moves, undecodable bytes and over-long
lines all get a ``?`` response.

Commands:

    protocol_version, name, version, known_command NAME, list_commands
    quit              answers ``=`` and ends the engine; as GTP says it never fails, extra
                      arguments do not stop it, and the answer names them as ignored
    boardsize N       the board's side (``boardsize N N`` with equal sizes is accepted too); the
                      agent is rebuilt for the new side and must support it, so a network
                      trained on side 10 refuses ``boardsize 9``; clears the board
    clear_board       a new game on the current board
    play C MOVE       C is b, blue, y or yellow; MOVE is a cell name, ``swap`` or ``resign``
    genmove C         the agent moves for C and answers the move (a cell name or ``swap``)
    undo              takes back the last move (or the last resignation)
    showboard         the ASCII board, a multi-line result starting on the line after ``=``,
                      then who is to move and the game so far, ``moves (side 10): e5 swap``
                      (`history_line`; `trapy_rl.frontend.gtp_records` reads it back)
    final_score       ``B+`` or ``Y+`` once the game is over

Decisions where Hex practice leaves room:

- Turn order is enforced. The swap rule depends on who moves when, so ``play`` and ``genmove``
  for the colour that is not to move are errors that name whose turn it is. Resigning is not a
  move on the board: ``play C resign`` is accepted for either colour at any time before the end.
- ``final_score`` is an error while the game goes on: Trap Y has no draws, so ``0`` would claim
  a result that cannot happen, and there is no score before the end.
- ``pass`` is not a Trap Y move and is refused with that reason.
- The agents in the project never resign, so ``genmove`` answers a cell name or ``swap``.
- Colours and command names are read case-insensitively.

>>> engine = GtpEngine("random", side=3, seed=0)
>>> engine.handle("1 play b b2")
'=1 \\n\\n'
>>> engine.handle("play b a1")
"? it is yellow's turn (move 2), not blue's\\n\\n"
>>> engine.handle("final_score")
'? the game is not over: yellow to move (move 2), swap allowed\\n\\n'
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from trapy_rl import __version__
from trapy_rl.agents import Agent, parse_agent, reset_agent
from trapy_rl.agents.moves import checked_move
from trapy_rl.frontend.options import COLOURS, check_side
from trapy_rl.game.board import MAX_SIDE, Board, quote
from trapy_rl.game.render import render_ascii
from trapy_rl.game.state import BLUE, PLAYER_NAMES, GameState, IllegalMoveError

__all__ = [
    "MAX_LINE",
    "PROTOCOL_VERSION",
    "GtpEngine",
    "GtpError",
    "describe",
    "history_line",
    "preprocess",
]

PROTOCOL_VERSION = 2
MAX_LINE = 4096
"""Longest accepted command, in characters: its words after GTP's preprocessing, one space
apart (comments, control characters and runs of spaces do not count)."""

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # GTP's control characters but HT
_ID = re.compile("[0-9]+")


class GtpError(Exception):
    """A command that cannot be carried out; the message becomes the ``?`` response."""


def preprocess(line: str) -> str:
    """GTP's preprocessing of the first line of ``line``: control characters other than HT
    removed, the comment from ``#`` on cut, HT made a space."""
    return _CONTROL.sub("", line.split("\n", 1)[0]).split("#", 1)[0].replace("\t", " ")


def _parse_colour(text: str) -> int:
    player = COLOURS.get(text.lower())
    if player is None:
        raise GtpError(f"unknown colour {quote(text)}: expected b, blue, y or yellow")
    return player


class GtpEngine:
    """The GTP state machine: one game, one agent, one response per command line.

    Args:
        agent_spec: the agent, as for `trapy_rl.agents.parse_agent` ('random', 'uct:200', ...).
        side: the initial board side.
        seed: seeds the agent (again, identically, whenever ``boardsize`` rebuilds it).

    Raises:
        ValueError: for a bad spec, an unsupported side, or a side outside 2..`MAX_SIDE`.

    Attributes:
        agent: the agent that answers ``genmove``.
        state: the current game.
        quit_requested: True once ``quit`` has been answered.
    """

    def __init__(self, agent_spec: str, *, side: int = 10, seed: int | None = None) -> None:
        self.agent_spec = agent_spec
        self.seed = seed
        board = Board(check_side(side))
        self.agent: Agent = parse_agent(agent_spec, board=board, seed=seed)
        self.state = GameState(board)
        self.quit_requested = False
        self._commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": self._protocol_version,
            "name": self._name,
            "version": self._version,
            "known_command": self._known_command,
            "list_commands": self._list_commands,
            "boardsize": self._boardsize,
            "clear_board": self._clear_board,
            "play": self._play,
            "genmove": self._genmove,
            "undo": self._undo,
            "showboard": self._showboard,
            "final_score": self._final_score,
            "quit": self._quit,
        }

    @property
    def board(self) -> Board:
        return self.state.board

    # ------------------------------------------------------------------ protocol
    def handle(self, line: str) -> str:
        """The full response to one command line (ending in a blank line), or '' for none.

        Only the first line of ``line`` is read. Never raises for any input: every failure
        becomes a ``?`` response.
        """
        words = [word for word in preprocess(line).split(" ") if word]
        if not words:  # empty, blank or a comment: no response, whatever the length
            return ""
        too_long = sum(len(word) + 1 for word in words) - 1 > MAX_LINE
        ident = ""
        # An id longer than a whole command cannot be one (a stream keeps only its start).
        if len(words[0]) <= MAX_LINE and _ID.fullmatch(words[0]):
            ident, words = words[0], words[1:]
        if too_long:
            return f"?{ident} line too long (more than {MAX_LINE} characters); ignored\n\n"
        if not words:
            return f"?{ident} missing command after the id\n\n"
        command, args = words[0].lower(), words[1:]
        handler = self._commands.get(command)
        try:
            if handler is None:
                raise GtpError(f"unknown command {quote(words[0])}")
            result = handler(args)
        except GtpError as error:
            return _response("?", ident, str(error))
        except Exception as error:  # an agent or engine fault must not end the engine
            return _response("?", ident, f"internal error: {type(error).__name__}: {error}")
        return _response("=", ident, result)

    def _args(self, args: list[str], usage: str, low: int, high: int | None = None) -> None:
        high = low if high is None else high
        if not low <= len(args) <= high:
            wanted = f"{low}" if low == high else f"{low} to {high}"
            raise GtpError(
                f"{usage.split()[0]} takes {wanted} argument{'s' * (high != 1)}, "
                f"got {len(args)}: usage {usage}"
            )

    # ------------------------------------------------------------------ administrative
    def _protocol_version(self, args: list[str]) -> str:
        self._args(args, "protocol_version", 0)
        return str(PROTOCOL_VERSION)

    def _name(self, args: list[str]) -> str:
        self._args(args, "name", 0)
        return "trapy_rl"

    def _version(self, args: list[str]) -> str:
        self._args(args, "version", 0)
        return f"{__version__} ({self.agent.name})"

    def _known_command(self, args: list[str]) -> str:
        self._args(args, "known_command NAME", 1)
        return "true" if args[0].lower() in self._commands else "false"

    def _list_commands(self, args: list[str]) -> str:
        self._args(args, "list_commands", 0)
        return "\n".join(self._commands)

    def _quit(self, args: list[str]) -> str:
        self.quit_requested = True
        # GTP: quit never fails; the extra words are answered as ignored, not dropped unseen.
        return f"ignored extra arguments: {quote(' '.join(args))}" if args else ""

    # ------------------------------------------------------------------ setup
    def _boardsize(self, args: list[str]) -> str:
        self._args(args, "boardsize N", 1, 2)
        if len(args) == 2 and args[0] != args[1]:
            raise GtpError(
                f"unacceptable size {args[0]} x {args[1]}: a Trap Y board has one size, its side"
            )
        if not re.fullmatch(r"[0-9]+", args[0]):
            raise GtpError(f"boardsize: {quote(args[0])} is not a whole number")
        side = int(args[0])
        if not 2 <= side <= MAX_SIDE:
            raise GtpError(f"unacceptable size {side}: the side must be 2 to {MAX_SIDE}")
        if side != self.board.side:
            try:
                agent = parse_agent(self.agent_spec, board=Board(side), seed=self.seed)
            except ValueError as error:
                raise GtpError(f"unacceptable size {side}: {error}") from None
            self.agent = agent
        self._new_game(Board(side))
        return ""

    def _clear_board(self, args: list[str]) -> str:
        self._args(args, "clear_board", 0)
        self._new_game(self.board)
        return ""

    def _new_game(self, board: Board) -> None:
        self.state = GameState(board)
        reset_agent(self.agent, np.zeros(1, dtype=np.intp))

    # ------------------------------------------------------------------ moves
    def _check_turn(self, player: int) -> None:
        state = self.state
        if state.is_over:
            raise GtpError(f"the game is over: {describe(state)}")
        if player != state.to_move:
            raise GtpError(
                f"it is {PLAYER_NAMES[state.to_move]}'s turn (move {state.move_count + 1}), "
                f"not {PLAYER_NAMES[player]}'s"
            )

    def _play(self, args: list[str]) -> str:
        self._args(args, "play COLOUR MOVE", 2)
        player, move = _parse_colour(args[0]), args[1].lower()
        if move == "pass":
            raise GtpError("pass: there is no passing in Trap Y (play a cell, or resign)")
        if move == "resign":  # either colour, at any time before the end
            if self.state.is_over:
                raise GtpError(f"the game is over: {describe(self.state)}")
            self.state.resign(player)
            return ""
        self._check_turn(player)
        try:
            self.state.play(args[1])
        except IllegalMoveError as error:
            raise GtpError(str(error)) from None
        return ""

    def _genmove(self, args: list[str]) -> str:
        self._args(args, "genmove COLOUR", 1)
        player = _parse_colour(args[0])
        self._check_turn(player)
        try:
            action = checked_move(self.agent, self.state)
        except IllegalMoveError as error:  # a wrong answer, refused
            raise GtpError(str(error)) from None
        except Exception as error:
            raise GtpError(
                f"agent {self.agent.name!r} failed: {type(error).__name__}: {error}"
            ) from None
        self.state.play(action)
        return self.board.action_name(action)

    def _undo(self, args: list[str]) -> str:
        self._args(args, "undo", 0)
        state = self.state
        if state.resigned:
            self.state = GameState.from_moves(state.history, state.board)
        elif state.history:
            self.state = GameState.from_moves(state.history[:-1], state.board)
        else:
            raise GtpError("cannot undo: no moves have been played")
        reset_agent(self.agent, np.zeros(1, dtype=np.intp))
        return ""

    # ------------------------------------------------------------------ display
    def _showboard(self, args: list[str]) -> str:
        self._args(args, "showboard", 0)
        state = self.state
        picture = render_ascii(
            state.stones,
            state.board,
            last_action=state.last_action,
            winning_cells=state.winning_group(),
        )
        return f"\n{picture}\n{describe(state)}\n{history_line(state)}"

    def _final_score(self, args: list[str]) -> str:
        self._args(args, "final_score", 0)
        if not self.state.is_over:
            raise GtpError(f"the game is not over: {describe(self.state)}")
        return "B+" if self.state.winner == BLUE else "Y+"


def describe(state: GameState) -> str:
    """One line on the game's progress: who is to move, whether the swap is legal, who won."""
    if state.is_over:
        how = "by resignation" if state.resigned else f"in {state.move_count} moves"
        return f"{PLAYER_NAMES[state.winner]} won {how}"
    text = f"{PLAYER_NAMES[state.to_move]} to move (move {state.move_count + 1})"
    return text + (", swap allowed" if state.swap_allowed else "")


def history_line(state: GameState) -> str:
    """The game so far on one line, as ``showboard`` ends its answer.

    ``moves (side 10): e5 swap f6, yellow resigned``, or ``moves (side 10): none`` before the
    first move; `trapy_rl.frontend.gtp_records` reads such a line back as a game.
    """
    board = state.board
    moves = " ".join(board.action_name(a) for a in state.history) or "none"
    line = f"moves (side {board.side}): {moves}"
    if state.resigned:
        line += f", {PLAYER_NAMES[3 - state.winner]} resigned"
    return line


def _response(kind: str, ident: str, body: str) -> str:
    if kind == "?":
        body = " ".join(body.split("\n"))  # an error message is one line
    # A blank line ends a response, so a multi-line result must not contain one.
    lines = body.split("\n")
    body = "\n".join([lines[0]] + [line if line.strip() else "." for line in lines[1:]])
    return f"{kind}{ident} {body}\n\n"
