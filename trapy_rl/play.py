"""Play Trap Y against an agent in a terminal: ``trapy-play AGENT_SPEC [options]``.

The board is drawn before each of the person's moves and at the end (in colour where the
output is a terminal and ``NO_COLOR`` is unset); the agent's replies are announced by name.
At the prompt the person types:

    a cell name   such as e3 (case-insensitive)
    swap          as yellow's first move, to take blue's stone (the prompt says when it is legal)
    undo          take back the person's last move and the agent's replies to it
    resign        give up the game
    help          list these commands
    quit          leave at once; an unfinished game is not recorded

Anything else is refused with the reason, on one line, and asked again: unknown or over-long
names, illegal moves, and lines that are not text in the terminal's encoding alike. When the
game ends the result is shown and the game is appended, as one JSON line, to the record file
(by default a new file under ``outputs/games/``), which is checked to be writable before the
game starts. It is a game record (`trapy_rl.eval.records`; the web board's is the same,
`trapy_rl.frontend.human_game.game_record`) with the agent as ``agent_a`` and ``"human"`` as
``agent_b``, plus ``resigned`` (true when the game ended by
resignation; such a record's moves alone do not reach the recorded winner).

`play_game` is the loop, with the input function and output stream as parameters so that a
test can script a game:

>>> import io
>>> from trapy_rl.agents import parse_agent
>>> lines = iter(["a1", "resign"])
>>> state = play_game(parse_agent("random", board=Board(2), seed=0), board=Board(2),
...                   input_fn=lambda prompt: next(lines), output=io.StringIO())
>>> state.winner, state.resigned
(2, True)
"""

from __future__ import annotations

import datetime
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from trapy_rl.agents import Agent, parse_agent
from trapy_rl.agents.moves import checked_move
from trapy_rl.errors import ArgumentParser
from trapy_rl.eval.records import check_record_path, write_records
from trapy_rl.frontend.human_game import game_record, takeback
from trapy_rl.frontend.options import COLOURS, check_side
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.game.render import render_ascii
from trapy_rl.game.state import BLUE, PLAYER_NAMES, YELLOW, GameState, IllegalMoveError, other

__all__ = ["main", "play_game"]

HELP = """\
Commands:
  a cell name  place a stone there, e.g. e3 (column letter, row number from the bottom)
  swap         as yellow's first move: blue's stone becomes yours, and blue moves again
  undo         take back your last move and the agent's reply
  resign       give up the game
  help         show this list
  quit         leave now (an unfinished game is not recorded)
A player wins with a group touching three regions that are not three in a row around the
edge, or four or more regions."""

UNREADABLE = "That line is not text in this terminal's encoding; type a move such as a1, or help."
# Bytes that did not decode, as the surrogateescape error handler passes them on.
_UNDECODED = re.compile("[\udc80-\udcff]")


def use_colour(output: TextIO) -> bool:
    """ANSI colours when ``output`` is a terminal and ``NO_COLOR`` is unset or empty."""
    isatty = getattr(output, "isatty", None)
    return bool(callable(isatty) and isatty() and not os.environ.get("NO_COLOR"))


def _announce(state: GameState, action: int) -> str:
    """'j1', or for the swap 'swap (the stone on j1 is now yellow)'."""
    board = state.board
    if action != board.swap_action:
        return board.action_name(action)
    (cell,) = np.flatnonzero(state.stones)
    return f"swap (the stone on {board.cell_name(int(cell))} is now yellow)"


def _prompt(state: GameState) -> str:
    text = f"move {state.move_count + 1}, {PLAYER_NAMES[state.to_move]} (you)"
    if state.swap_allowed:
        (cell,) = np.flatnonzero(state.stones)
        name = state.board.cell_name(int(cell))
        text += f"; the swap is legal: type swap to take blue's stone on {name}"
    return text + "> "


