"""`PostgresSessionStore` against a real PostgreSQL: the shared store suite, a server restart, the schema."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from stores_suite import Backend, PostgresServer, ServerRestartSuite, StoreSuite, free_port

from openagent._errors import ConfigError, SessionError
from openagent_postgres import PostgresSessionStore


class PostgresBackend(Backend):
    name = "postgres"
    schemes = ("postgresql", "postgres")

    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.url = server.url

    def store(self, namespace: str | None = None) -> PostgresSessionStore:
        return PostgresSessionStore(
            self.url, table=namespace or f"t{uuid.uuid4().hex}", min_size=1, max_size=4
        )

    def namespace_of(self, store: Any) -> str:
        return str(store.table)

    def unreachable(self) -> PostgresSessionStore:
        return PostgresSessionStore(f"postgresql://postgres:s3cret@127.0.0.1:{free_port()}/postgres")

    def restart(self, *, crash: bool) -> Callable[[], None]:
        self.server.stop(crash=crash)
        return self.server.start


class TestPostgresStore(StoreSuite, ServerRestartSuite):
    @pytest.fixture
    def backend(self, postgres_server: PostgresServer) -> PostgresBackend:
        return PostgresBackend(postgres_server)


@pytest.mark.parametrize("table", ["x; DROP TABLE y", 'a"b', "1abc", "", "schema.table"])
def test_table_must_be_a_plain_identifier(table: str) -> None:
    with pytest.raises(ConfigError, match="plain identifier"):
        PostgresSessionStore("postgresql://localhost/db", table=table)


@pytest.mark.anyio
async def test_one_table_jsonb_and_indexed(postgres_server: PostgresServer) -> None:
    table = f"t{uuid.uuid4().hex}"
    async with PostgresSessionStore(postgres_server.url, table=table) as store:
        await store.append({"project_key": "p", "session_id": "s"}, [{"type": "x", "uuid": "1"}])
    conn = await asyncpg.connect(postgres_server.url)
    try:
        columns = dict(
            await conn.fetch(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1", table
            )
        )
        indexes = [
            r[0] for r in await conn.fetch("SELECT indexdef FROM pg_indexes WHERE tablename = $1", table)
        ]
    finally:
        await conn.close()
    assert columns["entry"] == "jsonb"
    assert any("UNIQUE" in d and "(project_key, session_id, subpath, uuid)" in d for d in indexes)
    assert any("(project_key, session_id, subpath, seq)" in d for d in indexes)


@pytest.mark.anyio
async def test_nul_character_is_refused_with_session_error(postgres_server: PostgresServer) -> None:
    key: Any = {"project_key": "p", "session_id": "s"}
    async with PostgresSessionStore(postgres_server.url, table=f"t{uuid.uuid4().hex}") as store:
        with pytest.raises(SessionError, match="could not append to p/s: UntranslatableCharacterError"):
            await store.append(key, [{"type": "x", "uuid": "1"}, {"type": "x", "text": "a\u0000b"}])
        assert await store.load(key) is None  # the batch is all or nothing


@pytest.mark.anyio
async def test_password_never_appears_in_errors() -> None:
    async with PostgresSessionStore(f"postgresql://postgres:s3cret@127.0.0.1:{free_port()}/db") as store:
        with pytest.raises(SessionError) as info:
            await store.load({"project_key": "p", "session_id": "s"})
    assert "s3cret" not in str(info.value) and "s3cret" not in repr(store)


@pytest.mark.anyio
async def test_concurrent_first_use_creates_the_table_once(postgres_server: PostgresServer) -> None:
    import anyio

    table = f"t{uuid.uuid4().hex}"
    stores = [
        PostgresSessionStore(postgres_server.url, table=table, min_size=1, max_size=1) for _ in range(8)
    ]
    try:
        async with anyio.create_task_group() as tg:
            for i, store in enumerate(stores):
                tg.start_soon(store.append, {"project_key": "p", "session_id": f"s{i}"}, [{"type": "x"}])
        assert len(await stores[0].list_sessions("p")) == 8
    finally:
        for store in stores:
            await store.aclose()


@pytest.mark.anyio
async def test_driver_suffix_in_the_url_is_dropped(postgres_server: PostgresServer) -> None:
    url = postgres_server.url.replace("postgresql://", "postgresql+asyncpg://")
    store = PostgresSessionStore.from_url(url)
    assert store.dsn == postgres_server.url
    async with store:
        assert await store.load({"project_key": "p", "session_id": "never"}) is None
