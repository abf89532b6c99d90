"""`McpToolset`: the MCP servers of one conversation, connected in parallel, their tools as openagent tools.

Why a thread: ``query()`` is an async generator, so the toolset is opened and closed in the same task but
across ``yield``s, and may be closed by a finalizer when the caller breaks out early. The ``mcp`` client's
context managers hold task groups and cancel scopes that must not span a ``yield``. So every client session
lives in a private event loop on a daemon thread (an anyio `BlockingPortal`), where it is entered and left
by one task; the conversation talks to it through the portal from whichever loop it runs on (asyncio or
trio). In-process servers made by `create_sdk_mcp_server` need none of this: their tools are called
directly.
"""

from __future__ import annotations

import json
import logging
import math
import re
import tempfile
import threading
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import TaskStatus
from anyio.from_thread import BlockingPortal

from openagent import Tool
from openagent.plugin import ConfigError, ToolError

from ._content import to_blocks
from ._sdk import SdkMcpServer, local_tool

__all__ = ["DEFAULT_TIMEOUT", "McpToolset", "load_servers", "tool_name"]

logger = logging.getLogger("openagent.mcp")

DEFAULT_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools (a server's ``"timeout"`` key overrides it)."""


def tool_name(server: str, tool: str) -> str:
    """The name the model sees: ``mcp__<server>__<tool>``, with characters providers reject replaced."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")


def load_servers(spec: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """The ``mcp_servers`` option as a dict: given directly, or a JSON file (``{"mcpServers": {...}}``)."""
    if isinstance(spec, Mapping):
        return dict(spec)
    try:
        data = json.loads(Path(spec).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"mcp_servers: cannot read {spec!s}: {exc}") from exc
    servers = data.get("mcpServers", data) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"mcp_servers: {spec!s} holds no server mapping")
    return servers


@dataclass
class _Status:
    name: str
    status: str = "pending"
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, **({"error": self.error} if self.error else {})}


class _Loop:
    """A private event loop on a daemon thread, reached through a `BlockingPortal`."""

    def __init__(self) -> None:
        self.portal: BlockingPortal | None = None
        ready = threading.Event()

        async def main() -> None:
            async with BlockingPortal() as portal:
                self.portal = portal
                ready.set()
                await portal.sleep_until_stopped()

        # A daemon thread: a toolset nobody closed must not keep the interpreter from exiting.
        self.thread = threading.Thread(target=anyio.run, args=(main,), name="openagent-mcp", daemon=True)
        self.thread.start()
        ready.wait()


class McpToolset:
    """The `Toolset` for ``AgentOptions.mcp_servers`` (Claude's format)."""

    def __init__(self, servers: Mapping[str, Any], *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.servers = dict(servers)
        self.timeout = timeout
        self.statuses = {name: _Status(name) for name in self.servers}
        self._loop: _Loop | None = None
        self._stop: anyio.Event | None = None  # these two live in the private loop
        self._finished: anyio.Event | None = None

    async def open(self) -> list[Tool]:
        """Connect every server (in parallel, each within its timeout); failures are kept for `describe`."""
        tools: list[Tool] = []
        remote: dict[str, dict[str, Any]] = {}
        for name, config in self.servers.items():
            instance = config.get("instance") if isinstance(config, Mapping) else None
            if (
                isinstance(config, Mapping)
                and config.get("type") == "sdk"
                and isinstance(instance, SdkMcpServer)
            ):
                tools += [local_tool(tool_name(name, t.name), t) for t in instance.tools]
                self.statuses[name].status = "connected"
            elif isinstance(config, Mapping):
                remote[name] = dict(config)
            else:
                self._fail(name, f"a server config must be a dict, not {type(config).__name__}")
        if remote:
            tools += await anyio.to_thread.run_sync(self._open_remote, remote)
        return tools

    def _fail(self, name: str, error: str) -> None:
        self.statuses[name].status, self.statuses[name].error = "failed", error
        logger.warning("MCP server %r failed to start: %s", name, error)

    def _open_remote(self, servers: dict[str, dict[str, Any]]) -> list[Tool]:
        self._loop = loop = _Loop()
        assert loop.portal is not None
        try:
            _, sessions = loop.portal.start_task(self._supervise, servers)
        except BaseException:
            self._request_stop(loop)
            loop.thread.join()
            raise
        tools = []
        for name, (session, listed) in sessions.items():
            for found in listed:
                tools.append(self._remote_tool(name, session, found))
        return tools

    async def _supervise(self, servers: dict[str, dict[str, Any]], *, task_status: TaskStatus[Any]) -> None:
        """In the private loop: start every server, report the live ones, keep them until `aclose`."""
        self._stop, self._finished = anyio.Event(), anyio.Event()
        sessions: dict[str, Any] = {}
        try:
            async with anyio.create_task_group() as group:
                async with anyio.create_task_group() as starting:
                    for name, config in servers.items():
                        starting.start_soon(self._start_one, group, name, config, sessions)
                task_status.started(sessions)
        finally:
            self._finished.set()

    async def _start_one(
        self, group: anyio.abc.TaskGroup, name: str, config: dict[str, Any], sessions: dict[str, Any]
    ) -> None:
        result = await group.start(self._serve, name, config)
        if isinstance(result, str):
            self._fail(name, result)
        else:
            sessions[name] = result
            self.statuses[name].status = "connected"

    async def _serve(self, name: str, config: dict[str, Any], *, task_status: TaskStatus[Any]) -> None:
        """One server's whole life in one task: connect, list tools, wait for `aclose`, disconnect."""
        from mcp import ClientSession

        timeout = float(config.get("timeout", self.timeout))
        started = False
        errlog = tempfile.TemporaryFile("w+")
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                async with AsyncExitStack() as stack:
                    read, write = await _transport(stack, config, errlog)
                    session = await stack.enter_async_context(ClientSession(read, write))
                    await session.initialize()
                    listed = await session.list_tools()
                    scope.deadline = math.inf
                    started = True
                    task_status.started((session, listed.tools))
                    assert self._stop is not None
                    await self._stop.wait()
            if not started:
                task_status.started(f"TimeoutError: no answer within {timeout:g} s{_stderr_tail(errlog)}")
        except Exception as exc:
            if not started:
                task_status.started(_unwrap(exc, errlog))
            else:
                logger.warning("MCP server %r ended with %s", name, _unwrap(exc, errlog))
        finally:
            errlog.close()

    def _remote_tool(self, server: str, session: Any, found: Any) -> Tool:
        async def call(args: dict[str, Any]) -> dict[str, Any]:
            loop = self._loop
            if loop is None or loop.portal is None:
                raise ToolError(f"MCP server {server!r} is closed")
            result = await anyio.to_thread.run_sync(
                loop.portal.call, session.call_tool, found.name, args, abandon_on_cancel=True
            )
            return {
                "content": to_blocks(result.content, result.structuredContent),
                "is_error": result.isError,
            }

        annotations = getattr(found, "annotations", None)
        return Tool(
            name=tool_name(server, found.name),
            description=found.description or found.name,
            input_schema=dict(found.inputSchema or {"type": "object", "properties": {}}),
            handler=call,
            style="args",
            is_read_only=bool(getattr(annotations, "readOnlyHint", False)),
        )

    async def aclose(self) -> None:
        """Disconnect every server and stop the private loop (safe to call twice, or from a finalizer).

        The shutdown is requested before the first ``await``, so a finalizer that cannot wait still starts
        it: the private loop then disconnects the servers and ends on its own.
        """
        loop, self._loop = self._loop, None
        if loop is not None:
            self._request_stop(loop)
            await anyio.to_thread.run_sync(loop.thread.join)

    def _request_stop(self, loop: _Loop) -> None:
        if loop.portal is not None:
            loop.portal.start_task_soon(self._shutdown, loop.portal)

    async def _shutdown(self, portal: BlockingPortal) -> None:
        """In the private loop: let every server leave its session, then stop the loop."""
        if self._stop is not None and self._finished is not None:
            self._stop.set()
            with anyio.move_on_after(self.timeout):
                await self._finished.wait()
        await portal.stop(cancel_remaining=True)

    def describe(self) -> dict[str, Any]:
        """``{"mcp_servers": [{"name", "status", "error"?}]}`` for the init message."""
        return {"mcp_servers": [s.as_dict() for s in self.statuses.values()]}


async def _transport(stack: AsyncExitStack, config: dict[str, Any], errlog: Any) -> tuple[Any, Any]:
    """Enter the transport ``config`` names and return its (read, write) streams."""
    kind = config.get("type", "stdio")
    if kind == "stdio":
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        if not isinstance(config.get("command"), str):
            raise ConfigError("a stdio server needs a 'command' string")
        params = StdioServerParameters(
            command=config["command"],
            args=list(config.get("args", [])),
            env=config.get("env"),
            cwd=config.get("cwd"),
        )
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        return read, write
    if kind in ("http", "sse"):
        if not isinstance(config.get("url"), str):
            raise ConfigError(f"an {kind} server needs a 'url' string")
        headers = dict(config.get("headers") or {})
        if kind == "sse":
            from mcp.client.sse import sse_client

            read, write = await stack.enter_async_context(sse_client(config["url"], headers=headers))
            return read, write
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        read, write, _ = await stack.enter_async_context(
            streamable_http_client(config["url"], http_client=client)
        )
        return read, write
    if kind == "sdk":
        from mcp.shared.memory import create_client_server_memory_streams

        server: Any = config.get("instance")
        server = getattr(server, "_mcp_server", server)  # a FastMCP instance wraps a low-level server
        if not hasattr(server, "run") or not hasattr(server, "create_initialization_options"):
            raise ConfigError(
                "an sdk server needs an 'instance' from create_sdk_mcp_server() or an mcp Server"
            )
        client_streams, server_streams = await stack.enter_async_context(
            create_client_server_memory_streams()
        )
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)  # stop the server when the session is left
        group.start_soon(server.run, *server_streams, server.create_initialization_options())
        return client_streams
    raise ConfigError(f"unknown MCP server type {kind!r}; expected stdio, sse, http or sdk")


def _unwrap(exc: BaseException, errlog: Any) -> str:
    """The first real error inside exception groups, with the server's stderr tail when there is one."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}{_stderr_tail(errlog)}"


def _stderr_tail(errlog: Any, limit: int = 400) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read().strip()
    except (OSError, ValueError):
        return ""
    return f" (server stderr: {text[-limit:]})" if text else ""
