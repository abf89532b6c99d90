"""PostgreSQL store tests: a real cluster (initdb + postgres) on a free loopback port; asyncio only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from stores_suite import PostgresServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # asyncpg is asyncio-only


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()
