"""Open the transport a server's config names (stdio, streamable HTTP, SSE, an in-memory ``mcp`` server)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx

from ._config import ServerConfig
from ._watch import Faults, StderrTail, WatchedTransport

__all__ = ["open_transport"]

# The mcp package's own defaults: 30 s to connect or write, 5 minutes between bytes of an open stream.
_HTTP_TIMEOUT = httpx.Timeout(30.0, read=300.0)


def _http_client(config: ServerConfig, faults: Faults, headers: Any = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        headers=dict(headers if headers is not None else config.headers),
        timeout=_HTTP_TIMEOUT,
        transport=WatchedTransport(faults),
    )


async def _stdio(stack: AsyncExitStack, config: ServerConfig, stderr: StderrTail) -> tuple[Any, Any]:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=dict(config.env or {}) or None, cwd=config.cwd
    )
    streams = await stack.enter_async_context(stdio_client(params, errlog=stderr.file))
    stderr.detach()  # the process has its own copy now: end of file when it exits
    return streams


async def _memory(stack: AsyncExitStack, config: ServerConfig) -> tuple[Any, Any]:
    from mcp.shared.memory import create_client_server_memory_streams

    server: Any = getattr(config.instance, "_mcp_server", config.instance)
    client_streams, server_streams = await stack.enter_async_context(create_client_server_memory_streams())
    group = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(group.cancel_scope.cancel)  # stop the server when the session is left
    group.start_soon(server.run, *server_streams, server.create_initialization_options())
    return client_streams  # type: ignore[no-any-return]


async def open_transport(
    stack: AsyncExitStack, config: ServerConfig, faults: Faults, stderr: StderrTail | None
) -> tuple[Any, Any]:
    """Enter the transport ``config`` names on ``stack``; its (read, write) streams."""
    if config.kind == "stdio":
        assert stderr is not None
        return await _stdio(stack, config, stderr)
    if config.kind == "sdk":
        return await _memory(stack, config)
    if config.kind == "sse":
        from mcp.client.sse import sse_client

        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx.AsyncClient:
            return _http_client(config, faults, headers)

        read, write = await stack.enter_async_context(
            sse_client(config.url, headers=dict(config.headers), httpx_client_factory=factory)
        )
        return read, write
    from mcp.client.streamable_http import streamable_http_client

    client = await stack.enter_async_context(_http_client(config, faults))
    read, write, _ = await stack.enter_async_context(streamable_http_client(config.url, http_client=client))
    return read, write
