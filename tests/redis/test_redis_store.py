"""`RedisSessionStore` against a real redis-server: the shared store suite, a server restart, key layout."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from redis.asyncio import Redis
from stores_suite import Backend, RedisServer, ServerRestartSuite, StoreSuite, free_port

from openagent_redis import RedisSessionStore


class RedisBackend(Backend):
    name = "redis"
    schemes = ("redis", "rediss", "unix")

    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.url = server.url

    def store(self, namespace: str | None = None) -> RedisSessionStore:
        return RedisSessionStore(self.url, prefix=namespace or f"t{uuid.uuid4().hex}")

    def namespace_of(self, store: Any) -> str:
        return str(store.prefix)

    def unreachable(self) -> RedisSessionStore:
        return RedisSessionStore(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=5)

    def restart(self, *, crash: bool) -> Callable[[], None]:
        self.server.stop(crash=crash)
        return self.server.start


class TestRedisStore(StoreSuite, ServerRestartSuite):
    @pytest.fixture
    def backend(self, redis_server: RedisServer) -> RedisBackend:
        return RedisBackend(redis_server)


@pytest.mark.anyio
async def test_keys_live_under_the_prefix_and_delete_leaves_nothing(redis_server: RedisServer) -> None:
    prefix = f"t{uuid.uuid4().hex}"
    key: Any = {"project_key": "proj", "session_id": "s"}
    async with Redis.from_url(redis_server.url) as client, RedisSessionStore(client, prefix=prefix) as store:
        await store.append(key, [{"type": "x", "uuid": "1"}])
        await store.append({**key, "subpath": "subagents/a"}, [{"type": "x", "uuid": "1"}])
        assert sorted(await client.keys(f"{prefix}:*")) == sorted(
            k.encode()
            for k in [
                f'{prefix}:s:["proj", "s"]:e:',
                f'{prefix}:s:["proj", "s"]:u:',
                f'{prefix}:s:["proj", "s"]:e:subagents/a',
                f'{prefix}:s:["proj", "s"]:u:subagents/a',
                f'{prefix}:s:["proj", "s"]:subkeys',
                f'{prefix}:p:"proj"',
            ]
        )
        await store.delete(key)
        assert await client.keys(f"{prefix}:*") == []
        await store.aclose()
        assert await client.ping()  # a client passed in stays open: its owner closes it


@pytest.mark.anyio
async def test_server_error_becomes_session_error(redis_server: RedisServer) -> None:
    from openagent._errors import SessionError

    prefix = f"t{uuid.uuid4().hex}"
    key: Any = {"project_key": "proj", "session_id": "s"}
    async with Redis.from_url(redis_server.url) as client, RedisSessionStore(client, prefix=prefix) as store:
        await client.set(f'{prefix}:s:["proj", "s"]:e:', "a string where a list belongs")
        with pytest.raises(SessionError, match="could not load proj/s: ResponseError: WRONGTYPE"):
            await store.load(key)
        with pytest.raises(SessionError, match="could not append to proj/s: ResponseError"):
            await store.append(key, [{"type": "x"}])


@pytest.mark.anyio
async def test_unix_socket_url_reaches_the_same_data(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openagent._plugins import registry

    monkeypatch.setenv("OPENAGENT_PLUGINS", "redis")
    key: Any = {"project_key": "proj", "session_id": uuid.uuid4().hex}
    async with registry().session_store_factory("unix")(f"unix://{redis_server.socket}?db=0") as store:
        await store.append(key, [{"type": "x", "uuid": "1"}])
    async with RedisSessionStore(redis_server.url) as store:
        assert await store.load(key) == [{"type": "x", "uuid": "1"}]


def test_a_missing_server_binary_names_the_debian_package() -> None:
    from stores_suite import _binary

    with pytest.raises(pytest.fail.Exception, match=r"install the Debian package 'redis-server'"):
        _binary("redis-server-that-does-not-exist", "redis-server")
