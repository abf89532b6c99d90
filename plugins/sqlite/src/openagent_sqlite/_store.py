"""`SQLiteSessionStore`: transcripts in one SQLite table, written through aiosqlite in WAL mode."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import unquote, urlsplit

import aiosqlite
import anyio
import anyio.to_thread

from openagent.errors import ConfigError, SessionError
from openagent.sessions import SessionKey, SessionListEntry, check_key, encode_entries, require_asyncio

__all__ = ["SQLiteSessionStore"]

_DRIVER = "aiosqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL DEFAULT '',
    uuid TEXT,
    entry TEXT NOT NULL,
    mtime INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS session_entries_uuid
    ON session_entries (project_key, session_id, subpath, uuid);
CREATE INDEX IF NOT EXISTS session_entries_order
    ON session_entries (project_key, session_id, subpath, seq);
"""
# Milliseconds from SQLite's own clock, so every process writing the file stamps with the same source.
_INSERT = """
INSERT INTO session_entries (project_key, session_id, subpath, uuid, entry, mtime)
VALUES (?, ?, ?, ?, ?, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (project_key, session_id, subpath, uuid) DO NOTHING
"""


def _parts(key: SessionKey) -> tuple[str, str, str]:
    return key["project_key"], key["session_id"], key.get("subpath") or ""


