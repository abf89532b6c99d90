"""`PostgresSessionStore`: transcripts in one indexed PostgreSQL table, entries as JSONB, through asyncpg."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

import anyio
import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information

from openagent.plugin import (
    ConfigError,
    SessionError,
    SessionKey,
    SessionListEntry,
    check_key,
    encode_entries,
    require_asyncio,
)

__all__ = ["PostgresSessionStore"]

_DRIVER = "asyncpg"


T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {t} (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_key text NOT NULL,
    session_id text NOT NULL,
    subpath text NOT NULL DEFAULT '',
    uuid text,
    entry jsonb NOT NULL,
    mtime bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
);
CREATE UNIQUE INDEX IF NOT EXISTS {i}_uuid ON {t} (project_key, session_id, subpath, uuid);
CREATE INDEX IF NOT EXISTS {i}_order ON {t} (project_key, session_id, subpath, seq);
"""
# One statement per batch: atomic, one round trip. The identity values are drawn in `ord` order, so the
# batch keeps its order; ON CONFLICT skips a uuid already stored (NULL uuids never conflict).
_APPEND = """
INSERT INTO {t} (project_key, session_id, subpath, uuid, entry)
SELECT $1, $2, $3, u.uuid, u.entry::jsonb
FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS u(uuid, entry, ord) ORDER BY u.ord
ON CONFLICT (project_key, session_id, subpath, uuid) DO NOTHING
"""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,50}")
# Errors after which the connection is gone but the server may be back: safe to retry an idempotent call once.
_CONNECTION_LOST = (asyncpg.PostgresConnectionError, asyncpg.exceptions.AdminShutdownError, ConnectionError)


async def _keep_session(connection: asyncpg.Connection) -> None:
    """What the pool runs on a connection it takes back: nothing (asyncpg's reset is a round trip more).

    Nothing here changes a session's state: no ``SET``, ``LISTEN``, cursors or session-level locks (the
    schema lock is a transaction's). An open transaction is still rolled back by the pool itself.
    """


