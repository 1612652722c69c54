"""Trap Y games as SGF (Smart Game Format, FF[4]), variations included, through ``sgfmill``'s
parser and writer (`sgfmill.sgf_grammar`, which has no board-size limit).

The convention (docs/playing.md states it for people):

    (;FF[4]CA[UTF-8]GM[Trap Y]AP[trapy_rl:VERSION]SZ[10]PB[human]PW[mcts:pretrained:200]
      RE[W+];B[e5];W[swap];B[f6](;W[g3])(;W[d4];B[resign]))

- ``GM[Trap Y]``: a name where the standard has a number, since no number is assigned to
  Trap Y; a file with another ``GM`` (``GM[1]`` is Go, ``GM[11]`` Hex) is refused.
- ``SZ``: the board side (2 to 40), required.
- ``B`` is blue, the first player; ``W`` is yellow. Each move is by the player to move.
- Coordinates are the cell names of docs/rules.md (``a1``, ``j10``); the swap is ``W[swap]``
  (``swap-pieces``, as some Hex programs write it, is read too).
- A resignation is a node of its own, ``B[resign]`` or ``W[resign]`` (the player who resigns,
  whoever was to move), as HexGui writes it: the last child of the position where it happened,
  in any variation. Nothing may follow it.
- ``RE[B+]``/``RE[W+]`` when the main line (the first variation at every node) is won,
  ``RE[B+R]``/``RE[W+R]`` when the loser resigned there; no ``RE`` for an unfinished game. A
  result whose winner has not connected and no resignation node is read as a resignation at
  the main line's end.
- ``PB``, ``PW``: the players' names. Setup stones (``AB``, ``AW``, ``AE``) are refused; other
  properties (comments, names of nodes) are read past.

An illegal move refuses the whole file, naming its game, move number and property.

>>> tree = trees_from_sgf("(;GM[Trap Y]SZ[3];B[b2](;W[swap])(;W[a1];B[resign]))")[0][0]
>>> tree.to_data()["moves"], tree.children[1], tree.resigned
([None, 'b2', 'swap', 'a1'], [2, 3], {3: 1})
>>> sgf_from_tree(tree, names=("a", "b", True)).startswith("(;FF[4]")
True
"""

from __future__ import annotations

import re
from typing import Any

from trapy_rl import __version__
from trapy_rl.errors import MissingExtraError
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.game.state import BLUE, YELLOW
from trapy_rl.web.tree import ROOT, GameTree

try:
    from sgfmill import sgf_grammar
except ModuleNotFoundError as error:  # pragma: no cover - the extra is missing
    raise MissingExtraError(
        "web", module=error.name or "sgfmill", needed_by="the web board's SGF files"
    ) from None

__all__ = ["GAME_NAME", "SGF_START", "sgf_from_tree", "trees_from_sgf"]

GAME_NAME = "Trap Y"
SGF_START = "(;"
_COLOURS = {"B": BLUE, "W": YELLOW}
_LETTERS = {BLUE: "B", YELLOW: "W"}
_SWAPS = ("swap", "swap-pieces")
_RESIGN = "resign"
_RESULT = re.compile(r"([BW])\+(.*)", re.IGNORECASE)


def _text(values: list[bytes]) -> str:
    return sgf_grammar.simpletext_value(values[0]).decode("utf-8", "replace").strip()


def sgf_from_tree(
    tree: GameTree, *, names: tuple[str, str, bool] | None = None, wrap: int | None = 79
) -> str:
    """The SGF text of ``tree``, its variations included (see the module docstring).

    Args:
        tree: the game.
        names: (agent_a, agent_b, a_is_blue): PB and PW; none when not given.
        wrap: the longest line written (None: one line).
    """
    board = tree.board
    root: dict[str, list[bytes]] = {
        "FF": [b"4"],
        "CA": [b"UTF-8"],
        "GM": [GAME_NAME.encode()],
        "AP": [f"trapy_rl:{__version__}".encode()],
        "SZ": [str(board.side).encode()],
    }
    if names is not None:
        blue, yellow = names[:2] if names[2] else names[1::-1]
        root["PB"] = [sgf_grammar.escape_text(blue.encode())]
        root["PW"] = [sgf_grammar.escape_text(yellow.encode())]
    end = tree.line(ROOT)[-1]
    final = tree.state(end)
    if final.winner:
        root["RE"] = [f"{_LETTERS[final.winner]}+{'R' if final.resigned else ''}".encode()]
    to_move = {ROOT: BLUE}

    def children(node: int | tuple[str, int]) -> list:
        if isinstance(node, tuple):  # a resignation: nothing follows it
            return []
        # A resignation after the moves tried from its position: the main line stays first.
        return tree.children[node] + ([(_RESIGN, node)] if node in tree.resigned else [])

    def properties(node: int | tuple[str, int]) -> dict[str, list[bytes]]:
        if isinstance(node, tuple):
            return {_LETTERS[tree.resigned[node[1]]]: [_RESIGN.encode()]}
        if node == ROOT:
            return root
        mover = to_move[tree.parents[node]]
        # After the swap blue moves again, as after any yellow move: colours alternate.
        to_move[node] = YELLOW if mover == BLUE else BLUE
        return {_LETTERS[mover]: [board.action_name(tree.actions[node]).encode()]}

    coarse = sgf_grammar.make_coarse_game_tree(ROOT, children, properties)
    return sgf_grammar.serialise_game_tree(coarse, wrap=wrap).decode("utf-8")


