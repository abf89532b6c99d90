"""The tools a toolset offers: one per server tool, and ListMcpResourcesTool / ReadMcpResourceTool.

A server tool's call runs in the caller's task through `RemoteServer.request`; its progress notifications
reset its timeout and reach the conversation's ``Notification`` hooks (``notification_type`` is
``tool_progress``) without ever blocking the session; its structured content stays on the result.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from openagent.errors import ToolError
from openagent.tools import Tool, ToolContext
from openagent.types import ToolResultBlock

from ._content import to_blocks
from ._errors import McpServerError

if TYPE_CHECKING:
    from ._server import RemoteServer
    from ._toolset import McpToolset

__all__ = ["LIST_RESOURCES", "READ_RESOURCE", "McpTool", "remote_tool", "resource_tools", "retyped"]

LIST_RESOURCES = "ListMcpResourcesTool"
READ_RESOURCE = "ReadMcpResourceTool"
_CONTEXT: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "openagent_mcp_tool", default=None
)
_MAX_DESCRIPTION = 2048  # characters of a server's tool description the model sees
_MAX_LISTED = 500  # resources listed per server by ListMcpResourcesTool


@dataclass(eq=False)
class McpTool(Tool):
    """A tool backed by an MCP server; its handler can see the call's `ToolContext`."""

    server: str = ""
    """The server's key in ``mcp_servers``."""
    remote_name: str = ""
    """The tool's own name on the server (the model sees ``mcp__<server>__<tool>``)."""

    async def call(
        self, tool_use_id: str, arguments: dict[str, Any], context: ToolContext
    ) -> ToolResultBlock:
        """Run the call with its context visible to the handler."""
        token = _CONTEXT.set(context)
        try:
            return await super().call(tool_use_id, arguments, context)
        finally:
            _CONTEXT.reset(token)


def retyped(original: Tool, **changes: Any) -> McpTool:
    """``original`` as an `McpTool` (an in-process server's tool), with ``changes``."""
    values = {f.name: getattr(original, f.name) for f in fields(Tool) if f.init}
    return McpTool(**{**values, **changes})


async def _forward(events: MemoryObjectReceiveStream[dict[str, Any]], notify: Callable[..., Any]) -> None:
    async with events:
        async for event in events:
            await notify(event)


async def _with_progress(server: RemoteServer, tool: str, run: Callable[[Any], Any]) -> Any:
    """``run(on_progress)``, handing progress notifications to the Notification hooks in order."""
    context = _CONTEXT.get()
    notify = getattr(context, "notify", None)
    if notify is None:
        return await run(None)
    send, receive = anyio.create_memory_object_stream[dict[str, Any]](64)

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        text = message or (f"{progress:g}/{total:g}" if total else f"{progress:g}")
        event = {"notification_type": "tool_progress", "title": tool, "message": text, "server": server.key}
        try:
            send.send_nowait({**event, "progress": progress, "total": total})
        except anyio.WouldBlock:  # hooks are behind: drop this one rather than stall the session
            pass

    async with anyio.create_task_group() as group:
        group.start_soon(_forward, receive, notify)
        with send:
            return await run(on_progress)


def remote_tool(toolset: McpToolset, server: RemoteServer, found: Any, name: str) -> McpTool:
    """The tool ``found`` (an ``mcp.types.Tool``) of ``server``, named ``name``."""
    remote = found.name

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        async def run(on_progress: Any) -> Any:
            try:
                return await server.request(
                    f"calling {remote!r}",
                    lambda session, progress: session.call_tool(remote, args, progress_callback=progress),
                    within=server.config.timeout_for(remote),
                    on_progress=on_progress,
                )
            except McpServerError as exc:  # returned, not raised: a task group would wrap it
                return exc

        result = await _with_progress(server, name, run)
        if isinstance(result, McpServerError):
            raise ToolError(str(result))
        limit, link_server = server.config.max_binary_bytes, toolset.resource_server(server.key)
        content = to_blocks(result.content, result.structuredContent, limit=limit, server=link_server)
        answer: dict[str, Any] = {"content": content, "is_error": result.isError}
        if result.structuredContent is not None:
            answer["structured_content"] = result.structuredContent
        return answer

    description = found.description or found.title or remote
    if len(description) > _MAX_DESCRIPTION:
        description = description[: _MAX_DESCRIPTION - 1] + "…"
    annotations = getattr(found, "annotations", None)
    return McpTool(
        name=name,
        description=description,
        input_schema=dict(found.inputSchema or {"type": "object", "properties": {}}),
        handler=handler,
        style="args",
        is_read_only=bool(getattr(annotations, "readOnlyHint", False)),
        # As in Claude Code: a server's tool runs only when a rule (``mcp__server``, ``mcp__server__tool``),
        # a mode or ``can_use_tool`` allows it — its annotations are the server's word, not the user's.
        requires_permission=True,
        server=server.key,
        remote_name=remote,
    )


def resource_tools(toolset: McpToolset) -> list[McpTool]:
    """Claude Code's two resource tools, over every connected server that offers resources."""

    async def list_resources(args: dict[str, Any]) -> str:
        keys = [args["server"]] if args.get("server") else toolset.resource_servers()
        found: list[dict[str, Any]] = []
        for key in keys:
            try:
                resources = await toolset.list_resources(key)
            except McpServerError as exc:
                found.append({"server": key, "error": str(exc)})
                continue
            for item in resources[:_MAX_LISTED]:
                found.append(
                    {"server": key, **item.model_dump(mode="json", by_alias=True, exclude_none=True)}
                )
        return json.dumps(found, ensure_ascii=False)

    async def read_resource(args: dict[str, Any]) -> dict[str, Any]:
        try:
            result = await toolset.read_resource(args["server"], args["uri"])
        except McpServerError as exc:
            raise ToolError(str(exc)) from None
        limit = toolset.limit_for(args["server"])
        items = [{"type": "resource", "resource": c} for c in result.contents]
        return {"content": to_blocks(items, limit=limit, server=args["server"])}

    server = {"type": "string", "description": "The MCP server's name"}
    return [
        McpTool(
            name=LIST_RESOURCES,
            description="List the resources (files, data …) the connected MCP servers offer, with their "
            "URIs. Give a server's name to list only its resources.",
            input_schema={"type": "object", "properties": {"server": server}},
            handler=list_resources,
            style="args",
            is_read_only=True,
        ),
        McpTool(
            name=READ_RESOURCE,
            description="Read one resource of an MCP server by its URI.",
            input_schema={
                "type": "object",
                "properties": {
                    "server": server,
                    "uri": {"type": "string", "description": "The resource URI"},
                },
                "required": ["server", "uri"],
            },
            handler=read_resource,
            style="args",
            is_read_only=True,
        ),
    ]
