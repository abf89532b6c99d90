"""A real MCP server written with the ``mcp`` package, with tools that fail on command.

``python servers.py stdio`` | ``python servers.py http PORT`` | ``python servers.py sse PORT`` |
``python servers.py json PORT`` (streamable HTTP answering in JSON instead of SSE). When ``MCP_PID_FILE``
is set, the server writes its process id there; ``MCP_START_DELAY`` (seconds) delays its start.

Faults: ``die`` exits the process during the call (after ``after`` seconds, saying so on stderr), ``hang``
never answers, ``garbage`` writes a line that is not JSON-RPC instead of answering, ``http_error`` answers
HTTP 500 (HTTP transports), ``slow`` answers after ``seconds`` with progress notifications on the way.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from typing import Any

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolExecution,
)
from pydantic import AnyUrl, BaseModel

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n-fake-pixel").decode()
LONG_NAME = "summarise_the_quarterly_report_for_the_board_with_all_the_footnotes_included"


class Weather(BaseModel):
    city: str
    celsius: float


class Faulty(FastMCP):  # type: ignore[type-arg]
    """FastMCP, with one tool marked as runnable only as an MCP task."""

    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        for found in tools:
            if found.name == "background_only":
                found.execution = ToolExecution(taskSupport="required")
        return tools


def _die(after: float, code: int = 3) -> None:
    def later() -> None:
        time.sleep(after)
        sys.stderr.write("dying on command\n")
        sys.stderr.flush()
        os._exit(code)

    threading.Thread(target=later, daemon=True).start()


def _content_tools(server: FastMCP) -> None:  # type: ignore[type-arg]
    @server.tool()
    def picture() -> list[TextContent | ImageContent]:
        """A caption and a one-pixel image."""
        return [
            TextContent(type="text", text="a pixel"),
            ImageContent(type="image", data=PIXEL, mimeType="image/png"),
        ]

    @server.tool()
    def big_picture(megabytes: float) -> ImageContent:
        """An image of about this size."""
        data = base64.b64encode(b"\x89PNG" + b"\0" * int(megabytes * 1e6)).decode()
        return ImageContent(type="image", data=data, mimeType="image/png")

    @server.tool()
    def readme() -> EmbeddedResource:
        """An embedded text resource."""
        contents = TextResourceContents(
            uri=AnyUrl("file:///README"), mimeType="text/plain", text="hello from a resource"
        )
        return EmbeddedResource(type="resource", resource=contents)

    @server.tool()
    def text_blob() -> EmbeddedResource:
        """A text/plain resource sent as a base64 blob."""
        blob = base64.b64encode("naïve café, in a blob".encode()).decode()
        contents = BlobResourceContents(uri=AnyUrl("file:///notes.txt"), mimeType="text/plain", blob=blob)
        return EmbeddedResource(type="resource", resource=contents)

    @server.tool()
    def link() -> ResourceLink:
        """A link to a resource, with its metadata."""
        return ResourceLink(
            type="resource_link",
            uri=AnyUrl("memo://greeting"),
            name="greeting",
            title="The greeting",
            description="How the server says hello",
            mimeType="text/plain",
            size=21,
        )

    @server.tool()
    def weather(city: str) -> Weather:
        """Structured weather."""
        return Weather(city=city, celsius=21.5)

    @server.tool()
    def background_only() -> str:
        """Runs only as a task (see Faulty.list_tools)."""
        return "never offered"


def _fault_tools(server: FastMCP) -> None:  # type: ignore[type-arg]
    @server.tool()
    async def die(after: float = 0.0) -> str:
        """Exit the process during the call."""
        _die(after)
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    async def hang() -> str:
        """Never answer."""
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    async def garbage() -> str:
        """Write a line that is not JSON-RPC to stdout, and never answer."""
        os.write(1, b"this is not json-rpc\n")
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    def http_error() -> str:
        """Answered with HTTP 500 by the HTTP transports' middleware."""
        return "not over HTTP"

    @server.tool()
    async def slow(seconds: float, steps: int, ctx: Context) -> str:  # type: ignore[type-arg]
        """Answer after ``seconds``, reporting progress ``steps`` times on the way."""
        for step in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(step, steps, f"step {step}")
        return f"done after {seconds:g} s"

    @server.tool()
    async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
        """Add a tool named ``extra`` and tell the client the tool list changed."""

        def extra() -> str:
            """A tool added at run time."""
            return "extra!"

        server.add_tool(extra)
        await ctx.session.send_tool_list_changed()
        return "grown"


def build(port: int = 0, **settings: Any) -> FastMCP:  # type: ignore[type-arg]
    server = Faulty("calc", host="127.0.0.1", port=port, log_level="WARNING", **settings)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def explode() -> str:
        """Always fails."""
        raise ValueError("boom")

    @server.tool()
    def header(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """The value of an HTTP request header (HTTP transports only)."""
        request = ctx.request_context.request
        return request.headers.get(name, "") if request is not None else ""

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    server.add_tool(lambda: "do.it", name="do.it", description="Dotted.")
    server.add_tool(lambda: "do_it", name="do_it", description="Underscored.")
    server.add_tool(lambda: "long", name=LONG_NAME, description="A tool with a long name.")

    @server.resource("memo://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello from a resource"

    @server.prompt()
    def review(code: str) -> str:
        """Ask for a review."""
        return f"Please review: {code}"

    _content_tools(server)
    _fault_tools(server)
    return server


def _faults(app: Any) -> Any:
    """ASGI middleware: ``garbage`` and ``http_error`` calls answered at the HTTP level; ``/locked`` is 401."""

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        if scope["path"].startswith("/locked"):  # a server that wants credentials
            await send(
                {"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]}
            )
            return await send({"type": "http.response.body", "body": b"missing token"})
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            tool = json.loads(body).get("params", {}).get("name")
        except (ValueError, AttributeError):
            tool = None
        if tool in ("garbage", "http_error"):
            status, text = (200, b"{this is not json") if tool == "garbage" else (500, b"database exploded")
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            return await send({"type": "http.response.body", "body": text})
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return middleware


def main() -> None:
    if delay := os.environ.get("MCP_START_DELAY"):
        time.sleep(float(delay))
    if path := os.environ.get("MCP_PID_FILE"):
        with open(path, "w") as fh:
            fh.write(str(os.getpid()))
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = build(port, json_response=transport == "json")
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    uvicorn.run(_faults(app), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
