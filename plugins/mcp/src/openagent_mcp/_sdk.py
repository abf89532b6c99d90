"""In-process MCP servers: `create_sdk_mcp_server` over ``@tool`` functions, called without a transport."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from openagent.tools import SdkMcpServer, Tool, create_sdk_mcp_server

from ._content import to_blocks
from ._tools import McpTool, retyped

__all__ = ["SdkMcpServer", "create_sdk_mcp_server", "local_tool"]


def _convert(value: Any) -> Any:
    """A Claude-form result (``{"content": [MCP-shaped blocks]}``) with its blocks made provider-ready."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return {**value, "content": to_blocks(value["content"])}
    return value


def local_tool(name: str, original: Tool, server: str) -> McpTool:
    """``original`` renamed to ``name``, its MCP-shaped result blocks (images …) converted like a server's.

    Like any server's tool it runs only when a rule, a mode or ``can_use_tool`` allows it (as in Claude Code,
    where an SDK server's tools are listed in ``allowed_tools``).
    """
    handler = original.handler
    if handler is None:
        return retyped(
            original, name=name, server=server, remote_name=original.name, requires_permission=True
        )

    async def converted_async(*args: Any, **kwargs: Any) -> Any:
        return _convert(await handler(*args, **kwargs))

    def converted(*args: Any, **kwargs: Any) -> Any:
        return _convert(handler(*args, **kwargs))

    wrapper = converted_async if inspect.iscoroutinefunction(handler) else converted
    return retyped(
        original,
        name=name,
        handler=functools.wraps(handler)(wrapper),
        server=server,
        remote_name=original.name,
        requires_permission=True,
    )
