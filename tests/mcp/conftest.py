"""Real MCP servers for the tests: the server in servers.py over streamable HTTP and SSE on loopback ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVERS = Path(__file__).with_name("servers.py")


@pytest.fixture(autouse=True)
def _mcp_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load the mcp plugin through its entry point, as an installed plugin is loaded."""
    monkeypatch.setenv("OPENAGENT_PLUGINS", "mcp")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(transport: str) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS), transport, str(port)], stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(300):  # wait until it listens (or died)
            if process.poll() is not None:
                raise RuntimeError(f"the {transport} MCP server exited with {process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """The streamable-HTTP endpoint of a live server (``…/mcp``)."""
    for root in _serve("http"):
        yield f"{root}/mcp"


@pytest.fixture(scope="session")
def sse_server() -> Iterator[str]:
    """The SSE endpoint of a live server (``…/sse``)."""
    for root in _serve("sse"):
        yield f"{root}/sse"


@pytest.fixture
def stdio_server(tmp_path: Path) -> dict[str, object]:
    """A stdio server config; the server writes its pid to ``pid_file``."""
    pid_file = tmp_path / "pid"
    env = {"MCP_PID_FILE": str(pid_file), "PATH": os.environ.get("PATH", "")}
    return {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(SERVERS), "stdio"],
        "env": env,
        "pid_file": pid_file,
    }