class PostgresSessionStore:
    """A `SessionStore` on PostgreSQL, so a worker on any host can resume any conversation.

    One table holds every entry as ``JSONB``, ordered by an identity column; a unique index on
    ``(project_key, session_id, subpath, uuid)`` makes ``uuid`` an idempotency key. The table is created on
    first use. asyncpg is asyncio-only, so this store is too. Failures raise `openagent._errors.SessionError`.

    Example:
        ```python
        async with PostgresSessionStore("postgresql://localhost/agents") as store:
            await store.append({"project_key": "p", "session_id": "s"}, [{"type": "user", "uuid": "1"}])
        ```
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "openagent_session_entries",
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
        command_timeout: float = 60.0,
    ) -> None:
        """Connect (lazily, on first use) to the database at ``dsn``.

        Args:
            dsn: A ``postgresql://`` or ``postgres://`` URL (libpq's syntax and query options).
            table: The table to keep entries in (a plain identifier), created if missing.
            min_size: Connections the pool keeps open.
            max_size: Most connections the pool opens.
            timeout: Seconds to wait when connecting.
            command_timeout: Seconds to wait for one statement.

        Raises:
            ConfigError: ``table`` is not a plain identifier.
        """
        if not _IDENTIFIER.fullmatch(table):
            raise ConfigError(f"table name must be a plain identifier (letters, digits, _): {table!r}")
        self.dsn = dsn
        self.table = table
        self._pool_args: dict[str, Any] = {
            "min_size": min_size,
            "max_size": max_size,
            "timeout": timeout,
            "command_timeout": command_timeout,
            "reset": _keep_session,
        }
        self._pool: asyncpg.Pool | None = None
        self._lock = anyio.Lock()
        self._closed = False
        self._sql = {
            name: sql.format(t=f'"{table}"', i=table)
            for name, sql in [("schema", _SCHEMA), ("append", _APPEND)]
        }

    @classmethod
    def from_url(cls, url: str) -> PostgresSessionStore:
        """A store for a ``postgresql://`` or ``postgres://`` URL.

        A driver suffix in the scheme (``postgresql+asyncpg://``, SQLAlchemy's spelling) is dropped.
        """
        scheme, sep, rest = url.partition("://")
        return cls(f"{scheme.split('+')[0]}{sep}{rest}")

    def __repr__(self) -> str:
        parts = urlsplit(self.dsn)
        where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path}"  # never the password
        return f"PostgresSessionStore({where!r}, table={self.table!r})"

    # -- the SessionStore protocol ---------------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Persist ``entries`` in order, atomically; an entry whose ``uuid`` is stored is skipped."""
        check_key(key)
        encoded = encode_entries(entries)
        uuids, texts = [u for u, _ in encoded], [t for _, t in encoded]
        if not texts:
            return
        pk, sid, sub = key["project_key"], key["session_id"], key.get("subpath") or ""
        await self._run(
            "append to",
            key,
            lambda c: c.execute(self._sql["append"], pk, sid, sub, uuids, texts),
            idempotent=None not in uuids,
        )

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry appended under ``key`` in order, or ``None`` if nothing was ever written there."""
        check_key(key)
        query = (
            f'SELECT entry::text FROM "{self.table}" '
            "WHERE project_key = $1 AND session_id = $2 AND subpath = $3 "
            "ORDER BY seq"
        )
        args = (key["project_key"], key["session_id"], key.get("subpath") or "")
        rows = await self._run("load", key, lambda c: c.fetch(query, *args))
        return [json.loads(row[0]) for row in rows] or None

    async def list_sessions(self, project_key: str) -> list[SessionListEntry]:
        """The main transcripts of ``project_key``, with their last write time in epoch milliseconds."""
        query = (
            f"SELECT session_id, max(mtime) FROM \"{self.table}\" WHERE project_key = $1 AND subpath = '' "
            "GROUP BY session_id"
        )
        key: SessionKey = {"project_key": project_key, "session_id": "*"}
        rows = await self._run("list sessions of", key, lambda c: c.fetch(query, project_key))
        return [{"session_id": row[0], "mtime": int(row[1])} for row in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete one transcript; a key without ``subpath`` takes its subagent transcripts with it."""
        check_key(key)
        query = f'DELETE FROM "{self.table}" WHERE project_key = $1 AND session_id = $2'
        args: list[str] = [key["project_key"], key["session_id"]]
        if sub := key.get("subpath"):
            query, args = f"{query} AND subpath = $3", [*args, sub]
        await self._run("delete", key, lambda c: c.execute(query, *args))

    async def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths (subagent transcripts) stored under a session, sorted."""
        check_key(key)
        query = (
            f'SELECT DISTINCT subpath FROM "{self.table}" WHERE project_key = $1 AND session_id = $2 '
            "AND subpath <> '' ORDER BY subpath"
        )
        rows = await self._run(
            "list subkeys of", key, lambda c: c.fetch(query, key["project_key"], key["session_id"])
        )
        return [row[0] for row in rows]

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the connection pool; the store cannot be used afterwards."""
        async with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            try:
                await pool.close()
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                raise SessionError(f"{self!r}: could not close the connection pool: {exc}") from exc

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _run(
        self,
        action: str,
        key: SessionKey,
        call: Callable[[asyncpg.Connection], Awaitable[T]],
        *,
        idempotent: bool = True,
    ) -> T:
        """Run ``call`` on a pooled connection, retrying once if an idempotent call lost its connection."""
        for attempt in (1, 2):
            try:
                pool = await self._get_pool()
                async with pool.acquire() as conn:
                    return await call(conn)
            except _CONNECTION_LOST as exc:
                if attempt == 1 and idempotent:
                    continue
                raise self._error(action, key, exc) from exc
            except (
                asyncpg.PostgresError,
                asyncpg.InterfaceError,
                asyncpg.InternalClientError,
                OSError,
                TimeoutError,
            ) as exc:
                raise self._error(action, key, exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _error(self, action: str, key: SessionKey, exc: BaseException) -> SessionError:
        sub = f"/{key['subpath']}" if key.get("subpath") else ""
        where = f"{key['project_key']}/{key['session_id']}{sub}"
        return SessionError(f"{self!r}: could not {action} {where}: {type(exc).__name__}: {exc}")

    async def _get_pool(self) -> asyncpg.Pool:
        require_asyncio(self, _DRIVER)
        async with self._lock:
            if self._closed:
                raise SessionError(f"{self!r} is closed")
            if self._pool is None:
                pool = await asyncpg.create_pool(self.dsn, **self._pool_args)
                try:
                    async with pool.acquire() as conn, conn.transaction():
                        # Serialize concurrent first uses: CREATE ... IF NOT EXISTS races in PostgreSQL.
                        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", self.table)
                        await conn.execute(self._sql["schema"])
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
            return self._pool
