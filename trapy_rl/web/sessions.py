"""The games of the page's tabs: one `GameSession` per tab, kept in a bounded `SessionStore`.

A session is a game against an agent (the person plays ``human``, the agent the other colour)
or, without an agent, a board where the page moves for both sides (analysis and review of a
loaded record). Moves, undo and resignation follow `trapy_rl.frontend.human_game` (`takeback`,
`game_record`), as ``trapy-play`` does, so a game here is recorded exactly as it records one.

Every mutation holds the session's lock; a request that finds it held (the agent is thinking)
is refused with `BusyError` instead of waiting.

>>> store = SessionStore()
>>> session = store.create(side=3, human=BLUE, agent_spec="random", seed=0)
>>> session.play("a1").state.move_count, session.agent_to_move
(1, True)
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from trapy_rl.agents import Agent, parse_agent
from trapy_rl.agents.moves import checked_move
from trapy_rl.eval.records import make_record, replay_record
from trapy_rl.frontend.human_game import HUMAN, game_record, takeback
from trapy_rl.game.board import Board
from trapy_rl.game.render import last_move_cell
from trapy_rl.game.state import BLUE, YELLOW, GameState, IllegalMoveError

__all__ = ["BusyError", "GameSession", "SessionStore", "UnknownGameError"]

MAX_SESSIONS = 64
"""Games kept at once; the least recently used is dropped (and its search cancelled)."""


class BusyError(ValueError):
    """The game is busy (the agent is thinking) or it is not the page's turn: try later."""


class UnknownGameError(KeyError):
    """No game has this id (never made, or dropped as the least recently used)."""


class GameSession:
    """One tab's game.

    Args:
        board: the board.
        human: the person's player, 1 (blue) or 2 (yellow); None: the page plays both sides.
        agent: the opponent (with ``human``), or None.
        seed: the agent's seed, as recorded.
        state: the starting game (default: the empty board).
        names: (agent_a, agent_b, a_is_blue) of a loaded record, recorded again as loaded.
    """

    def __init__(
        self,
        game_id: str,
        board: Board,
        *,
        human: int | None,
        agent: Agent | None,
        seed: int | None,
        state: GameState | None = None,
        names: tuple[str, str, bool] | None = None,
    ) -> None:
        self.id = game_id
        self.board = board
        self.human = human
        self.agent = agent
        self.seed = seed
        self.state = state if state is not None else GameState(board)
        self.names = names
        self.lock = threading.Lock()
        self.search: Any = None  # the latest `trapy_rl.web.analysis.SearchJob`, if any

    # ------------------------------------------------------------------ queries
    @property
    def agent_to_move(self) -> bool:
        """Whether the next move is the agent's (never in a finished game)."""
        return (
            self.agent is not None and not self.state.is_over and self.state.to_move != self.human
        )

    def position(self, ply: int | None = None) -> GameState:
        """The game after its first ``ply`` moves (default: the current position).

        Raises:
            ValueError: for a ply outside 0..move_count.
        """
        state = self.state
        if ply is None or ply == state.move_count:
            return state
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= state.move_count:
            raise ValueError(f"ply must be an integer from 0 to {state.move_count}, got {ply!r}")
        return GameState.from_moves(state.history[:ply], self.board)

    def payload(self, ply: int | None = None) -> dict[str, Any]:
        """The game as the page shows it, at ``ply`` (default: the current position).

        Returns:
            A JSON-ready dict: ``id``, ``side``, ``moves`` (all the game's moves by name),
            ``ply`` (the moves shown), ``stones`` [K] int (0 empty, 1 blue, 2 yellow),
            ``to_move``, ``winner`` (0 while the game goes on), ``resigned``,
            ``winning_group`` (cells), ``last_cell`` (or null), ``swap_allowed``, ``human``,
            ``agent`` (its name or null), ``agent_to_move``.
        """
        shown = self.position(ply)
        state = self.state
        return {
            "id": self.id,
            "side": self.board.side,
            "moves": state.move_names(),
            "ply": shown.move_count,
            "stones": shown.stones.tolist(),
            "to_move": shown.to_move,
            "winner": shown.winner,
            "resigned": shown.resigned,
            "winning_group": shown.winning_group(),
            "last_cell": last_move_cell(shown.last_action, shown.stones, self.board),
            "swap_allowed": shown.swap_allowed,
            "human": self.human,
            "agent": None if self.agent is None else self.agent.name,
            "agent_to_move": self.agent_to_move,
        }

    # ------------------------------------------------------------------ changes
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if not self.lock.acquire(blocking=False):
            raise BusyError("the agent is thinking; wait for its move")
        try:
            yield
        finally:
            self.lock.release()

    def play(self, move: str) -> GameSession:
        """The page's move (a cell name or ``swap``), refused on the agent's turn."""
        with self._locked():
            if self.agent_to_move:
                raise BusyError("it is the agent's turn, not yours")
            self.state.play(move)
        return self

    def agent_move(self) -> str:
        """Let the agent play its move (blocking while it thinks); returns the move's name."""
        with self._locked():
            if self.agent is None:
                raise BusyError("this game has no agent: both sides are played on the page")
            if not self.agent_to_move:
                raise BusyError("it is not the agent's turn")
            action = checked_move(self.agent, self.state)
            self.state.play(action)
        return self.board.action_name(action)

    def undo(self) -> list[str]:
        """Take back the page's last move (and the agent's replies); returns the moves taken.

        Against an agent this is `trapy_rl.frontend.human_game.takeback` of the person's last
        move; without one, the last move. Undoing a resignation takes back the resignation alone.
        """
        with self._locked():
            state = self.state
            if state.resigned:
                previous: GameState | None = GameState.from_moves(state.history, self.board)
            elif self.human is None:
                previous = GameState.from_moves(state.history[:-1], self.board)
                previous = previous if state.history else None
            else:
                previous = takeback(state, self.human)
            if previous is None:
                raise IllegalMoveError("undo: nothing to take back")
            taken = state.move_names()[previous.move_count :]
            self.state = previous
        return taken

    def resign(self) -> GameSession:
        """The person resigns (without an agent: the player to move)."""
        with self._locked():
            self.state.resign(self.human)
        return self

    def record(self) -> dict:
        """The finished game's record in the format of ``trapy-play`` and the arena.

        Raises:
            ValueError: while the game goes on.
        """
        state = self.state
        if self.agent is not None and self.human is not None:
            return game_record(state, agent_name=self.agent.name, human=self.human, seed=self.seed)
        if not state.is_over:
            raise ValueError("only a finished game has a record")
        agent_a, agent_b, a_is_blue = self.names or (HUMAN, HUMAN, True)
        return make_record(
            moves=state.move_names(),
            winner=state.winner,
            side=self.board.side,
            agent_a=agent_a,
            agent_b=agent_b,
            a_is_blue=a_is_blue,
            seed=self.seed,
            resigned=state.resigned,
        )


