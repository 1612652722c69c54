"""The web board's games on disk: one SQLite file (the standard library's ``sqlite3``), written
after every change, so that a reload, a restart of the server or a crash loses no game.

One table, one row a game: its id, when it was made and last changed, a summary for the list
of games (JSON) and the game itself (JSON: `trapy_rl.web.sessions.GameSession.to_data`).
Each write is its own transaction, committed (SQLite's WAL, synchronous FULL: on disk) before
`GameDatabase.save` returns; a write that fails raises `StorageError` and leaves nothing half
done, so the server answers a move as played only once it is on disk.

What the file promises, and how it is checked when the server opens it (`GameDatabase`):

- it is what the server will use: an SQLite file with the games table (a new file is made
  with it and marked with `SCHEMA_VERSION`; an empty file is never taken for a new one, as a
  file truncated to nothing would be), no shorter than its own header says, passing SQLite's
  ``quick_check``, every record readable (JSON objects: a file truncated mid-page can pass
  ``quick_check`` and still lose a record), and writable (a write is made and committed);
- a file that fails is refused (`GamesFileError`, an OSError: one line that says what to do),
  or served read-only on request (``read_only=True``: the records that can be read are
  listed, the others reported as damaged, and nothing is written);
- a rolling copy, ``<file>.backup``, made with SQLite's backup API from the file once it has
  passed the checks, then every `BACKUP_INTERVAL_S` of writes and when the server stops
  (written to a temporary file and renamed: a copy is whole or absent). `restore` puts it back
  (``trapy-web --db FILE --restore``), keeping the damaged file beside it.

It does not promise more than the disk: games changed since the last copy are lost with a
damaged file, and a copy is no protection against the loss of the disk that holds both.

The default file is in the user's data folder (`default_database_path`); ``:memory:`` keeps
the games in memory only, as the tests and ``trapy-web --db :memory:`` do.

>>> db = GameDatabase(":memory:")
>>> db.save("abc", {"moves": 1}, {"side": 3})
>>> db.load("abc"), [row["id"] for row in db.list()]
({'side': 3}, ['abc'])
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = [
    "BACKUP_INTERVAL_S",
    "MEMORY",
    "SCHEMA_VERSION",
    "DamagedGameError",
    "GameDatabase",
    "GamesFileError",
    "ReadOnlyError",
    "StorageError",
    "backup_path",
    "default_database_path",
    "restore",
]

MEMORY = ":memory:"
SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a games file this server made (0: made before it was marked)."""
BACKUP_INTERVAL_S = 300.0
"""Seconds between two rolling copies while games change (and one at start and at stop)."""
_SQLITE_HEADER = b"SQLite format 3\x00"
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26  # SQLite's primary result codes of a damaged file
_COLUMNS = {"id", "created", "updated", "summary", "data"}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    summary TEXT NOT NULL,
    data TEXT NOT NULL
)
"""
log = logging.getLogger("trapy_rl.web")


class GamesFileError(OSError):
    """The games file is not one the server can use as it stands; the message says why and
    what to do (restore its copy, serve it read-only, make it writable)."""


class StorageError(OSError):
    """A write of the games file failed (a full disk, a file made read-only): nothing of the
    change was kept, on disk or in memory."""


class ReadOnlyError(ValueError):
    """The games file is served read-only (``--read-only``): no game or move is saved."""


class DamagedGameError(LookupError):
    """A game's record cannot be read from the file (the file is damaged there)."""


