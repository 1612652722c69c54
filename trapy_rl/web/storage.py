"""The web board's games on disk: one SQLite file (the standard library's ``sqlite3``), written
after every change, so that a reload, a restart of the server or a crash loses no game.

One table, one row a game: its id, when it was made and last changed, a summary for the list
of games (JSON) and the game itself (JSON: `trapy_rl.web.sessions.GameSession.to_data`).
Each write is its own transaction, committed before the request is answered.

The default file is in the user's data folder (`default_database_path`); ``:memory:`` keeps
the games in memory only, as the tests and ``trapy-web --db :memory:`` do.

>>> db = GameDatabase(":memory:")
>>> db.save("abc", {"moves": 1}, {"side": 3})
>>> db.load("abc"), [row["id"] for row in db.list()]
({'side': 3}, ['abc'])
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["MEMORY", "GameDatabase", "default_database_path"]

MEMORY = ":memory:"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    summary TEXT NOT NULL,
    data TEXT NOT NULL
)
"""


def default_database_path() -> Path:
    """``$XDG_DATA_HOME/trapy_rl/web.sqlite`` (``~/.local/share/trapy_rl/web.sqlite`` when the
    variable is unset or empty)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "trapy_rl" / "web.sqlite"


class GameDatabase:
    """The games of one SQLite file (or ``:memory:``), safe to use from any thread.

    Raises:
        OSError: when the file's folder cannot be made or the file is no SQLite database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != MEMORY:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            if self.path != MEMORY:
                self._db.execute("PRAGMA journal_mode=WAL")  # readers never wait for a write
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise OSError(f"{self.path}: not a game database ({error})") from None

    def save(self, game_id: str, summary: dict[str, Any], data: dict[str, Any]) -> None:
        """Write the game ``game_id`` (made now if new), committed on return."""
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT INTO games (id, created, updated, summary, data) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET updated = excluded.updated,"
                " summary = excluded.summary, data = excluded.data",
                (game_id, now, now, json.dumps(summary), json.dumps(data)),
            )

    def load(self, game_id: str) -> dict[str, Any] | None:
        """The game's data as saved, or None when there is no such game."""
        with self._lock:
            row = self._db.execute("SELECT data FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if row is None else json.loads(row[0])

    def list(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        """The most recently changed games first, ``limit`` of them after the first ``offset``:
        ``id``, ``created``, ``updated`` (seconds since the epoch) and the summary's fields."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, created, updated, summary FROM games ORDER BY updated DESC, id"
                " LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
        return [{"id": i, "created": c, "updated": u, **json.loads(s)} for i, c, u, s in rows]

    def count(self) -> int:
        """How many games the file holds."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def delete(self, game_id: str) -> None:
        """Delete the game ``game_id`` (nothing when there is none), committed on return."""
        with self._lock:
            self._db.execute("DELETE FROM games WHERE id = ?", (game_id,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
