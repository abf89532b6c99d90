"""Redis store tests: a real ``redis-server`` on a free loopback port for the session; asyncio only."""

from __future__ import annotations

import pytest
from stores_suite import redis_server  # noqa: F401 - the session's server, shared with other test folders


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # redis-py's asyncio client is asyncio-only
