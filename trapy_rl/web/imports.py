"""Game files read into game trees for the web board: ``trapy-play`` and ``trapy-eval`` JSON
records, GTP text (`trapy_rl.frontend.gtp_records`) and SGF (`trapy_rl.web.sgf`).

Every move is checked as it is read: an illegal one refuses the file with its game and move
number, never skipped. A record's recorded winner must be the one its moves give (or 0, an
unfinished game).

>>> (game,) = read_game_file('{"side": 3, "moves": ["b2", "swap"], "winner": 0}')
>>> game["label"], game["tree"]["moves"]
('game 0: human (blue) v human (yellow), unfinished after 2 moves', [None, 'b2', 'swap'])
"""

from __future__ import annotations

import json
from typing import Any

from trapy_rl.errors import one_line
from trapy_rl.eval.records import REQUIRED, parse_records, replay_record
from trapy_rl.frontend.gtp_records import records_from_gtp
from trapy_rl.frontend.human_game import HUMAN
from trapy_rl.game.board import Board
from trapy_rl.game.state import PLAYER_NAMES
from trapy_rl.web.sgf import SGF_START, trees_from_sgf
from trapy_rl.web.tree import ROOT, GameTree

__all__ = ["MAX_GAMES", "read_game_file", "tree_from_record"]

MAX_GAMES = 1000
"""Games listed from one file."""


def tree_from_record(record: dict[str, Any]) -> tuple[GameTree, tuple[str, str, bool]]:
    """The game tree of a JSON record (one line, its resignation included) and its players'
    names (agent_a, agent_b, a_is_blue).

    Raises:
        ValueError: naming the missing field, the illegal move and its number, or the recorded
            winner that the moves do not give.
    """
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise ValueError(f"the record has no field {missing[0]!r}")
    side = record["side"]
    if isinstance(side, bool) or not isinstance(side, int):
        raise ValueError(f"the record's side must be an integer, got {side!r}")
    if not isinstance(record["moves"], list):
        raise ValueError("the record's moves must be a list of names")
    board = Board(side)
    tree = GameTree(board)
    end = tree.add_moves(ROOT, record["moves"])  # names an illegal move's number
    state = replay_record(record, board)  # the recorded winner, and a resignation
    if state.resigned:
        tree.resign(end, 3 - state.winner)
    names = (
        str(record.get("agent_a", HUMAN)),
        str(record.get("agent_b", HUMAN)),
        record.get("blue", "a") == "a",
    )
    return tree, names


def read_game_file(text: str) -> list[dict[str, Any]]:
    """The games of a file's text: SGF (it starts with ``(;``), JSON records (lines, one
    object or a list of them), or GTP text (``showboard``'s move lines or a session's commands).

    Returns:
        Per game (at most `MAX_GAMES`): ``label`` (players, result, length), ``side``,
        ``tree`` (`GameTree.to_data`) and ``names`` (agent_a, agent_b, a_is_blue).

    Raises:
        ValueError: naming the game and, for a bad move, its number.
    """
    stripped = text.lstrip()
    if stripped.startswith(SGF_START):
        found = trees_from_sgf(text)
    else:
        if stripped.startswith(("{", "[")):
            records = parse_records(_json_lines(text), source="record")
        else:  # GTP text: its records are built, not parsed; a refused move is an error
            records = records_from_gtp(text)
        found = []
        for index, record in enumerate(records[:MAX_GAMES]):
            try:
                found.append(tree_from_record(record))
            except (ValueError, TypeError) as error:
                raise ValueError(f"game {index + 1}: {one_line(error)}") from None
    games = []
    for index, (tree, names) in enumerate(found[:MAX_GAMES]):
        end = tree.state(tree.line(ROOT)[-1])
        blue, yellow = names[:2] if names[2] else names[1::-1]
        result = f"{PLAYER_NAMES[end.winner]} won" if end.winner else "unfinished"
        variations = sum(max(len(c) - 1, 0) for c in tree.children)
        label = (
            f"game {index}: {blue} (blue) v {yellow} (yellow), {result} after "
            f"{end.move_count} moves" + (f", {variations} variations" if variations else "")
        )
        games.append(
            {"label": label, "side": tree.board.side, "tree": tree.to_data(), "names": names}
        )
    if not games:
        raise ValueError("the text holds no game")
    return games


def _json_lines(text: str) -> list[str]:
    """JSON lines, or one JSON object or list of them, as JSON lines."""
    try:
        whole = json.loads(text)
    except ValueError:
        return text.splitlines()
    if isinstance(whole, list):
        return [json.dumps(item) for item in whole]
    return [json.dumps(whole)]
