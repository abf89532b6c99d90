"""Helpers for the MCP tests: server processes on loopback ports, a toolset opened as a conversation opens
it, tool calls as the loop makes them, and the reference servers' paths.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from openagent import AgentOptions
from openagent.testing import ScriptedModel
from openagent.tools import Tool, ToolContext, open_toolsets
from openagent.types import ToolResultBlock

SERVERS = Path(__file__).with_name("servers.py")
# Servers cache their bytecode: every test starts a few, and compiling mcp each time costs a second.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Served:
    """A server process listening on a loopback port (killed at the end of the test)."""

    def __init__(
        self, args: list[str], *, path: str, env: dict[str, str] | None = None, wait: bool = True
    ) -> None:
        self.port = free_port()
        self.args = args
        self.process = subprocess.Popen(
            [a.replace("{port}", str(self.port)) for a in args],
            env={**_ENV, "PORT": str(self.port), **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}{path}"
        if wait:
            self.ready()

    def ready(self) -> Served:
        """Wait until it listens (it may have been started without waiting, beside others)."""
        for _ in range(1200):
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.args} exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return self
            except OSError:
                time.sleep(0.025)
        raise RuntimeError(f"{self.args} did not listen within 30 s")

    def kill(self) -> float:
        """SIGKILL it; the time of the kill (``anyio.current_time()``)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        return anyio.current_time()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


def python_server(transport: str, *, wait: bool = True) -> Served:
    """``servers.py`` over ``http``, ``json`` (streamable HTTP, JSON answers) or ``sse``."""
    path = "/sse" if transport == "sse" else "/mcp"
    return Served([sys.executable, str(SERVERS), transport, "{port}"], path=path, wait=wait)


def stdio_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """A stdio config for ``servers.py``; it writes its pid to ``tmp_path / "pid"``."""
    env = {"MCP_PID_FILE": str(tmp_path / "pid"), "PATH": os.environ.get("PATH", ""), **extra.pop("env", {})}
    return {"type": "stdio", "command": sys.executable, "args": [str(SERVERS), "stdio"], "env": env, **extra}


def pid_of(tmp_path: Path) -> int:
    return int((tmp_path / "pid").read_text())


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def kill_pid(pid: int) -> float:
    os.kill(pid, signal.SIGKILL)
    return anyio.current_time()


@asynccontextmanager
async def opened(servers: dict[str, Any], **options: Any) -> AsyncIterator[tuple[Any, dict[str, Tool]]]:
    """The MCP toolset for ``servers`` and the tool table it keeps, opened as a conversation opens it."""
    table: dict[str, Tool] = {}
    opts = AgentOptions(model=ScriptedModel([]), mcp_servers=servers, persist_session=False, **options)
    (toolset,) = await open_toolsets(opts, table)
    try:
        yield toolset, table
    finally:
        await toolset.aclose()


async def call(
    table: dict[str, Tool], name: str, arguments: dict[str, Any] | None = None, *, notify: Any = None
) -> ToolResultBlock:
    """Call a tool from the table as the loop does."""
    context = ToolContext(tool_use_id="call-1", session_id="s", cwd=".", notify=notify)
    return await table[name].call("call-1", arguments or {}, context)


def text_of(result: ToolResultBlock) -> str:
    content = result.content
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def npm_server(package: str) -> str:
    """The entry script of an npm reference server (``server-everything`` …)."""
    root = os.environ.get("OPENAGENT_TEST_MCP_NPM")
    if not root:
        pytest.skip("the npm reference servers are installed by nox -s \"tests(package='mcp')\"")
    script = Path(root) / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    assert script.exists(), f"{script} is missing: the nox session installs it"
    return str(script)


def pypi_server(command: str) -> str:
    """The console script of a PyPI reference server (``mcp-server-time`` …)."""
    root = os.environ.get("OPENAGENT_TEST_MCP_PYPI")
    if not root:
        pytest.skip("the PyPI reference servers are installed by nox -s \"tests(package='mcp')\"")
    script = Path(root) / command
    assert script.exists(), f"{script} is missing: the nox session installs it"
    return str(script)


async def wait_until(condition: Any, limit: float = 5.0) -> None:
    """Poll ``condition`` until it holds (a bound on waiting, not a timing assert)."""
    deadline = anyio.current_time() + limit
    while not condition():
        assert anyio.current_time() < deadline, "condition not met in time"
        await anyio.sleep(0.02)
