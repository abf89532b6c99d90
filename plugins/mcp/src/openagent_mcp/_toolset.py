"""`McpToolset`: the MCP servers of one conversation, their tools, their status, and their control.

The servers' sessions live in one task group owned by the toolset, in a task of the caller's own event loop
(``openagent._tasks.spawn``): no thread, and no task group held across the ``yield``s of ``query()``. Tool
calls run in the callers' tasks; a session's end ends the calls on it (`_link`). The conversation's tool
table follows the servers (`attach`): a server that connects late adds its tools, one disabled withdraws
them, one that failed keeps them, answered with why it is not connected. In-process servers made by
`create_sdk_mcp_server` have no session: their tools are called directly.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from openagent._tasks import spawn
from openagent.errors import ConfigError
from openagent.mcp import McpServerStatus, McpStatusResponse
from openagent.tools import Tool

from ._config import ServerConfig, parse_config
from ._errors import McpServerError
from ._names import allocate, server_prefixes, tool_name
from ._sdk import SdkMcpServer, local_tool
from ._server import RemoteServer, list_all
from ._tools import McpTool, remote_tool, resource_tools

__all__ = ["McpToolset"]

logger = logging.getLogger("openagent.mcp")
CLOSE_TIMEOUT = 5.0
"""Seconds the servers get to end their sessions when the conversation closes (stdio: 2 s, then killed)."""


@dataclass
class _Local:
    """An in-process server from `create_sdk_mcp_server`: its tools, called directly."""

    config: ServerConfig
    tools: list[McpTool] = field(default_factory=list)
    status: str = "connected"


class McpToolset:
    """The `Toolset` for ``AgentOptions.mcp_servers`` (Claude's format); see the module docstring."""

    def __init__(
        self, servers: Mapping[str, Any], *, timeout: float | None = None, retry: Any = None
    ) -> None:
        self.servers = dict(servers)
        self.prefixes, self.warnings = server_prefixes(self.servers)
        for warning in self.warnings.values():
            logger.warning(warning)
        self.configs: dict[str, ServerConfig] = {}
        self.invalid: dict[str, str] = {}
        """Servers whose configuration is wrong, and why."""
        for key, raw in self.servers.items():
            try:
                if timeout is not None and isinstance(raw, Mapping):  # a default for servers without one
                    raw = {"timeout": timeout, **raw}
                self.configs[key] = parse_config(key, raw, retry=retry)
            except ConfigError as exc:
                self.invalid[key] = str(exc)
                logger.warning("MCP server %r failed to start: %s", key, exc)
        self.local: dict[str, _Local] = {}
        self.remote: dict[str, RemoteServer] = {}
        self._taken: set[str] = set()
        self._names: dict[tuple[str, str], str] = {}
        self._table: MutableMapping[str, Tool] | None = None
        self._owned: dict[str, Tool] = {}
        self._resource_tools = resource_tools(self)
        self._group: TaskGroup | None = None
        self._stop = anyio.Event()
        self._finished: anyio.Event | None = None
        self._closed = False

    # -- the conversation's side --

    async def open(self) -> list[Tool]:
        """Start every server; wait for each until it is settled or its ``startup_wait`` has passed."""
        for key, config in self.configs.items():
            instance = config.instance
            if config.kind == "sdk" and isinstance(instance, SdkMcpServer):
                self.local[key] = _Local(
                    config, [local_tool(self._name(key, t.name), t, key) for t in instance.tools]
                )
        remote = [c for c in self.configs.values() if c.key not in self.local]
        if remote:
            ready = anyio.Event()
            self._finished = anyio.Event()
            spawn(lambda: self._supervise(remote, ready), "openagent-mcp")
            await ready.wait()
            began = anyio.current_time()
            for server in self.remote.values():
                with anyio.move_on_after(began + server.config.startup_wait - anyio.current_time()):
                    await server.settled.wait()
        self._owned = self._current()  # what the conversation adds to its table (see `attach`)
        return list(self._owned.values())

    async def _supervise(self, configs: list[ServerConfig], ready: anyio.Event) -> None:
        """The toolset's task group: every session lives here until `aclose`."""
        assert self._finished is not None
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                for config in configs:
                    self.remote[config.key] = server = RemoteServer(config, group, self._changed)
                    group.start_soon(server.start)
                ready.set()
                await self._stop.wait()
                for server in self.remote.values():
                    server.close()
                group.cancel_scope.deadline = anyio.current_time() + CLOSE_TIMEOUT
        finally:
            self._group = None
            self._finished.set()
            ready.set()

    def attach(self, table: MutableMapping[str, Tool]) -> None:
        """Keep ``table`` (the conversation's tools) in line with the servers from now on."""
        self._table = table
        self._sync()

    async def aclose(self) -> None:
        """End every session (safe to call twice, or from a finalizer that cannot wait).

        The shutdown is requested before the first ``await``: when the caller cannot wait, the toolset's
        task still ends the sessions and the server processes on its own.
        """
        self._closed = True
        self._stop.set()
        for server in self.remote.values():
            server.close()
        if self._finished is not None:
            await self._finished.wait()

    def describe(self) -> dict[str, Any]:
        """``{"mcp_servers": [...]}`` for the init message: status, tool count, error, skipped tools."""
        return {"mcp_servers": [self._entry(key) for key in self.servers]}

    def _entry(self, key: str) -> dict[str, Any]:
        if key in self.invalid:
            return {"name": key, "status": "failed", "tool_count": 0, "error": self.invalid[key]}
        entry: dict[str, Any] = {"name": key}
        if key in self.local:
            entry.update(status=self.local[key].status, tool_count=len(self.local[key].tools))
        elif key in self.remote:
            server = self.remote[key]
            entry.update(status=server.status, tool_count=len(server.listed))
            if server.error and server.status != "connected":
                entry["error"] = server.error
            if server.skipped:
                entry["skipped_tools"] = list(server.skipped)
        else:
            entry.update(status="pending", tool_count=0)
        if key in self.warnings:
            entry["warnings"] = [self.warnings[key]]
        return entry

    # -- the tool table --

    def _name(self, server: str, tool: str) -> str:
        """A tool's model-facing name: allocated once, kept across reconnects."""
        if (server, tool) not in self._names:
            self._names[server, tool] = allocate(
                tool_name(server, tool, self.prefixes.get(server)), self._taken
            )
        return self._names[server, tool]

    def _current(self) -> dict[str, Tool]:
        tools: dict[str, Tool] = {}
        for local in self.local.values():
            if local.status != "disabled":
                tools.update((t.name, t) for t in local.tools)
        for server in self.remote.values():
            if server.status != "disabled":
                for found in server.listed:
                    name = self._name(server.key, found.name)
                    tools[name] = remote_tool(self, server, found, name)
        if self.resource_servers(any_status=True):
            tools.update((t.name, t) for t in self._resource_tools)
        return tools

    def _changed(self, server: RemoteServer) -> None:
        self._sync()

    def _sync(self) -> None:
        table = self._table
        if table is None or self._closed:
            return
        wanted = self._current()
        for name, tool in list(self._owned.items()):
            if name not in wanted and table.get(name) is tool:
                del table[name]
                del self._owned[name]
        for name, tool in wanted.items():
            if name not in table or table[name] is self._owned.get(name):
                table[name] = self._owned[name] = tool
            elif name not in self._owned:
                logger.warning("an MCP tool is named like another tool, which keeps the name: %s", name)
                self._owned[name] = tool  # warned once

    # -- resources and prompts (Python API and the resource tools) --

    def resource_servers(self, *, any_status: bool = False) -> list[str]:
        """The servers that offer resources: connected ones, or with ``any_status`` all but disabled ones."""
        return [
            key
            for key, server in self.remote.items()
            if getattr(server.capabilities, "resources", None) is not None
            and (server.status == "connected" or (any_status and server.status != "disabled"))
        ]

    def resource_server(self, key: str) -> str | None:
        """``key`` when its resource links can be followed with ReadMcpResourceTool."""
        return key if key in self.resource_servers(any_status=True) else None

    def limit_for(self, key: str) -> int:
        """The binary size limit of a server's content."""
        return self.configs[key].max_binary_bytes

    def _server(self, key: str) -> RemoteServer:
        if key in self.remote:
            return self.remote[key]
        known = ", ".join(self.remote) or "none"
        raise McpServerError(f"no such server with a session (servers: {known})", server=key)

    async def list_resources(self, server: str) -> list[Any]:
        """The resources a server offers (``mcp.types.Resource``; every page)."""
        remote = self._server(server)

        async def send(session: Any, progress: Any) -> list[Any]:
            return await list_all(lambda c: session.list_resources(cursor=c), "resources")

        return await remote.request("listing resources", send, within=remote.config.tool_timeout)

    async def read_resource(self, server: str, uri: str) -> Any:
        """A resource's contents (``mcp.types.ReadResourceResult``)."""
        from pydantic import AnyUrl

        remote = self._server(server)

        async def send(session: Any, progress: Any) -> Any:
            return await session.read_resource(AnyUrl(uri))

        return await remote.request(f"reading {uri!r}", send, within=remote.config.tool_timeout)

    async def list_prompts(self, server: str) -> list[Any]:
        """The prompts a server offers (``mcp.types.Prompt``; every page)."""
        remote = self._server(server)

        async def send(session: Any, progress: Any) -> list[Any]:
            return await list_all(lambda c: session.list_prompts(cursor=c), "prompts")

        return await remote.request("listing prompts", send, within=remote.config.tool_timeout)

    async def get_prompt(self, server: str, name: str, arguments: Mapping[str, str] | None = None) -> Any:
        """A prompt's messages (``mcp.types.GetPromptResult``)."""
        remote = self._server(server)

        async def send(session: Any, progress: Any) -> Any:
            return await session.get_prompt(name, dict(arguments or {}))

        return await remote.request(f"getting prompt {name!r}", send, within=remote.config.tool_timeout)

    # -- status and control (the seam Client.get_mcp_status & co. use) --

    def mcp_status(self) -> McpStatusResponse:
        """Every server's live status, in the Claude Agent SDK's shape."""
        return {"mcpServers": [self._status(key) for key in self.servers]}

    def _status(self, key: str) -> McpServerStatus:
        entry = self._entry(key)
        status: McpServerStatus = {"name": key, "status": entry["status"]}
        if "error" in entry:
            status["error"] = entry["error"]
        if key not in self.configs:
            return status
        status["config"] = self.configs[key].for_status()  # type: ignore[typeddict-item]
        if key in self.local:
            status["tools"] = [
                {"name": t.remote_name, "description": t.description} for t in self.local[key].tools
            ]
        elif key in self.remote and self.remote[key].status == "connected":
            server = self.remote[key]
            if server.info:
                status["serverInfo"] = {"name": server.info["name"], "version": server.info["version"]}
            status["tools"] = [_tool_info(t) for t in server.listed]
        return status

    def _control(self, key: str) -> _Local | RemoteServer:
        if key in self.invalid:
            raise McpServerError(f"cannot start: {self.invalid[key]}", server=key)
        found = self.local.get(key) or self.remote.get(key)
        if found is None:
            raise ConfigError(f"no MCP server named {key!r}; configured: {', '.join(self.servers) or 'none'}")
        return found

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """End the server's session and connect again; raises `McpServerError` when it cannot."""
        server = self._control(server_name)
        if isinstance(server, _Local):
            if server.status == "disabled":
                raise McpServerError("is disabled; enable it with toggle_mcp_server()", server=server_name)
            return
        await server.reconnect()

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Disable a server (its session ends, its tools are withdrawn) or enable it (it connects)."""
        server = self._control(server_name)
        if isinstance(server, _Local):
            server.status = "connected" if enabled else "disabled"
            self._sync()
            return
        await server.set_enabled(enabled)
        if enabled and server.status != "connected":
            raise McpServerError(f"could not connect: {server.error}", server=server_name)


def _tool_info(found: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"name": found.name}
    if found.description:
        info["description"] = found.description
    hints = getattr(found, "annotations", None)
    if hints is not None:
        pairs = [
            ("readOnly", "readOnlyHint"),
            ("destructive", "destructiveHint"),
            ("openWorld", "openWorldHint"),
        ]
        shown = {
            ours: getattr(hints, theirs) for ours, theirs in pairs if getattr(hints, theirs, None) is not None
        }
        if shown:
            info["annotations"] = shown
    return info