def play_game(
    agent: Agent,
    *,
    board: Board,
    human: int = BLUE,
    input_fn: Callable[[str], str] = input,
    output: TextIO | None = None,
    colour: bool = False,
) -> GameState:
    """Play one game between a person (through ``input_fn``) and ``agent``.

    Args:
        agent: the opponent.
        board: the board to play on.
        human: the person's player, 1 (blue, moves first) or 2 (yellow).
        input_fn: shows a prompt and returns the person's line (``input`` by default);
            EOFError from it counts as ``quit`` (KeyboardInterrupt, Ctrl-C, is passed on: the
            command exits 130); UnicodeDecodeError, or undecoded bytes passed on as surrogate
            escapes, as a line to type again.
        output: where the board and messages go (sys.stdout by default).
        colour: draw the stones in ANSI colours.

    Returns:
        The final state: over (``winner`` set; ``resigned`` when the person resigned, as the
        agents never do) or, after ``quit``, unfinished.
    """
    if human not in (BLUE, YELLOW):
        raise ValueError(f"human must be 1 (blue) or 2 (yellow), got {human!r}")
    out = output if output is not None else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    def draw(state: GameState) -> None:
        say()
        say(
            render_ascii(
                state.stones,
                state.board,
                last_action=state.last_action,
                winning_cells=state.winning_group(),
                color=colour,
            )
        )

    state = GameState(board)
    you, it = PLAYER_NAMES[human], PLAYER_NAMES[other(human)]
    say(f"You play {you} ({you[0].upper()}), {agent.name} plays {it}. Blue moves first.")
    say("Type a cell name such as a1 to move, or help for the commands.")
    while not state.is_over:
        if state.to_move != human:
            action = checked_move(agent, state)
            text = _announce(state, action)
            state.play(action)
            say(f"{agent.name} ({it}) plays {text}")
            continue
        draw(state)
        while True:  # until the person does something that changes the game
            try:
                line = input_fn(_prompt(state))
            except EOFError:
                line = "quit"
            except UnicodeDecodeError:  # a strict decoder: this line is lost, the game goes on
                say(UNREADABLE)
                continue
            if _UNDECODED.search(line):
                say(UNREADABLE)
                continue
            command = line.strip().lower()
            if not command:
                say("Type a move such as a1, or help.")
            elif command in ("help", "h", "?"):
                say(HELP)
            elif command in ("quit", "exit"):
                say("Game left unfinished.")
                return state
            elif command == "resign":
                state.resign(human)
                break
            elif command == "undo":
                previous = takeback(state, human)
                if previous is None:
                    say("Nothing to undo: you have not moved yet.")
                    continue
                taken = [board.action_name(a) for a in state.history[previous.move_count :]]
                state = previous
                say(f"Took back {', '.join(taken)}.")
                break
            else:
                try:
                    action = state.check_move(line.strip())
                except IllegalMoveError as error:
                    say(f"{error}. Try again (help lists the commands).")
                    continue
                text = _announce(state, action)
                state.play(action)
                say(f"You ({you}) play {text}")
                break
    if state.resigned:
        say(f"You resign. {agent.name} ({it}) wins.")
    else:
        draw(state)
        who = f"You ({you}) win" if state.winner == human else f"{agent.name} ({it}) wins"
        say(f"{who} after {state.move_count} moves.")
    return state


def default_record_path() -> Path:
    """A new file for this game's record: ``outputs/games/play-<date>-<time>.jsonl``."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("outputs") / "games" / f"play-{stamp}.jsonl"


def _set_errors(stream: TextIO, errors: str) -> None:
    """Give ``stream`` the Unicode error handler ``errors``, where it has one to set."""
    reconfigure = getattr(stream, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors=errors)


def main(
    argv: list[str] | None = None,
    *,
    input_fn: Callable[[str], str] = input,
    output: TextIO | None = None,
) -> int:
    """``trapy-play AGENT_SPEC [--side N] [--colour blue|yellow] [--record PATH] [--seed S]``.

    Returns the exit status: 0 after a game (finished or left), 1 if the agent fails, 2 (by
    SystemExit) for bad arguments or a record file that cannot be written.
    """
    parser = ArgumentParser(
        prog="trapy-play", description="Play Trap Y against an agent in the terminal."
    )
    parser.add_argument("agent", metavar="AGENT_SPEC", help="the opponent, e.g. random or uct:200")
    parser.add_argument(
        "--side",
        type=int,
        default=10,
        metavar="N",
        help=f"board side, 2 to {MAX_SIDE} (default 10)",
    )
    parser.add_argument(
        "--colour",
        "--color",
        default="blue",
        type=str.lower,
        choices=sorted(COLOURS),
        help="your colour: blue (moves first, the default) or yellow",
    )
    parser.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="PATH",
        help="append the game record here (default: a new file under outputs/games/)",
    )
    parser.add_argument("--seed", type=int, default=None, metavar="S", help="seed for the agent")
    args = parser.parse_args(argv)
    out = output if output is not None else sys.stdout
    try:
        board = Board(check_side(args.side))
        agent = parse_agent(args.agent, board=board, seed=args.seed)
    except ValueError as error:  # one line with a hint, not the usage: the arguments parsed
        parser.exit(2, f"{parser.prog}: error: {error} ({parser.prog} --help lists the specs)\n")
    path = args.record or default_record_path()
    try:
        check_record_path(path)
    except OSError as error:
        reason = error.strerror or str(error)
        parser.exit(2, f"{parser.prog}: error: cannot write the game record to {path}: {reason}\n")
    human = COLOURS[args.colour]
    # Whatever the locale's error handler: bytes that do not decode reach play_game as
    # surrogate escapes, refused as a bad line, and what the terminal cannot show is escaped.
    if input_fn is input:
        _set_errors(sys.stdin, "surrogateescape")
    if output is None:
        _set_errors(sys.stdout, "backslashreplace")
    try:
        state = play_game(
            agent, board=board, human=human, input_fn=input_fn, output=out, colour=use_colour(out)
        )
    except IllegalMoveError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if state.is_over:
        record = game_record(state, agent_name=agent.name, human=human, seed=args.seed)
        path = write_records([record], path, append=True)
        print(f"Game record saved to {path}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
