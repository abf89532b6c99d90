"""In-process MCP servers: `create_sdk_mcp_server` over ``@tool`` functions, called without a transport."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from openagent.tools import Tool, tool

from ._content import to_blocks

__all__ = ["SdkMcpServer", "create_sdk_mcp_server", "local_tool"]


@dataclass
class SdkMcpServer:
    """An in-process server: a name, a version and its tools (their handlers run in this process)."""

    name: str
    version: str = "1.0.0"
    tools: list[Tool] = field(default_factory=list)


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: Sequence[Tool | Callable[..., Any]] | None = None
) -> dict[str, Any]:
    """Make an in-process MCP server config for ``AgentOptions.mcp_servers`` (the Claude Agent SDK's call).

    Its tools appear to the model as ``mcp__<key>__<tool>``, where ``key`` is the server's key in
    ``mcp_servers``; their handlers are called directly, in the conversation's own event loop.

    Args:
        name: The server's name.
        version: The server's version (informational).
        tools: ``@tool``-decorated functions (either form) or plain functions.

    Returns:
        ``{"type": "sdk", "name": name, "instance": SdkMcpServer(...)}``.
    """
    made = [item if isinstance(item, Tool) else tool(item) for item in tools or ()]
    return {"type": "sdk", "name": name, "instance": SdkMcpServer(name, version, made)}


def _convert(value: Any) -> Any:
    """A Claude-form result (``{"content": [MCP-shaped blocks]}``) with its blocks made provider-ready."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return {**value, "content": to_blocks(value["content"])}
    return value


def local_tool(name: str, original: Tool) -> Tool:
    """``original`` renamed to ``name``, its MCP-shaped result blocks (images …) converted like a server's."""
    handler = original.handler
    if handler is None:
        return replace(original, name=name)

    async def converted_async(*args: Any, **kwargs: Any) -> Any:
        return _convert(await handler(*args, **kwargs))

    def converted(*args: Any, **kwargs: Any) -> Any:
        return _convert(handler(*args, **kwargs))

    wrapper = converted_async if inspect.iscoroutinefunction(handler) else converted
    return replace(original, name=name, handler=functools.wraps(handler)(wrapper))
