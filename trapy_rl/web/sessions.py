"""The web board's games: each a `GameSession` (a tree of positions, the players, the position
shown), all kept by a `SessionStore` in its `GameDatabase` and written after every change.

A session is a game against an agent (the person plays ``human``, the agent the other colour)
or, without an agent, a board where the page moves for both sides (analysis and review). The
position shown (``node``) is where the next move is played: a move at an earlier position
starts a variation (`trapy_rl.web.tree.GameTree`). Undo takes back the person's last move with
`trapy_rl.frontend.human_game.takeback`, as ``trapy-play`` does; the record of the line shown
is made here (`GameSession.record`), finished or not.

Every change holds the session's lock; a request that finds it held (the agent is thinking) is
refused with `BusyError` instead of waiting. Every change adds one to the game's ``version``; a
change that names the version it was made from (the page always does) is refused with
`StaleError` when the game has changed since (another tab or window played meanwhile), and the
game is left as it is. No game is ever dropped: the store keeps the most
recently used sessions in memory and reads any other from the database when it is asked for.

>>> store = SessionStore()
>>> session = store.create(side=3, human=BLUE, agent_spec="random", seed=0)
>>> session.play("a1").state.move_count, session.agent_to_move
(1, True)
>>> store.get(session.id) is session
True
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from trapy_rl.agents import Agent, parse_agent
from trapy_rl.agents.moves import checked_move
from trapy_rl.errors import one_line
from trapy_rl.eval.records import make_record
from trapy_rl.frontend.human_game import HUMAN, takeback
from trapy_rl.game.board import Board
from trapy_rl.game.render import last_move_cell
from trapy_rl.game.state import BLUE, YELLOW, GameState, IllegalMoveError
from trapy_rl.web.storage import MEMORY, GameDatabase, ReadOnlyError
from trapy_rl.web.tree import ROOT, GameTree

__all__ = [
    "AgentFailedError",
    "BusyError",
    "GameSession",
    "SessionStore",
    "StaleError",
    "UnknownGameError",
]

MAX_CACHED = 64
"""Sessions kept in memory; the others are read back from the database when asked for."""


class BusyError(ValueError):
    """The game is busy (the agent is thinking) or it is not the page's turn: try later."""


class StaleError(BusyError):
    """The change was made from a version of the game that is no longer the current one."""


class UnknownGameError(KeyError):
    """No game has this id."""


class AgentFailedError(RuntimeError):
    """The agent raised instead of moving; the game is as it was before."""


