"""`RedisSessionStore`: one Redis list per transcript, a sorted set per project for `list_sessions`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self, cast

from redis.asyncio import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from openagent.errors import SessionError
from openagent.sessions import SessionKey, SessionListEntry, check_key, encode_entries, require_asyncio

__all__ = ["RedisSessionStore"]

_DRIVER = "redis-py"


# Keys, for prefix P, project K, session S, subpath B ("" for the main transcript):
#   P:s:["K","S"]:e:B  list of JSON entries       P:s:["K","S"]:u:B  set of stored uuids
#   P:s:["K","S"]:subkeys  set of subpaths         P:p:"K"  sorted set session id -> mtime (ms)
# JSON-quoting K and S keeps keys unambiguous whatever characters the ids contain.

# KEYS: entries, uuids, index (main) or subkeys set (subpath). ARGV: subpath, session id, then pairs of
# (uuid marker, json): the marker is "u" + uuid, or "" for an entry without uuid (appended without dedup).
# One script, so the dedup check, the push and the index update are atomic.
_APPEND = """
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  if id == '' or redis.call('SADD', KEYS[2], id) == 1 then
    redis.call('RPUSH', KEYS[1], ARGV[i + 1])
  end
end
if ARGV[1] == '' then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[2])
else
  redis.call('SADD', KEYS[3], ARGV[1])
end
return 1
"""
# KEYS: index, subkeys set. ARGV: session key base, session id. Deletes the main transcript and every subpath.
_DELETE_SESSION = """
for _, sub in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  redis.call('DEL', ARGV[1] .. 'e:' .. sub, ARGV[1] .. 'u:' .. sub)
end
redis.call('DEL', ARGV[1] .. 'e:', ARGV[1] .. 'u:', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[2])
return 1
"""


def _encode(entries: list[dict[str, Any]]) -> list[str]:
    """Flat ``[marker, json, …]`` script arguments (the marker is ``u<uuid>``, or empty without one)."""
    return [
        part for uuid, text in encode_entries(entries) for part in ("" if uuid is None else f"u{uuid}", text)
    ]


class RedisSessionStore:
    """A `SessionStore` on Redis, so a worker on any host can resume any conversation.

    Each transcript is a list of JSON strings; a set of stored uuids next to it makes ``uuid`` an
    idempotency key, and a sorted set per project (session id scored by last write, epoch ms from the
    server's clock) answers `list_sessions`. Appends and deletes run as Lua scripts, so each is atomic.
    An append is acknowledged once Redis has applied it; that it survives a Redis crash depends on the
    server's persistence (``appendonly yes`` with ``appendfsync always`` loses nothing).
    redis-py's asyncio client is asyncio-only, so this store is too. Failures raise
    `openagent.errors.SessionError`.

    Example:
        ```python
        async with RedisSessionStore("redis://localhost:6379/0") as store:
            entries = await store.load({"project_key": "p", "session_id": "s"})
        ```
    """

    def __init__(
        self,
        url: str | Redis = "redis://localhost:6379/0",
        *,
        prefix: str = "openagent",
        socket_timeout: float = 30.0,
    ) -> None:
        """Connect (lazily, on first use) to the Redis server at ``url``.

        Args:
            url: A ``redis://``, ``rediss://`` or ``unix://`` URL (redis-py's syntax, options in the query),
                or a ready `redis.asyncio.Redis` client, which the store then does not close.
            prefix: Prepended to every key, so several stores can share one database.
            socket_timeout: Seconds to wait for the server before failing an operation.
        """
        self.prefix = prefix
        self._owns_client = not isinstance(url, Redis)
        if isinstance(url, Redis):
            self._redis = url
        else:
            # One quick retry on a dropped connection, so a pooled connection that went stale while the
            # server restarted is replaced instead of failing the next call.
            retry = Retry(ExponentialBackoff(cap=0.2, base=0.02), 1)
            self._redis = Redis.from_url(
                url, socket_timeout=socket_timeout, socket_connect_timeout=10.0, retry=retry
            )
        self._append = self._redis.register_script(_APPEND)
        self._delete_session = self._redis.register_script(_DELETE_SESSION)
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> RedisSessionStore:
        """A store for a ``redis://``, ``rediss://`` or ``unix://`` URL."""
        return cls(url)

    def __repr__(self) -> str:
        kwargs = self._redis.connection_pool.connection_kwargs
        where = kwargs.get("path") or f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
        return f"RedisSessionStore({where}, prefix={self.prefix!r})"

    def _base(self, key: SessionKey) -> str:
        return f"{self.prefix}:s:{json.dumps([key['project_key'], key['session_id']], ensure_ascii=False)}:"

    def _index(self, project_key: str) -> str:
        return f"{self.prefix}:p:{json.dumps(project_key, ensure_ascii=False)}"

    # -- the SessionStore protocol ---------------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Persist ``entries`` in order, atomically; an entry whose ``uuid`` is stored is skipped."""
        check_key(key)
        args = _encode(entries)
        if not args:
            return
        base, sub = self._base(key), key.get("subpath") or ""
        third = self._index(key["project_key"]) if not sub else base + "subkeys"
        with self._errors("append to", key):
            await self._append(
                keys=[base + "e:" + sub, base + "u:" + sub, third], args=[sub, key["session_id"], *args]
            )

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry appended under ``key`` in order, or ``None`` if nothing was ever written there."""
        check_key(key)
        with self._errors("load", key):
            raw = await self._redis.lrange(self._base(key) + "e:" + (key.get("subpath") or ""), 0, -1)
            return [json.loads(item) for item in raw] or None

    async def list_sessions(self, project_key: str) -> list[SessionListEntry]:
        """The main transcripts of ``project_key``, with their last write time in epoch milliseconds."""
        with self._errors("list sessions of", {"project_key": project_key, "session_id": "*"}):
            rows = cast(
                "list[tuple[bytes, float]]",
                await self._redis.zrange(self._index(project_key), 0, -1, withscores=True),
            )
        return [{"session_id": sid.decode(), "mtime": int(score)} for sid, score in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete one transcript; a key without ``subpath`` takes its subagent transcripts with it."""
        check_key(key)
        base, sub = self._base(key), key.get("subpath") or ""
        with self._errors("delete", key):
            if not sub:
                await self._delete_session(
                    keys=[self._index(key["project_key"]), base + "subkeys"], args=[base, key["session_id"]]
                )
                return
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.delete(base + "e:" + sub, base + "u:" + sub)
                pipe.srem(base + "subkeys", sub)
                await pipe.execute()

    async def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths (subagent transcripts) stored under a session, sorted."""
        check_key(key)
        with self._errors("list subkeys of", key):
            members = cast("set[bytes]", await self._redis.smembers(self._base(key) + "subkeys"))
        return sorted(m.decode() for m in members)

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the connection pool (not a client passed in); the store cannot be used afterwards."""
        if self._closed:
            return
        if self._owns_client:
            with self._errors("close", None):
                await self._redis.aclose()
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    @contextmanager
    def _errors(self, action: str, key: SessionKey | None) -> Iterator[None]:
        require_asyncio(self, _DRIVER)
        if self._closed:
            raise SessionError(f"{self!r} is closed")
        try:
            yield
        except (RedisError, OSError, ValueError) as exc:
            where = f" {key['project_key']}/{key['session_id']}" if key else ""
            sub = f"/{key['subpath']}" if key and key.get("subpath") else ""
            raise SessionError(
                f"Redis session store {self!r}: could not {action}{where}{sub}: {type(exc).__name__}: {exc}"
            ) from exc
