"""`SQLiteSessionStore`: the shared store suite, plus URL parsing and the WAL journal."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from stores_suite import Backend, StoreSuite

from openagent.errors import ConfigError
from openagent_sqlite import SQLiteSessionStore


class SQLiteBackend(Backend):
    name = "sqlite"
    schemes = ("sqlite",)

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.url = f"sqlite:///{directory / 'default.db'}"  # four slashes: an absolute path

    def store(self, namespace: str | None = None) -> SQLiteSessionStore:
        return SQLiteSessionStore(self.directory / f"{namespace or uuid.uuid4().hex}.db")

    def namespace_of(self, store: Any) -> str:
        return Path(store.path).stem

    def unreachable(self) -> SQLiteSessionStore:
        return SQLiteSessionStore(self.directory / "no-such-directory" / "sessions.db")


class TestSQLiteStore(StoreSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> SQLiteBackend:
        return SQLiteBackend(tmp_path)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///sessions.db", "sessions.db"),
        ("sqlite:////var/lib/agent/sessions.db", "/var/lib/agent/sessions.db"),
        ("sqlite:///dir%20with%20space/s.db", "dir with space/s.db"),
        ("sqlite://", ":memory:"),
        ("sqlite:///:memory:", ":memory:"),
    ],
    ids=["relative", "absolute", "escaped", "memory", "memory-explicit"],
)
def test_from_url_paths(url: str, path: str) -> None:
    assert SQLiteSessionStore.from_url(url).path == path


@pytest.mark.parametrize("url", ["postgresql:///x.db", "sqlite://remotehost/x.db"], ids=["scheme", "host"])
def test_from_url_refuses_what_is_not_a_local_sqlite_url(url: str) -> None:
    with pytest.raises(ConfigError, match="not a SQLite URL"):
        SQLiteSessionStore.from_url(url)


@pytest.mark.anyio
async def test_database_is_in_wal_mode_with_full_sync(tmp_path: Path) -> None:
    import aiosqlite

    async with SQLiteSessionStore(tmp_path / "s.db") as store:
        await store.append({"project_key": "p", "session_id": "s"}, [{"type": "x", "uuid": "1"}])
    async with aiosqlite.connect(tmp_path / "s.db") as conn:
        assert await (await conn.execute("PRAGMA journal_mode")).fetchone() == ("wal",)


@pytest.mark.anyio
async def test_first_opens_of_a_new_file_racing_to_switch_it_to_wal_all_succeed(tmp_path: Path) -> None:
    # SQLite can refuse a journal-mode change that races another at once ("database is locked"), without
    # waiting; seen in CI as a failed append when fifty writers opened one new file together.
    import anyio

    for round_ in range(3):
        path = tmp_path / f"race{round_}.db"
        stores = [SQLiteSessionStore(path) for _ in range(40)]

        async def append(index: int, store: SQLiteSessionStore) -> None:
            key: Any = {"project_key": "p", "session_id": f"s{index}"}
            await store.append(key, [{"type": "x", "uuid": str(index)}])

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for index, store in enumerate(stores):
                    group.start_soon(append, index, store)
            for store in stores:
                await store.aclose()
        async with SQLiteSessionStore(path) as reader:
            loaded = [await reader.load({"project_key": "p", "session_id": f"s{i}"}) for i in range(40)]
        assert loaded == [[{"type": "x", "uuid": str(i)}] for i in range(40)]


@pytest.mark.anyio
async def test_in_memory_store_works_and_is_private(tmp_path: Path) -> None:
    key: Any = {"project_key": "p", "session_id": "s"}
    async with SQLiteSessionStore() as one, SQLiteSessionStore() as two:
        await one.append(key, [{"type": "x", "uuid": "1"}])
        assert await one.load(key) == [{"type": "x", "uuid": "1"}]
        assert await two.load(key) is None


@pytest.mark.anyio
async def test_a_file_that_is_not_a_database_raises_session_error(tmp_path: Path) -> None:
    from openagent.errors import SessionError

    (tmp_path / "junk.db").write_bytes(b"this is not a sqlite database" * 100)
    async with SQLiteSessionStore(tmp_path / "junk.db") as store:
        with pytest.raises(SessionError, match="junk.db.*could not load p/s: DatabaseError"):
            await store.load({"project_key": "p", "session_id": "s"})


def test_from_url_accepts_a_driver_suffix() -> None:
    assert SQLiteSessionStore.from_url("sqlite+aiosqlite:///s.db").path == "s.db"