class GameSession:
    """One game.

    Args:
        game_id: the game's id (in the page's address).
        board: the board.
        human: the person's player, 1 (blue) or 2 (yellow); None: the page plays both sides.
        agent_spec: the opponent's spec (with ``human``), or None.
        seed: the agent's seed, as recorded.
        tree: the positions (default: the empty board alone).
        node: the position shown (default: the root).
        names: (agent_a, agent_b, a_is_blue) of a loaded record, recorded again as loaded.
        agent: the agent built from ``agent_spec`` (default: built when first needed).
        on_change: called with the session after every change (the store saves it).
        version: the game's version (one more after each change).
    """

    def __init__(
        self,
        game_id: str,
        board: Board,
        *,
        human: int | None,
        agent_spec: str | None,
        seed: int | None,
        tree: GameTree | None = None,
        node: int = ROOT,
        names: tuple[str, str, bool] | None = None,
        agent: Agent | None = None,
        on_change: Callable[[GameSession], None] | None = None,
        version: int = 0,
    ) -> None:
        self.id = game_id
        self.board = board
        self.human = human if agent_spec is not None else None
        self.agent_spec = agent_spec
        self.seed = seed
        self.tree = tree if tree is not None else GameTree(board)
        self.node = self.tree.check(node)
        self.names = names
        self._agent = agent
        self._on_change = on_change
        self._state = self.tree.state(self.node)
        self.version = version
        self.watchers = 0  # open event streams of this game: it stays in memory meanwhile
        self.deleted = False
        self.lock = threading.Lock()
        self.search: Any = None  # the latest `trapy_rl.web.analysis.SearchJob`, if any

    # ------------------------------------------------------------------ queries
    @property
    def state(self) -> GameState:
        """The position shown (a copy is made by callers that change it)."""
        return self._state

    @property
    def agent(self) -> Agent | None:
        """The opponent, built from its spec when first needed (nets are cached by file)."""
        if self._agent is None and self.agent_spec is not None:
            self._agent = parse_agent(self.agent_spec, board=self.board, seed=self.seed)
        return self._agent

    @property
    def agent_to_move(self) -> bool:
        """Whether the next move is the agent's (never in a finished game)."""
        state = self._state
        return self.agent_spec is not None and not state.is_over and state.to_move != self.human

    def position(self, ply: int | None = None, node: int | None = None) -> GameState:
        """The position at ``node``, or after the first ``ply`` moves of the line shown
        (default: the position shown).

        Raises:
            ValueError: for a node or ply that is not in the game.
        """
        if node is not None:
            return self.tree.state(self.tree.check(node))
        state = self._state
        if ply is None or ply == state.move_count:
            return state
        path = self.tree.path(self.node)
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= len(path) - 1:
            raise ValueError(f"ply must be an integer from 0 to {state.move_count}, got {ply!r}")
        return self.tree.state(path[ply])

    def payload(self, ply: int | None = None) -> dict[str, Any]:
        """The game as the page shows it, at ``ply`` of the line shown (default: the position
        shown).

        Returns:
            A JSON-ready dict: ``id``, ``version`` (what a change names: `StaleError`),
            ``side``, ``node`` (the position shown), ``moves`` (the
            moves to it by name), ``ply``, ``stones`` [K] int (0 empty, 1 blue, 2 yellow),
            ``to_move``, ``winner`` (0 while the game goes on), ``resigned``,
            ``winning_group`` (cells), ``last_cell`` (or null), ``swap_allowed``, ``human``,
            ``agent`` (its spec or null), ``agent_to_move``, ``tree`` (`GameTree.to_data`) and
            ``line`` (the node ids of the line through the position shown).
        """
        shown = self.position(ply)
        return {
            "id": self.id,
            "version": self.version,
            "side": self.board.side,
            "node": self.node,
            "moves": self._state.move_names(),
            "ply": shown.move_count,
            "stones": shown.stones.tolist(),
            "to_move": shown.to_move,
            "winner": shown.winner,
            "resigned": shown.resigned,
            "winning_group": shown.winning_group(),
            "last_cell": last_move_cell(shown.last_action, shown.stones, self.board),
            "swap_allowed": shown.swap_allowed,
            "human": self.human,
            "agent": self.agent_spec,
            "agent_to_move": self.agent_to_move,
            "tree": self.tree.to_data(),
            "line": self.tree.line(self.node),
        }

    def summary(self) -> dict[str, Any]:
        """The game in the list of games: ``side``, ``human``, ``agent``, ``moves`` (along the
        line shown), ``winner`` (at its end), ``positions`` (nodes in the tree)."""
        end = self.tree.state(self.tree.line(self.node)[-1])
        return {
            "side": self.board.side,
            "human": self.human,
            "agent": self.agent_spec,
            "moves": end.move_count,
            "winner": end.winner,
            "positions": len(self.tree),
        }

    # ------------------------------------------------------------------ changes
    @contextlib.contextmanager
    def _changing(self, version: int | None = None, *, view: bool = False) -> Iterator[None]:
        """Hold the lock for a change made from ``version`` (None: from whatever is current),
        then save and count it (only when the change succeeded). A change that fails, or whose
        save fails (`trapy_rl.web.storage.StorageError`, a file served read-only), is undone:
        the game in memory is never one the file does not hold. Only a ``view`` (the position
        shown, no move) is kept unsaved on a read-only file, so that its games can be looked
        through.

        Raises:
            BusyError: while another change runs (the agent thinks).
            StaleError: when ``version`` is not the game's version: nothing changes.
        """
        if not self.lock.acquire(blocking=False):
            raise BusyError("the agent is thinking; wait for its move")
        before = self._snapshot()
        try:
            if self.deleted:
                raise UnknownGameError(self.id)
            if version is not None and version != self.version:
                raise StaleError(
                    f"the game has changed since this position was shown (version {version}, "
                    f"now {self.version}): another tab or window played; nothing was changed"
                )
            yield
            self._state = self.tree.state(self.node)
            self.version += 1
            if self._on_change is not None:
                try:
                    self._on_change(self)
                except ReadOnlyError:
                    if not view:
                        raise
        except BaseException:
            self._restore(before)
            raise
        finally:
            self.lock.release()

    def _snapshot(self) -> tuple:
        """What a change may touch, copied (the tree's lists are small: one entry a node)."""
        tree = self.tree
        return (
            list(tree.parents), list(tree.actions), [list(c) for c in tree.children],
            dict(tree.resigned), self.node, self._state, self.agent_spec, self.human,
            self._agent, self.version,
        )  # fmt: skip

    def _restore(self, snapshot: tuple) -> None:
        tree = self.tree
        (tree.parents, tree.actions, tree.children, tree.resigned, self.node, self._state,
         self.agent_spec, self.human, self._agent, self.version) = snapshot  # fmt: skip

    def goto(self, node: int, version: int | None = None) -> GameSession:
        """Show the position at ``node`` (where the next move is played)."""
        with self._changing(version, view=True):
            self.node = self.tree.check(node)
        return self

    def play(self, move: str, version: int | None = None) -> GameSession:
        """The page's move (a cell name or ``swap``) at the position shown, refused on the
        agent's turn; at an earlier position it starts a variation."""
        with self._changing(version):
            if self.agent_to_move:
                raise BusyError("it is the agent's turn, not yours")
            self.node = self.tree.add(self.node, move)
        return self

    def agent_move(self, version: int | None = None) -> str:
        """Let the agent play its move at the position shown (blocking while it thinks);
        returns the move's name.

        Raises:
            AgentFailedError: when the agent raises (the game is unchanged; the agent is built
                again for the next move).
        """
        with self._changing(version):
            if self.agent_spec is None:
                raise BusyError("this game has no agent: both sides are played on the page")
            if not self.agent_to_move:
                raise BusyError("it is not the agent's turn")
            try:
                action = checked_move(self.agent, self._state.copy())
            except Exception as error:
                self._agent = None
                raise AgentFailedError(
                    f"the agent {self.agent_spec!r} failed ({type(error).__name__}: {error}); "
                    "the game is as it was"
                ) from None
            self.node = self.tree.add(self.node, action)
        return self.board.action_name(action)

    def set_players(
        self, human: int | None, agent_spec: str | None, version: int | None = None
    ) -> GameSession:
        """Play on from the position shown against ``agent_spec`` (the person plays
        ``human``), or with no agent, both sides on the page.

        Raises:
            ValueError: for a bad spec or player.
        """
        agent = None
        if agent_spec is not None:
            if human not in (BLUE, YELLOW):
                raise ValueError(f"human must be 1 (blue) or 2 (yellow), got {human!r}")
            agent = parse_agent(agent_spec, board=self.board, seed=self.seed)
        with self._changing(version):
            self.agent_spec, self._agent = agent_spec, agent
            self.human = human if agent_spec is not None else None
        return self

    def undo(self, version: int | None = None) -> list[str]:
        """Take back the page's last move (and the agent's replies); returns the moves taken.

        Against an agent this is `trapy_rl.frontend.human_game.takeback` of the person's last
        move; without one, the last move. Undoing a resignation takes back the resignation
        alone. Moves taken back leave the tree unless a variation hangs from them.
        """
        with self._changing(version):
            state, tree = self._state, self.tree
            if self.node in tree.resigned:
                del tree.resigned[self.node]
                return []
            if self.human is None:
                previous = state.move_count - 1 if state.history else None
            else:
                back = takeback(state, self.human)
                previous = None if back is None else back.move_count
            if previous is None:
                raise IllegalMoveError("undo: nothing to take back")
            taken = state.move_names()[previous:]
            top = tree.path(self.node)[previous]
            tree.remove_leaf_chain(top, self.node)
            self.node = top
        return taken

    def resign(self, version: int | None = None) -> GameSession:
        """The person resigns (without an agent: the player to move) at the position shown."""
        with self._changing(version):
            self.tree.resign(self.node, self.human or self._state.to_move)
        return self

    def promote(self, node: int, version: int | None = None) -> GameSession:
        """Make the line through ``node`` the main line (`GameTree.promote`)."""
        with self._changing(version):
            self.tree.promote(self.tree.check(node))
        return self

    def delete_variation(self, node: int, version: int | None = None) -> GameSession:
        """Delete ``node`` and every position after it (not the root); when the position shown
        is among them, its parent is shown."""
        with self._changing(version):
            parent = self.tree.parents[self.tree.check(node)]
            shown = self.tree.path(self.node)
            new_id = self.tree.remove_subtree(node)
            self.node = new_id[parent] if node in shown else new_id[self.node]
        return self

    def record(self) -> dict:
        """The record of the line shown, in the format of ``trapy-play`` and the arena;
        an unfinished game has ``winner`` 0 and ``winner_agent`` null."""
        state = self.tree.state(self.tree.line(self.node)[-1])
        if self.agent_spec is not None and self.human is not None:
            names = (self.agent_spec, HUMAN, self.human != BLUE)
        else:
            names = self.names or (HUMAN, HUMAN, True)
        record = make_record(
            moves=state.move_names(),
            winner=state.winner,
            side=self.board.side,
            agent_a=names[0],
            agent_b=names[1],
            a_is_blue=names[2],
            seed=self.seed,
            resigned=state.resigned,
        )
        if not state.winner:
            record["winner_agent"] = None  # unfinished
        return record

    # ------------------------------------------------------------------ storage
    def to_data(self) -> dict[str, Any]:
        """The whole game, JSON-ready, as the database keeps it."""
        return {
            "side": self.board.side,
            "human": self.human,
            "agent": self.agent_spec,
            "seed": self.seed,
            "names": list(self.names) if self.names else None,
            "node": self.node,
            "version": self.version,
            "tree": self.tree.to_data(),
        }

    @classmethod
    def from_data(
        cls, game_id: str, data: dict[str, Any], on_change: Callable[[GameSession], None]
    ) -> GameSession:
        """The game `to_data` wrote (its agent built again when first needed)."""
        board = Board(data["side"])
        names = data.get("names")
        return cls(
            game_id,
            board,
            human=data.get("human"),
            agent_spec=data.get("agent"),
            seed=data.get("seed"),
            tree=GameTree.from_data(data["tree"], board),
            node=data.get("node", ROOT),
            names=tuple(names) if names else None,
            on_change=on_change,
            version=data.get("version", 0),
        )