class SessionStore:
    """The games of all tabs by id, at most `MAX_SESSIONS`, least recently used dropped."""

    def __init__(self, *, max_sessions: int = MAX_SESSIONS) -> None:
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def create(
        self,
        *,
        side: int,
        human: int | None = BLUE,
        agent_spec: str | None = None,
        seed: int | None = None,
        record: dict | None = None,
    ) -> GameSession:
        """A new game: against ``agent_spec`` (``human`` is the person's player), or with no
        agent, both sides played on the page; or a loaded ``record``, replayed (no agent).

        Raises:
            ValueError: for a bad side, spec, player or record (naming it).
        """
        board = Board(side)
        state, names = None, None
        if record is not None:
            if agent_spec is not None:
                raise ValueError("a loaded record is replayed without an agent")
            state = replay_record(record, board)
            names = (
                str(record.get("agent_a", HUMAN)),
                str(record.get("agent_b", HUMAN)),
                record.get("blue", "a") == "a",
            )
            human = None
        agent = None
        if agent_spec is not None:
            if human not in (BLUE, YELLOW):
                raise ValueError(f"human must be 1 (blue) or 2 (yellow), got {human!r}")
            agent = parse_agent(agent_spec, board=board, seed=seed)
        else:
            human = None
        session = GameSession(
            secrets.token_hex(8),
            board,
            human=human,
            agent=agent,
            seed=seed,
            state=state,
            names=names,
        )
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > self.max_sessions:
                _, dropped = self._sessions.popitem(last=False)
                if dropped.search is not None:
                    dropped.search.cancel()
        return session

    def get(self, game_id: str) -> GameSession:
        """The game with this id (now the most recently used).

        Raises:
            UnknownGameError: when there is none.
        """
        with self._lock:
            session = self._sessions.get(game_id)
            if session is None:
                raise UnknownGameError(game_id)
            self._sessions.move_to_end(game_id)
            return session

    def __len__(self) -> int:
        return len(self._sessions)

    def close(self) -> None:
        """Cancel every search (at shutdown)."""
        with self._lock:
            for session in self._sessions.values():
                if session.search is not None:
                    session.search.cancel()
