"""Fixtures for the MCP tests: real servers (``servers.py`` over stdio, streamable HTTP and SSE; the npm
and PyPI reference servers the ``tests(package='mcp')`` nox session installs). Helpers are in harness.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # harness.py and servers.py, whatever pytest's import mode

from harness import Served, python_server, stdio_config


@pytest.fixture(autouse=True)
def _mcp_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load the mcp plugin through its entry point, as an installed plugin is loaded."""
    monkeypatch.setenv("OPENAGENT_PLUGINS", "mcp")
    for name in ("MCP_TIMEOUT", "MCP_TOOL_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def served() -> Iterator[list[Served]]:
    """Servers started by a test (append them), closed after it."""
    started: list[Served] = []
    yield started
    for server in started:
        server.close()


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """The streamable-HTTP endpoint of a live server shared by the tests that do not break it."""
    server = python_server("http")
    yield server.url
    server.close()


@pytest.fixture(scope="session")
def sse_server() -> Iterator[str]:
    """The SSE endpoint of a live server shared by the tests that do not break it."""
    server = python_server("sse")
    yield server.url
    server.close()


@pytest.fixture
def stdio_server(tmp_path: Path) -> dict[str, Any]:
    """A stdio server config (its pid is in ``tmp_path / "pid"``)."""
    return stdio_config(tmp_path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """mcp 1.x's HTTP transports iterate httpx / httpx-sse streams without ``aclosing``: a session ended
    while one of its response streams is open leaves those generators (httpx's, httpcore's, httpx-sse's)
    to the garbage collector, which trio reports as a ResourceWarning. The official ``ClientSession`` leaves
    the same ones; only those warnings are let through.
    """
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(
                pytest.mark.filterwarnings("ignore:Async generator 'http(x|core):ResourceWarning")
            )