class SessionStore:
    """All games by id, in a `GameDatabase`; the `MAX_CACHED` most recently used in memory.

    Args:
        db: the database file, or ``:memory:`` (default).
    """

    def __init__(self, db: str | GameDatabase = MEMORY, *, max_cached: int = MAX_CACHED) -> None:
        self.db = db if isinstance(db, GameDatabase) else GameDatabase(db)
        self.max_cached = max_cached
        self._sessions: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()
        self.closed = False  # shutting down: event streams end

    def save(self, session: GameSession) -> None:
        """Write ``session`` to the database."""
        self.db.save(session.id, session.summary(), session.to_data())

    def create(
        self,
        *,
        side: int,
        human: int | None = BLUE,
        agent_spec: str | None = None,
        seed: int | None = None,
        tree: GameTree | None = None,
        node: int | None = None,
        names: tuple[str, str, bool] | None = None,
    ) -> GameSession:
        """A new game: against ``agent_spec`` (``human`` is the person's player), or with no
        agent, both sides played on the page; from ``tree`` (a loaded record) at ``node``
        (default: the end of its main line), or the empty board.

        Raises:
            ValueError: for a bad side, spec or player (naming it).
        """
        board = Board(side)
        agent = None
        if agent_spec is not None:
            if human not in (BLUE, YELLOW):
                raise ValueError(f"human must be 1 (blue) or 2 (yellow), got {human!r}")
            agent = parse_agent(agent_spec, board=board, seed=seed)
        tree = tree if tree is not None else GameTree(board)
        if tree.board is not board:
            raise ValueError(f"the game is for side {tree.board.side}, not side {side}")
        session = GameSession(
            secrets.token_hex(8),
            board,
            human=human,
            agent_spec=agent_spec,
            seed=seed,
            tree=tree,
            node=tree.line(ROOT)[-1] if node is None else node,
            names=names,
            agent=agent,
            on_change=self.save,
        )
        self.save(session)
        self._remember(session)
        return session

    def get(self, game_id: str) -> GameSession:
        """The game with this id (now the most recently used).

        Raises:
            UnknownGameError: when there is none.
        """
        with self._lock:
            session = self._sessions.get(game_id)
            if session is not None:
                self._sessions.move_to_end(game_id)
                return session
        data = self.db.load(game_id)  # DamagedGameError for a record that cannot be read
        if data is None:
            raise UnknownGameError(game_id)
        try:
            session = GameSession.from_data(game_id, data, self.save)
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            raise self.db.report_damaged(
                game_id, f"its game is not one: {one_line(error)}"
            ) from None
        with self._lock:  # another request may have read it meanwhile: keep one
            session = self._sessions.setdefault(game_id, session)
        self._remember(session)
        return session

    def _remember(self, session: GameSession) -> None:
        """Keep ``session`` in memory, forgetting the least recently used idle ones."""
        with self._lock:
            self._sessions[session.id] = session
            self._sessions.move_to_end(session.id)
            for old_id in list(self._sessions):
                if len(self._sessions) <= self.max_cached:
                    break
                old = self._sessions[old_id]
                busy = old.lock.locked() or old.watchers > 0
                busy = busy or (old.search is not None and old.search.running)
                if not busy:  # saved already: forgetting it loses nothing
                    del self._sessions[old_id]

    def games(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        """The most recently changed games that can be read, first (`GameDatabase.list`),
        ``limit`` of them after the first ``offset``."""
        return self.db.list(limit, offset)

    def count(self) -> int:
        """How many games there are."""
        return self.db.count()

    def delete(self, game_id: str, version: int | None = None) -> None:
        """Delete the game (its search cancelled); from ``version`` when one is named.

        Raises:
            UnknownGameError: when there is none.
            BusyError: while the agent thinks; StaleError: when ``version`` is not current.
        """
        session = self.get(game_id)
        with session._changing(version):
            if session.search is not None:
                session.search.cancel()
            self.db.delete(game_id)
            session.deleted = True
            session._on_change = None
        with self._lock:
            self._sessions.pop(game_id, None)

    @property
    def read_only(self) -> bool:
        """Whether the games file is served read-only (no change is saved, so none is made)."""
        return self.db.read_only

    def damaged(self) -> dict[str, str]:
        """id -> why, for the games whose records cannot be read (seen so far)."""
        return dict(self.db.damaged)

    def close(self) -> None:
        """Cancel every search, and end the games' event streams (at shutdown)."""
        self.closed = True
        with self._lock:
            for session in self._sessions.values():
                if session.search is not None:
                    session.search.cancel()
