"""MCP client for openagent: tools from stdio, SSE, streamable-HTTP and in-process MCP servers.

``AgentOptions(mcp_servers={...})`` takes the Claude Agent SDK's format; each server's tools appear as
``mcp__<server>__<tool>``. Servers start when a conversation starts and stop when it ends; every fault of a
server ends the calls on it with an error result that names the server and the cause, and
``Client.get_mcp_status()`` / ``reconnect_mcp_server()`` / ``toggle_mcp_server()`` control them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openagent.hookspecs import hookimpl

from ._config import (
    DEFAULT_MAX_BINARY_BYTES,
    DEFAULT_MAX_TOOL_TIMEOUT,
    DEFAULT_STARTUP_WAIT,
    DEFAULT_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
    load_servers,
)
from ._errors import McpConnectionError, McpServerError
from ._link import FAULT_GRACE
from ._names import tool_name
from ._sdk import SdkMcpServer, create_sdk_mcp_server
from ._tools import McpTool
from ._toolset import McpToolset

__all__ = [
    "DEFAULT_MAX_BINARY_BYTES",
    "DEFAULT_MAX_TOOL_TIMEOUT",
    "DEFAULT_STARTUP_WAIT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "FAULT_GRACE",
    "McpConnectionError",
    "McpServerError",
    "McpTool",
    "McpToolset",
    "SdkMcpServer",
    "create_sdk_mcp_server",
    "load_servers",
    "register_toolsets",
    "tool_name",
    "toolset_for",
    "toolset_of",
]


def toolset_for(options: Any) -> McpToolset | None:
    """The toolset for ``options.mcp_servers``, or ``None`` when there are none."""
    spec = getattr(options, "mcp_servers", None)
    if not spec:
        return None
    return McpToolset(load_servers(spec), retry=getattr(options, "retry", None))


def toolset_of(client: Any) -> McpToolset:
    """The MCP toolset of a connected `Client` (or a `Conversation`): resources, prompts, status.

    Raises:
        LookupError: When it has no MCP servers.
    """
    conversation = getattr(client, "conversation", client)
    for toolset in getattr(conversation, "toolsets", []):
        if isinstance(toolset, McpToolset):
            return toolset
    raise LookupError("no MCP servers in this conversation (AgentOptions.mcp_servers)")


@hookimpl
def register_toolsets(register: Callable[[str, Callable[[Any], Any]], None]) -> None:
    """Register the ``mcp`` toolset factory."""
    register("mcp", toolset_for)
