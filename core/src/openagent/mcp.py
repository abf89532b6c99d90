"""MCP status shapes (the Claude Agent SDK's) and the seam through which `Client` controls MCP servers.

The core runs no MCP itself: the ``openagent-mcp`` plugin's toolset implements `McpServers`, and
`Client.get_mcp_status`, `Client.reconnect_mcp_server` and `Client.toggle_mcp_server` find it among the
conversation's toolsets. The shapes are TypedDicts with the SDK's wire names (``mcpServers``,
``serverInfo``), so code written against ``claude_agent_sdk`` reads them unchanged.
"""

# No ``from __future__ import annotations`` here: TypedDict reads NotRequired from evaluated annotations.
from collections.abc import Iterable
from typing import Any, Literal, NotRequired, Protocol, TypeAlias, TypedDict, runtime_checkable

__all__ = [
    "McpServerConnectionStatus",
    "McpServerInfo",
    "McpServerStatus",
    "McpServers",
    "McpStatusResponse",
    "McpToolAnnotations",
    "McpToolInfo",
    "mcp_servers_of",
]

McpServerConnectionStatus: TypeAlias = Literal["connected", "failed", "needs-auth", "pending", "disabled"]
"""``pending``: starting or reconnecting; ``needs-auth``: the server answered HTTP 401."""


class McpToolAnnotations(TypedDict, total=False):
    """A tool's hints, as the status reports them."""

    readOnly: bool
    destructive: bool
    openWorld: bool


class McpToolInfo(TypedDict):
    """A tool a server offers (its own name, not the ``mcp__server__tool`` one)."""

    name: str
    description: NotRequired[str]
    annotations: NotRequired[McpToolAnnotations]


class McpServerInfo(TypedDict):
    """The server's name and version from the MCP handshake."""

    name: str
    version: str


class McpServerStatus(TypedDict):
    """One server's live status."""

    name: str
    """The server's key in ``mcp_servers``."""
    status: McpServerConnectionStatus
    serverInfo: NotRequired[McpServerInfo]
    """From the handshake (when connected)."""
    error: NotRequired[str]
    """Why it is not connected (when ``failed`` or ``needs-auth``)."""
    config: NotRequired[dict[str, Any]]
    """Its configuration (``type``, ``command``/``url`` …), header and environment values redacted."""
    scope: NotRequired[str]
    tools: NotRequired[list[McpToolInfo]]
    """The tools it offers (when connected)."""


class McpStatusResponse(TypedDict):
    """What `Client.get_mcp_status` returns."""

    mcpServers: list[McpServerStatus]


@runtime_checkable
class McpServers(Protocol):
    """A toolset that manages MCP servers: what `Client`'s MCP methods talk to."""

    def mcp_status(self) -> McpStatusResponse:
        """Every configured server's live status."""
        ...

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """End the server's session and connect again; raise when it cannot connect."""
        ...

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Disable (disconnect, withdraw the tools) or enable (connect) a server; raise on failure."""
        ...


def mcp_servers_of(toolsets: Iterable[Any]) -> McpServers | None:
    """The toolset among ``toolsets`` that manages MCP servers, if any."""
    return next((t for t in toolsets if isinstance(t, McpServers)), None)
