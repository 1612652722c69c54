"""A game as a tree of positions: the moves played, the ones taken back into variations, and
the branches tried from any earlier position.

Node 0 is the empty board; every other node is one move (an action) after its parent. The
first child of a node is its main continuation, later children are variations, in the order
they were made unless one was promoted (`promote`: its line becomes the main line). A
resignation is no move: it is a mark on the node where it happened (the player who resigned),
so that the position stays the one on the board.

The tree travels as plain JSON (`to_data`, `from_data`): the web board stores it in its
database after every change and SGF files carry it (`trapy_rl.web.sgf`).

>>> tree = GameTree(Board(3))
>>> a1 = tree.add(0, "a1"); swap = tree.add(a1, "swap"); b2 = tree.add(a1, "b2")
>>> tree.children[a1], tree.line(b2), tree.state(swap).move_names()
([2, 3], [0, 1, 3], ['a1', 'swap'])
"""

from __future__ import annotations

import itertools
from typing import Any

from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, YELLOW, GameState, IllegalMoveError

__all__ = ["ROOT", "GameTree"]

ROOT = 0


class GameTree:
    """The positions of one game on ``board``.

    Attributes:
        parents: [N] int, each node's parent (-1 for the root).
        actions: [N] int, the move that leads to each node (-1 for the root).
        children: [N] lists of node ids, the main continuation first.
        resigned: node -> the player (1 or 2) who resigned there.
    """

    def __init__(self, board: Board) -> None:
        self.board = board
        self.parents: list[int] = [-1]
        self.actions: list[int] = [-1]
        self.children: list[list[int]] = [[]]
        self.resigned: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.parents)

    # ------------------------------------------------------------------ queries
    def check(self, node: Any) -> int:
        """``node`` if it is a node id of this tree; else ValueError naming the range."""
        if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < len(self):
            raise ValueError(f"node must be an integer from 0 to {len(self) - 1}, got {node!r}")
        return node

    def path(self, node: int) -> list[int]:
        """The node ids from the root to ``node``, both included."""
        nodes = [self.check(node)]
        while self.parents[nodes[-1]] >= 0:
            nodes.append(self.parents[nodes[-1]])
        return nodes[::-1]

    def line(self, node: int) -> list[int]:
        """The line through ``node``: its path from the root, then its main continuation."""
        nodes = self.path(node)
        while self.children[nodes[-1]]:
            nodes.append(self.children[nodes[-1]][0])
        return nodes

    def moves(self, node: int) -> list[int]:
        """The actions from the root to ``node``."""
        return [self.actions[n] for n in self.path(node)[1:]]

    def state(self, node: int) -> GameState:
        """The game at ``node`` (resigned there, if it was)."""
        state = GameState.from_moves(self.moves(node), self.board)
        if node in self.resigned:
            state.resign(self.resigned[node])
        return state

    # ------------------------------------------------------------------ changes
    def add(self, parent: int, move: str | int) -> int:
        """The node of ``move`` played at ``parent``: its existing child, or a new one (a
        variation when ``parent`` already has children).

        Raises:
            IllegalMoveError: naming the move, when the rules do not allow it there.
        """
        state = self.state(self.check(parent))
        action = self.board.parse_action(move)
        state.play(action)  # raises for an illegal move, naming it
        for child in self.children[parent]:
            if self.actions[child] == action:
                return child
        self.parents.append(parent)
        self.actions.append(action)
        self.children.append([])
        self.children[parent].append(len(self.parents) - 1)
        return len(self.parents) - 1

    def add_moves(self, parent: int, moves: list[str] | list[int]) -> int:
        """`add` each of ``moves`` in turn from ``parent``; the last node.

        Raises:
            IllegalMoveError: naming the move and its number in the game (1 the first).
        """
        node = parent
        for move in moves:
            try:
                node = self.add(node, move)
            except (IllegalMoveError, ValueError) as error:
                number = len(self.path(node))
                raise IllegalMoveError(f"move {number}: {error}") from None
        return node

    def resign(self, node: int, player: int) -> None:
        """Mark ``player``'s resignation at ``node`` (the game there must go on)."""
        if player not in (BLUE, YELLOW):
            raise ValueError(f"player must be 1 (blue) or 2 (yellow), got {player!r}")
        self.state(node).resign(player)  # raises when the game there is over
        self.resigned[node] = player

    def remove_leaf_chain(self, top: int, leaf: int) -> bool:
        """Remove the nodes below ``top`` down to ``leaf`` when they form a bare chain (each
        with one child, ``leaf`` with none), renumbering the rest; whether it did.

        Used by undo: moves taken back vanish unless a variation hangs from them.
        """
        chain = self.path(leaf)
        if top not in chain or top == leaf:
            return False
        below = chain[chain.index(top) + 1 :]
        if self.children[leaf] or any(len(self.children[n]) != 1 for n in below[:-1]):
            return False
        self._remove(set(below))
        return True

    def remove_subtree(self, node: int) -> dict[int, int]:
        """Remove ``node`` (not the root) and every position after it, renumbering the rest;
        returns old id -> new id of the nodes kept.

        Raises:
            ValueError: for the root or a node that is not in the tree.
        """
        if self.check(node) == ROOT:
            raise ValueError("the empty board cannot be deleted")
        gone, todo = set(), [node]
        while todo:
            gone.add(todo[-1])
            todo.extend(self.children[todo.pop()])
        return self._remove(gone)

    def promote(self, node: int) -> None:
        """Make the line through ``node`` the main line: on its path, each node becomes the
        first continuation of its parent (the others keep their order after it)."""
        path = self.path(node)
        for parent, child in itertools.pairwise(path):
            self.children[parent].remove(child)
            self.children[parent].insert(0, child)

    def _remove(self, gone: set[int]) -> dict[int, int]:
        """Drop the nodes ``gone`` (whole subtrees), renumbering the rest in order."""
        keep = [n for n in range(len(self)) if n not in gone]
        new_id = {old: new for new, old in enumerate(keep)}
        self.parents = [new_id.get(self.parents[n], -1) for n in keep]
        self.actions = [self.actions[n] for n in keep]
        self.children = [[new_id[c] for c in self.children[n] if c not in gone] for n in keep]
        self.resigned = {new_id[n]: p for n, p in self.resigned.items() if n not in gone}
        return new_id

    # ------------------------------------------------------------------ JSON
    def to_data(self) -> dict[str, Any]:
        """JSON-ready: ``moves`` [N] (names, null for the root), ``parents`` [N], ``children``
        [N] (each node's continuations, the main one first) and ``resigned`` (node as text ->
        player)."""
        names = [None] + [self.board.action_name(a) for a in self.actions[1:]]
        return {
            "moves": names,
            "parents": list(self.parents),
            "children": [list(c) for c in self.children],
            "resigned": {str(n): p for n, p in self.resigned.items()},
        }

    @classmethod
    def from_data(cls, data: dict[str, Any], board: Board) -> GameTree:
        """The tree `to_data` wrote, every move checked again.

        Raises:
            ValueError: naming the node that is not a legal move after its parent.
        """
        tree = cls(board)
        moves, parents = data["moves"], data["parents"]
        if len(moves) != len(parents) or not moves or parents[0] != -1:
            raise ValueError("a game tree needs one parent per move, the root first")
        for node in range(1, len(moves)):
            parent = parents[node]
            if not isinstance(parent, int) or not 0 <= parent < node:
                raise ValueError(f"node {node}: its parent {parent!r} does not come before it")
            if tree.add(parent, moves[node]) != node:
                raise ValueError(f"node {node}: the same move twice after node {parent}")
        order = data.get("children")
        if order is not None:  # the continuations' order (a promoted variation first)
            if not isinstance(order, list) or len(order) != len(moves):
                raise ValueError("a game tree's children must list each node's continuations")
            for node, wanted in enumerate(order):
                if not isinstance(wanted, list) or sorted(wanted) != tree.children[node]:
                    raise ValueError(f"node {node}: its children are not {wanted!r}")
                tree.children[node] = list(wanted)
        for node, player in data.get("resigned", {}).items():
            tree.resign(int(node), player)
        return tree