def trees_from_sgf(text: str) -> list[tuple[GameTree, tuple[str, str, bool]]]:
    """The games of an SGF collection, each with its players' names (blue's first).

    Raises:
        ValueError: naming the game and what is wrong: not SGF, another game, no or a bad
            board side, setup stones, a move by the wrong player or an illegal move (by its
            number).
    """
    try:
        collection = sgf_grammar.parse_sgf_collection(text.encode("utf-8"))
    except ValueError as error:
        raise ValueError(f"not an SGF file: {error}") from None
    games = []
    for index, coarse in enumerate(collection):
        try:
            games.append(_read_game(coarse))
        except ValueError as error:
            raise ValueError(f"SGF game {index + 1}: {error}") from None
    return games


def _read_game(coarse: Any) -> tuple[GameTree, tuple[str, str, bool]]:
    root = coarse.sequence[0]
    game = _text(root["GM"]) if "GM" in root else GAME_NAME
    if game.replace(" ", "").lower() != GAME_NAME.replace(" ", "").lower():
        raise ValueError(f"GM[{game}] is not Trap Y (GM[{GAME_NAME}])")
    if "SZ" not in root:
        raise ValueError("no SZ[side]: the board side is required")
    size = _text(root["SZ"])
    if not size.isdigit() or not 2 <= int(size) <= MAX_SIDE:
        raise ValueError(f"SZ[{size}] is not a board side from 2 to {MAX_SIDE}")
    tree = GameTree(Board(int(size)))
    # Depth-first over (coarse tree, index in its sequence, parent node in our tree).
    pending = [(coarse, 0, ROOT, True)]
    while pending:
        part, start, parent, is_root = pending.pop()
        node = parent
        for index, properties in enumerate(part.sequence[start:]):
            node = _read_node(tree, node, properties, root=is_root and index == 0)
        # Resignations last: the moves tried from their position are read before it is over.
        ordered = sorted(part.children, key=_is_resignation)
        pending.extend((child, 0, node, False) for child in reversed(ordered))
    names = (
        _text(root["PB"]) if "PB" in root else "?",
        _text(root["PW"]) if "PW" in root else "?",
        True,
    )
    if "RE" in root:
        _read_result(tree, _text(root["RE"]))
    return tree, names


def _read_node(tree: GameTree, parent: int, properties: dict, *, root: bool) -> int:
    """The node of one SGF node's move after ``parent`` (``parent`` itself for no move)."""
    setup = sorted(set(properties) & {"AB", "AW", "AE"})
    if setup:
        raise ValueError(f"setup stones ({setup[0]}) are not Trap Y moves")
    moves = [letter for letter in _COLOURS if letter in properties]
    if not moves:
        return parent
    number = len(tree.path(parent))  # the move's number in its game
    if len(moves) > 1:
        raise ValueError(f"move {number}: one node holds both B and W")
    letter = moves[0]
    name = _text(properties[letter]).lower()
    if name == _RESIGN:  # by either player, whoever is to move
        try:
            tree.resign(parent, _COLOURS[letter])
        except ValueError as error:
            raise ValueError(f"move {number}: {letter}[{name}]: {error}") from None
        return parent
    state = tree.state(parent)
    if not state.is_over and _COLOURS[letter] != state.to_move:
        to_move = "blue (B)" if state.to_move == BLUE else "yellow (W)"
        raise ValueError(f"move {number}: {letter}[{name}], but {to_move} is to move")
    try:
        return tree.add(parent, "swap" if name in _SWAPS else name)
    except ValueError as error:
        raise ValueError(f"move {number}: {letter}[{name}]: {error}") from None


def _is_resignation(coarse: Any) -> bool:
    """Whether a variation is a resignation (its first node ``B[resign]`` or ``W[resign]``)."""
    first = coarse.sequence[0]
    return any(letter in first and _text(first[letter]).lower() == _RESIGN for letter in _COLOURS)


def _read_result(tree: GameTree, result: str) -> None:
    """Check RE against the main line's end, or resign there for a winner not yet connected."""
    match = _RESULT.fullmatch(result)
    if match is None:
        return  # "0", "Void", "?": no winner to check
    winner = _COLOURS[match.group(1).upper()]
    end = tree.line(ROOT)[-1]
    state = tree.state(end)
    if state.is_over and state.winner != winner:
        raise ValueError(f"RE[{result}], but the main line's moves give the other winner")
    if not state.is_over:
        tree.resign(end, 3 - winner)
