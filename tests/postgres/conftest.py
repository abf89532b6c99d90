"""PostgreSQL store tests: a real cluster (initdb + postgres) on a free loopback port; asyncio only."""

from __future__ import annotations

import pytest
from stores_suite import postgres_server  # noqa: F401 - the session's server, shared with other test folders


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # asyncpg is asyncio-only
