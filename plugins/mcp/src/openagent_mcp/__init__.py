"""MCP client for openagent: tools from stdio, SSE, streamable-HTTP and in-process MCP servers.

``AgentOptions(mcp_servers={...})`` takes the Claude Agent SDK's format; each server's tools appear as
``mcp__<server>__<tool>``. Servers start when a conversation starts and stop when it ends; one that fails
to start is reported in ``SystemMessage(subtype="init").data["mcp_servers"]`` and the others keep working.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openagent.plugin import hookimpl

from ._sdk import SdkMcpServer, create_sdk_mcp_server
from ._toolset import DEFAULT_TIMEOUT, McpToolset, load_servers, tool_name

__all__ = [
    "DEFAULT_TIMEOUT",
    "McpToolset",
    "SdkMcpServer",
    "create_sdk_mcp_server",
    "register_toolsets",
    "tool_name",
    "toolset_for",
]


def toolset_for(options: Any) -> McpToolset | None:
    """The toolset for ``options.mcp_servers``, or ``None`` when there are none."""
    spec = getattr(options, "mcp_servers", None)
    if not spec:
        return None
    return McpToolset(load_servers(spec))


@hookimpl
def register_toolsets(register: Callable[[str, Callable[[Any], Any]], None]) -> None:
    """Register the ``mcp`` toolset factory."""
    register("mcp", toolset_for)