class SQLiteSessionStore:
    """A `SessionStore` in one SQLite file (WAL journal, so readers never block the writer).

    One table holds every entry; a unique index on ``(project_key, session_id, subpath, uuid)`` makes
    ``uuid`` an idempotency key. Several processes may share the file: writers take SQLite's write lock
    (``BEGIN IMMEDIATE``) and wait up to ``timeout`` seconds for it. aiosqlite is asyncio-only, so this
    store is too. Failures raise `openagent.errors.SessionError`.

    Example:
        ```python
        async with SQLiteSessionStore("sessions.db") as store:
            await store.append({"project_key": "p", "session_id": "s"}, [{"type": "user", "uuid": "1"}])
        ```
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
    ) -> None:
        """Open (lazily, on first use) the database at ``path``.

        Args:
            path: The database file, created with its table on first use; ``":memory:"`` for a private
                in-memory database.
            timeout: Seconds to wait for another process's write lock before failing.
            synchronous: ``"FULL"`` (default) fsyncs each commit, so an acknowledged append survives a
                power loss; ``"NORMAL"`` is faster and survives a process crash but not a power loss.
        """
        self.path = str(path)
        self.timeout = timeout
        self.synchronous = synchronous
        self._conn: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> SQLiteSessionStore:
        """A store for ``sqlite:///relative.db``, ``sqlite:////absolute.db`` or ``sqlite://`` (in memory).

        A driver suffix in the scheme (``sqlite+aiosqlite://``, SQLAlchemy's spelling) is accepted.
        """
        parts = urlsplit(url)
        if parts.scheme.split("+")[0] != "sqlite" or parts.netloc not in ("", "localhost"):
            raise ConfigError(f"not a SQLite URL (want sqlite:///path/to/file.db): {url!r}")
        path = unquote(parts.path)[1:] if parts.path.startswith("/") else unquote(parts.path)
        return cls(Path(path).expanduser() if path and path != ":memory:" else ":memory:")

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"

    # -- the SessionStore protocol ---------------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Persist ``entries`` in order in one transaction; an entry whose ``uuid`` is stored is skipped."""
        check_key(key)
        rows = encode_entries(entries)
        if not rows:
            return
        pk, sid, sub = _parts(key)
        async with self._connection("append to", key) as conn:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                await conn.executemany(_INSERT, [(pk, sid, sub, uuid, text) for uuid, text in rows])
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await conn.rollback()
                raise
            await conn.commit()

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry appended under ``key`` in order, or ``None`` if nothing was ever written there."""
        check_key(key)
        async with self._connection("load", key) as conn:
            cursor = await conn.execute(
                "SELECT entry FROM session_entries WHERE project_key = ? AND session_id = ? AND subpath = ? "
                "ORDER BY seq",
                _parts(key),
            )
            entries = [json.loads(text) for (text,) in await cursor.fetchall()]
        return entries or None

    async def list_sessions(self, project_key: str) -> list[SessionListEntry]:
        """The main transcripts of ``project_key``, with their last write time in epoch milliseconds."""
        async with self._connection("list sessions of", {"project_key": project_key, "session_id": "*"}) as c:
            cursor = await c.execute(
                "SELECT session_id, MAX(mtime) FROM session_entries WHERE project_key = ? AND subpath = '' "
                "GROUP BY session_id",
                (project_key,),
            )
            rows = await cursor.fetchall()
        return [{"session_id": sid, "mtime": int(mtime)} for sid, mtime in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete one transcript; a key without ``subpath`` takes its subagent transcripts with it."""
        check_key(key)
        pk, sid, sub = _parts(key)
        query, args = "DELETE FROM session_entries WHERE project_key = ? AND session_id = ?", [pk, sid]
        if sub:
            query, args = f"{query} AND subpath = ?", [*args, sub]
        async with self._connection("delete", key) as conn:
            await conn.execute(query, args)
            await conn.commit()

    async def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths (subagent transcripts) stored under a session, sorted."""
        check_key(key)
        async with self._connection("list subkeys of", key) as conn:
            cursor = await conn.execute(
                "SELECT DISTINCT subpath FROM session_entries WHERE project_key = ? AND session_id = ? "
                "AND subpath != '' ORDER BY subpath",
                (key["project_key"], key["session_id"]),
            )
            rows = await cursor.fetchall()
        return [sub for (sub,) in rows]

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the database connection; the store cannot be used afterwards."""
        async with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                with self._errors("close", None):
                    await conn.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    @asynccontextmanager
    async def _connection(self, action: str, key: SessionKey | None) -> AsyncIterator[aiosqlite.Connection]:
        # One connection, one operation at a time: sqlite3 connections are not shared between transactions.
        require_asyncio(self, _DRIVER)
        async with self._lock:
            with self._errors(action, key):
                if self._closed:
                    raise SessionError(f"{self!r} is closed")
                if self._conn is None:
                    self._conn = await self._open()
                elif self._conn.in_transaction:  # an operation cancelled mid-commit left one open
                    await self._conn.rollback()
                yield self._conn

    async def _open(self) -> aiosqlite.Connection:
        conn = aiosqlite.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            await conn
        except BaseException:
            # aiosqlite (0.22) stops its worker thread without waiting for it when connecting fails; wait for
            # it here, or it reports to an event loop that may be closed by then.
            thread = getattr(conn, "_thread", None)
            if thread is not None:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(thread.join)
            raise
        try:
            await self._wal(conn)
            await conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            await conn.executescript(_SCHEMA)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _wal(self, conn: aiosqlite.Connection) -> None:
        """Switch the database to WAL, waiting out other connections doing the same.

        SQLite answers a journal-mode change that races another connection's with ``database is locked`` at
        once, without calling the busy handler that ``timeout`` sets; the mode is stored in the file, so only
        the first connections ever race, and they retry here for up to ``timeout`` seconds.
        """
        with anyio.move_on_after(self.timeout):
            while True:
                try:
                    await conn.execute("PRAGMA journal_mode = WAL")  # an in-memory database stays "memory"
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                await anyio.sleep(0.01)
        raise SessionError(f"{self.path}: still locked after {self.timeout} s of trying to switch to WAL")

    @contextmanager
    def _errors(self, action: str, key: SessionKey | None) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError, ValueError) as exc:
            where = f" {key['project_key']}/{key['session_id']}" if key else ""
            sub = f"/{key['subpath']}" if key and key.get("subpath") else ""
            problem = f"{type(exc).__name__}: {exc}"
            raise SessionError(
                f"SQLite session store {self.path!r}: could not {action}{where}{sub}: {problem}"
            ) from exc
