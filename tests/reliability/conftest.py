"""Reliability suite set-up: the project's scripted loopback server, and the ``fuzz`` marker."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from scripted_server import ScriptedServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fuzz: long property-based runs (OPENAGENT_FUZZ_EXAMPLES sets the count)"
    )


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted server on a free loopback port, in its own thread (usable under asyncio and trio)."""
    with ScriptedServer() as scripted:
        yield scripted