def default_database_path() -> Path:
    """``$XDG_DATA_HOME/trapy_rl/web.sqlite`` (``~/.local/share/trapy_rl/web.sqlite`` when the
    variable is unset or empty)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "trapy_rl" / "web.sqlite"


def backup_path(path: str | Path) -> Path:
    """Where the rolling copy of the games file ``path`` is kept: ``<path>.backup``."""
    return Path(f"{path}.backup")


class GameDatabase:
    """The games of one SQLite file (or ``:memory:``), checked as the module docstring says,
    safe to use from any thread.

    Args:
        path: the file (made, with its folder, when missing), or ``:memory:``.
        read_only: serve the file as it is: nothing is written (`save` raises
            `ReadOnlyError`), damaged records are listed in `damaged` instead of refused.
        restore_hint: how the refusal names the restore command (default: the library
            call); ``trapy-web`` passes its command line.

    Attributes:
        damaged: id -> why its record cannot be read (read-only only; else the file is refused).

    Raises:
        GamesFileError: for a file the server cannot use, naming the problem and what to do.
    """

    def __init__(
        self, path: str | Path, *, read_only: bool = False, restore_hint: str | None = None
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.damaged: dict[str, str] = {}
        self._lock = threading.Lock()
        self._last_backup = 0.0
        self._changed_since_backup = False
        self._closed = False
        self._hint = restore_hint or f"trapy_rl.web.storage.restore({self.path!r})"
        if self.path == MEMORY:
            self._db = sqlite3.connect(MEMORY, check_same_thread=False, isolation_level=None)
            self._db.execute(_SCHEMA)
            return
        file = Path(self.path)
        existed = self._check_file(file)
        try:
            self._db = self._connect(file)
        except sqlite3.Error as error:
            raise self._sqlite_refusal(error) from None
        try:
            self._check_contents(existed)
            if not read_only:
                self._check_writable()
        except sqlite3.Error as error:
            self._db.close()
            raise self._sqlite_refusal(error) from None
        except BaseException:
            self._db.close()
            raise
        if not read_only:
            self.backup()

    # ------------------------------------------------------------------ the checks at start
    def _check_file(self, file: Path) -> bool:
        """The file before SQLite opens it: whether it existed (a missing one is made)."""
        if not file.exists():
            if self.read_only:
                raise GamesFileError(f"{self.path}: no such file to serve read-only")
            blocking = next((p for p in file.parents if p.exists() and not p.is_dir()), None)
            if blocking is not None:
                raise GamesFileError(
                    f"{self.path}: {blocking} is a file, not a folder; give a file in a folder"
                )
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise GamesFileError(
                    f"{self.path}: cannot make its folder {file.parent} "
                    f"({error.strerror or error}); give a file in a folder you can write"
                ) from None
            return False
        if not file.is_file():
            raise GamesFileError(f"{self.path}: not a file; give the games file, or a new name")
        try:
            with file.open("rb") as handle:
                header = handle.read(len(_SQLITE_HEADER))
        except OSError as error:
            raise GamesFileError(
                f"{self.path}: cannot be read ({error.strerror or error})"
            ) from None
        if not header:
            raise self._refusal(
                "is empty (0 bytes): not a games file this server wrote (it writes its table "
                "when it makes one), perhaps one truncated",
                damaged=True,
                readable=False,
            )
        if header != _SQLITE_HEADER:
            raise self._refusal(
                "is not an SQLite file, so not a games file", damaged=True, readable=False
            )
        return True

    def _connect(self, file: Path) -> sqlite3.Connection:
        if not self.read_only:
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA busy_timeout = 5000")
            db.execute("PRAGMA synchronous = FULL")  # a commit is on disk, power loss or not
            return db
        uri = f"file:{quote(str(file.resolve()))}?mode=ro"
        if not Path(f"{self.path}-wal").exists():
            # Nothing in a write-ahead log to read: SQLite need not make its -shm file beside
            # the file either, which a read-only folder would refuse.
            uri += "&immutable=1"
        return sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)

    def _check_contents(self, existed: bool) -> None:
        """Schema, size, SQLite's quick check and every record; see the module docstring."""
        db = self._db
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if not existed and not self.read_only:
            db.execute("PRAGMA journal_mode = WAL")  # readers never wait for a write
            db.execute(_SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            return
        if "games" not in tables:
            raise self._refusal(
                "is an SQLite file without the games table: not a games file", damaged=False
            )  # another program's file: never written to
        columns = {row[1] for row in db.execute("PRAGMA table_info(games)")}
        if not _COLUMNS <= columns:
            missing = ", ".join(sorted(_COLUMNS - columns))
            raise self._refusal(f"has a games table without {missing}", damaged=False)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise GamesFileError(
                f"{self.path}: written by a newer trapy-web (schema {version}, this one "
                f"reads {SCHEMA_VERSION}); upgrade trapy_rl or give another --db"
            )
        self._check_length()
        problems = [row[0] for row in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise self._refusal(f"is damaged ({problems[0]})", damaged=True, readable=False)
        self.damaged = self._unreadable_records()
        if self.damaged and not self.read_only:
            raise self._damaged_refusal()

    def _damaged_refusal(self) -> GamesFileError:
        game, reason = next(iter(self.damaged.items()))
        total = self._db.execute("SELECT count(*) FROM games").fetchone()[0]
        return self._refusal(
            f"has {len(self.damaged)} of {total} games that cannot be read (game {game}: {reason})",
            damaged=True,
        )

    def _check_length(self) -> None:
        """A file shorter than its header's page count, with no write-ahead log to hold the
        rest, has lost its end."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        page_size = self._db.execute("PRAGMA page_size").fetchone()[0]
        wal = Path(f"{self.path}-wal")
        size = Path(self.path).stat().st_size
        if size < pages * page_size and not (wal.exists() and wal.stat().st_size):
            raise self._refusal(
                f"is truncated ({size:,} bytes of the {pages * page_size:,} its header counts)",
                damaged=True,
                readable=False,
            )

    def _unreadable_records(self) -> dict[str, str]:
        """id -> the reason, for each record whose summary or game is no JSON object."""
        damaged = {}
        for game_id, summary, data in self._db.execute("SELECT id, summary, data FROM games"):
            reason = _unreadable(summary, data)
            if reason:
                damaged[str(game_id)] = reason
        return damaged

    def _check_writable(self) -> None:
        """Write and commit (the schema mark): a file the server cannot write is refused now,
        not at the first move."""
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _sqlite_refusal(self, error: sqlite3.Error) -> GamesFileError:
        """SQLite's error at start as a refusal: a damaged file, or one it cannot write (or,
        read-only, read)."""
        code = getattr(error, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return self._refusal(f"is damaged ({error})", damaged=True, readable=False)
        if self.read_only:
            return GamesFileError(f"{self.path} cannot be read ({error})")
        try:  # a file it cannot write may be damaged too: that comes first
            probe = GameDatabase(self.path, read_only=True, restore_hint=self._hint)
        except GamesFileError as damaged:
            return damaged
        try:
            if probe.damaged:
                return probe._damaged_refusal()
        finally:
            probe.close()
        return GamesFileError(
            f"{self.path} cannot be written ({error}); make the file and its folder writable, "
            "or serve it as it is with --read-only"
        )

    def _refusal(self, problem: str, *, damaged: bool, readable: bool = True) -> GamesFileError:
        """The one-line refusal: the problem, then what to do: restore the copy (if there is
        one), serve it read-only (where records can be read), move it aside."""
        if not damaged:
            return GamesFileError(f"{self.path} {problem}; give another --db")
        copy = backup_path(self.path)
        steps = []
        if copy.is_file():
            when = datetime.datetime.fromtimestamp(copy.stat().st_mtime)
            steps.append(f"restore its copy of {when:%Y-%m-%d %H:%M} with: {self._hint}")
        if readable:
            steps.append("serve the games that can be read with --read-only")
        steps.append("move the file aside to start with no games")
        return GamesFileError(
            f"{self.path} {problem}; "
            + ("" if copy.is_file() else "no copy to restore; ")
            + "; or ".join(steps)
        )

    # ------------------------------------------------------------------ games
    def save(self, game_id: str, summary: dict[str, Any], data: dict[str, Any]) -> None:
        """Write the game ``game_id`` (made now if new), committed (on disk) on return.

        Raises:
            ReadOnlyError: the file is served read-only.
            StorageError: the write failed; the file holds the game as before.
        """
        if self.read_only:
            raise ReadOnlyError(
                "the games file is served read-only (--read-only): no game or move is saved"
            )
        now = time.time()
        with self._lock:
            try:
                self._db.execute(
                    "INSERT INTO games (id, created, updated, summary, data) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT(id) DO UPDATE SET updated = excluded.updated,"
                    " summary = excluded.summary, data = excluded.data",
                    (game_id, now, now, json.dumps(summary), json.dumps(data)),
                )
            except sqlite3.Error as error:
                log.error("%s: game %s not saved: %s", self.path, game_id, error)
                raise StorageError(
                    f"the games file could not be written ({error}): the change is not kept; "
                    "the server's log says more"
                ) from None
            self._changed_since_backup = True
        if time.monotonic() - self._last_backup > BACKUP_INTERVAL_S:
            self.backup()

    def load(self, game_id: str) -> dict[str, Any] | None:
        """The game's data as saved, or None when there is no such game.

        Raises:
            DamagedGameError: its record cannot be read.
        """
        with self._lock:
            try:
                row = self._db.execute(
                    "SELECT summary, data FROM games WHERE id = ?", (game_id,)
                ).fetchone()
            except sqlite3.DatabaseError as error:
                raise self.report_damaged(game_id, str(error)) from None
        if row is None:
            return None
        reason = _unreadable(*row)
        if reason:
            raise self.report_damaged(game_id, reason)
        return json.loads(row[1])

    def list(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        """The most recently changed games that can be read, first, ``limit`` of them after the
        first ``offset``: ``id``, ``created``, ``updated`` (seconds since the epoch) and the
        summary's fields. Those that cannot be read are left out (`damaged` names them)."""
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT id, created, updated, summary FROM games ORDER BY updated DESC, id"
                    " LIMIT ? OFFSET ?",
                    (limit, offset),
                ).fetchall()
            except sqlite3.DatabaseError as error:
                log.error("%s: the list of games cannot be read: %s", self.path, error)
                self.damaged.setdefault("*", f"the list of games cannot be read ({error})")
                return []
        games = []
        for game_id, created, updated, summary in rows:
            if game_id in self.damaged:  # found at start: its game cannot be opened
                continue
            reason = _unreadable(summary, "{}")
            if reason:
                self.damaged.setdefault(str(game_id), reason)
                continue
            games.append({"id": game_id, "created": created, "updated": updated,
                          **json.loads(summary)})  # fmt: skip
        return games

    def report_damaged(self, game_id: str, reason: str) -> DamagedGameError:
        """Note (in `damaged` and the log) that game ``game_id`` cannot be read, for
        ``reason``; the error to raise."""
        self.damaged.setdefault(game_id, reason)
        log.error("%s: game %s cannot be read: %s", self.path, game_id, reason)
        return DamagedGameError(
            f"game {game_id} cannot be read from the games file, which is damaged there "
            f"({reason}); restore its copy ({self._hint}) to get it back"
        )

    # ------------------------------------------------------------------ the rolling copy
    def backup(self) -> Path | None:
        """Copy the file to `backup_path` with SQLite's backup API (a temporary file renamed
        into place, so a copy is whole or absent); the copy's path (None for ``:memory:``
        or a file served read-only). A copy that fails is logged; the games go on."""
        if self.path == MEMORY or self.read_only:
            return None
        target = backup_path(self.path)
        partial = target.with_name(target.name + ".partial")
        with self._lock:
            self._last_backup = time.monotonic()
            try:
                copy = sqlite3.connect(partial, isolation_level=None)
                try:
                    self._db.backup(copy)
                    copy.execute("PRAGMA journal_mode = DELETE")  # one file, readable anywhere
                    problem = _copy_problem(copy)
                finally:
                    copy.close()
                if problem:  # the file went bad under the server: keep the previous copy
                    raise sqlite3.DatabaseError(problem)
                with partial.open("rb+") as handle:
                    os.fsync(handle.fileno())
                os.replace(partial, target)
            except (sqlite3.Error, OSError) as error:
                log.error("%s: the copy %s was not made: %s", self.path, target, error)
                with contextlib.suppress(OSError):
                    partial.unlink()
                return None
            self._changed_since_backup = False
        return target

    def count(self) -> int:
        """How many games the file holds."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def delete(self, game_id: str) -> None:
        """Delete the game ``game_id`` (nothing when there is none), committed on return."""
        with self._lock:
            self._db.execute("DELETE FROM games WHERE id = ?", (game_id,))

    def close(self) -> None:
        """A last copy when games changed since the previous one, then close the file (again:
        nothing)."""
        if self._closed:
            return
        if self._changed_since_backup:
            self.backup()
        with self._lock:
            self._closed = True
            self._db.close()


def restore(path: str | Path) -> str:
    """Put the rolling copy of the games file ``path`` back in its place; the damaged file
    (with its write-ahead log) is kept beside it as ``<path>.damaged-<time>``.

    Returns:
        One line saying what was done.

    Raises:
        GamesFileError: when there is no copy, or the copy itself fails the checks.
    """
    path = Path(path)
    copy = backup_path(path)
    if not copy.is_file():
        raise GamesFileError(f"{path}: no copy to restore ({copy} does not exist)")
    try:
        checked = GameDatabase(copy, read_only=True)
    except GamesFileError as error:
        raise GamesFileError(f"{copy}, the copy, cannot be restored: {error}") from None
    games, damaged = len(checked.list(limit=2**31 - 1)), len(checked.damaged)
    checked.close()
    if damaged:
        raise GamesFileError(f"{copy}, the copy, has {damaged} games that cannot be read")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    kept = None
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{path}{suffix}")
        if part.exists():
            aside = Path(f"{path}.damaged-{stamp}{suffix}")
            os.replace(part, aside)
            kept = kept or aside
    partial = Path(f"{path}.restoring")
    shutil.copyfile(copy, partial)
    with partial.open("rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, path)
    when = datetime.datetime.fromtimestamp(copy.stat().st_mtime)
    aside_text = f"; the damaged file is kept as {kept}" if kept else ""
    return f"restored {path} from its copy of {when:%Y-%m-%d %H:%M} ({games} games){aside_text}"


def _copy_problem(db: sqlite3.Connection) -> str | None:
    """What makes a fresh copy unfit to restore (None: nothing)."""
    problems = [row[0] for row in db.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        return f"the copy is damaged ({problems[0]})"
    for game_id, summary, data in db.execute("SELECT id, summary, data FROM games"):
        reason = _unreadable(summary, data)
        if reason:
            return f"game {game_id} of the copy cannot be read: {reason}"
    return None


def _unreadable(summary: Any, data: Any) -> str | None:
    """Why a record's summary or game is no JSON object (None: both are)."""
    for name, text in (("summary", summary), ("game", data)):
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as error:  # a text of NULs, bytes, a cut-off string
            return f"its {name} is not JSON: {error}"
        if not isinstance(value, dict):
            return f"its {name} is not a JSON object"
    return None
