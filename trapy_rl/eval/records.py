"""Game records: one JSON object per finished game, one game per line of a JSON-lines file.

    {"game": 0, "seed": 7, "side": 10, "agent_a": "uct:200", "agent_b": "random",
     "blue": "a", "blue_agent": "uct:200", "yellow_agent": "random", "openings": 0,
     "moves": ["j1", "swap", ...], "winner": 1, "winner_agent": "a", "length": 81}

Fields:

    game          the game's index in its match (0 for a single game)
    seed          the seed the agents were made with (null: fresh entropy)
    side          the board side
    agent_a/b     the two players' names; ``blue`` says which of them ("a" or "b") played blue,
                  ``blue_agent`` and ``yellow_agent`` name them again by colour
    openings      random stones the game started from (records of `play_match` only)
    moves         the moves in order, by name (``swap`` for the swap)
    winner        the winning player, 1 blue or 2 yellow; ``winner_agent`` is "a" or "b"
    length        the number of moves (the swap counts as a move)
    resigned      true when the loser resigned, so that the moves alone do not reach the
                  recorded winner (records of ``trapy-play`` only)

Matches (`trapy_rl.eval.arena.play_match`) and ``trapy-play``'s games against a person
(`trapy_rl.frontend.human_game.game_record`) write them, the web board its own games;
`load_records` reads them back from a file (`parse_records` from text, as the web board
receives them) and `replay_record` replays one to its final `GameState`, checking the recorded
winner.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, PLAYER_NAMES, GameState

__all__ = [
    "check_record_path",
    "load_records",
    "make_record",
    "match_records",
    "parse_records",
    "replay_record",
    "write_records",
]

REQUIRED = ("moves", "winner", "side")
"""The fields `load_records` insists on: enough to replay a game."""


def make_record(
    *,
    moves: Sequence[str],
    winner: int,
    side: int,
    agent_a: str,
    agent_b: str,
    a_is_blue: bool,
    seed: int | None,
    game: int = 0,
    openings: int | None = None,
    resigned: bool | None = None,
) -> dict:
    """The record of one finished game (see the module docstring for the fields).

    Args:
        moves: the moves by name, in order.
        winner: the winning player, 1 (blue) or 2 (yellow).
        side: the board side.
        agent_a, agent_b: the players' names.
        a_is_blue: whether agent a played blue.
        seed: the seed the agents were made with, as recorded.
        game: the game's index in its match.
        openings: random opening stones, recorded when given.
        resigned: whether the game ended by resignation, recorded when given.
    """
    blue, yellow = ("a", "b") if a_is_blue else ("b", "a")
    names = {"a": agent_a, "b": agent_b}
    record = {
        "game": int(game),
        "seed": seed,
        "side": int(side),
        "agent_a": agent_a,
        "agent_b": agent_b,
        "blue": blue,
        "blue_agent": names[blue],
        "yellow_agent": names[yellow],
    }
    if openings is not None:
        record["openings"] = int(openings)
    record["moves"] = list(moves)
    record["winner"] = int(winner)
    record["winner_agent"] = blue if winner == BLUE else yellow
    record["length"] = len(moves)
    if resigned is not None:
        record["resigned"] = bool(resigned)
    return record


def match_records(
    batch: BatchGame,
    *,
    agent_a: str,
    agent_b: str,
    a_is_blue: np.ndarray,
    seed: int | None,
    openings: int,
) -> list[dict]:
    """The records of every game of a finished match, in game order.

    Args:
        batch: the match's games, all over.
        agent_a, agent_b: the players' names.
        a_is_blue: [B] bool, whether agent a played blue in each game.
        seed: the match seed, as recorded.
        openings: random stones each game started from.
    """
    board = batch.board
    records = []
    for game in range(batch.num_games):
        moves = batch.history[game, : batch.move_count[game]]
        records.append(
            make_record(
                moves=[board.action_name(int(move)) for move in moves],
                winner=int(batch.winner[game]),
                side=board.side,
                agent_a=agent_a,
                agent_b=agent_b,
                a_is_blue=bool(a_is_blue[game]),
                seed=seed,
                game=game,
                openings=openings,
            )
        )
    return records


def write_records(records: Iterable[dict], path: str | Path, *, append: bool = False) -> Path:
    """Write ``records`` to ``path``, one JSON line each, creating its folder.

    Args:
        records: game records (see `make_record`).
        path: the JSON-lines file.
        append: add to the file instead of overwriting it.

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return path


def check_record_path(path: str | Path) -> Path:
    """Check now that `write_records` can append to ``path``, leaving nothing behind.

    Makes the folder and opens the file for appending, then removes what it made: a game whose
    record cannot be written is refused before it is played, not lost at its end.

    Raises:
        OSError: when the folder cannot be made or the file cannot be opened for appending.
    """
    path = Path(path)
    made = [p for p in (path, *path.parents) if not p.exists()]  # the deepest first
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    finally:
        for made_path in made:
            with contextlib.suppress(OSError):
                if made_path == path:
                    made_path.unlink()
                else:
                    made_path.rmdir()
    return path


def load_records(path: str | Path) -> list[dict]:
    """The game records of a JSON-lines file, in order (blank lines skipped).

    Raises:
        ValueError: naming the file and line of a line that is not a game record.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as lines:
        return parse_records(lines, source=str(path))


def parse_records(lines: Iterable[str], *, source: str) -> list[dict]:
    """The game records of JSON lines, in order (blank lines skipped).

    Args:
        lines: the text's lines (a file, or ``text.splitlines()``).
        source: where they came from, for the error messages (a file name).

    Raises:
        ValueError: naming ``source`` and the line of a line that is not a game record.
    """
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}:{number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{source}:{number}: not a game record (not a JSON object)")
        missing = [key for key in REQUIRED if key not in record]
        if missing:
            raise ValueError(f"{source}:{number}: not a game record (missing {missing})")
        records.append(record)
    return records


def replay_record(record: dict, board: Board) -> GameState:
    """Replay a record's moves on ``board`` to the final position (with a resignation, if any).

    Raises:
        ValueError: if the record lacks a field of `REQUIRED`, is for another board size, a
            move is illegal, or the replayed winner differs from the recorded one.
    """
    if record.get("side", board.side) != board.side:
        raise ValueError(
            f"record of game {record.get('game')} is for side {record['side']}, "
            f"not side {board.side}"
        )
    missing = [key for key in REQUIRED if key not in record]
    if missing:  # a record built by hand, not read by parse_records
        raise ValueError(f"record of game {record.get('game')}: missing field {missing[0]!r}")
    if not isinstance(record.get("moves"), list):
        raise ValueError(f"record of game {record.get('game')}: moves must be a list of names")
    state = GameState.from_moves(record["moves"], board)
    if record.get("resigned") and not state.is_over and record["winner"] in (1, 2):
        state.resign(3 - record["winner"])  # the loser resigned after the last move
    if state.winner != record["winner"]:
        recorded = PLAYER_NAMES.get(record["winner"], record["winner"])
        replayed = PLAYER_NAMES.get(state.winner, "nobody")
        raise ValueError(
            f"record of game {record.get('game')}: recorded winner {recorded}, "
            f"but the moves give {replayed}"
        )
    return state
