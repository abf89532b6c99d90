"""Redis store tests: a real ``redis-server`` on a free loopback port for the session; asyncio only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from stores_suite import RedisServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # redis-py's asyncio client is asyncio-only


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()
