"""A real MCP server written with the ``mcp`` package, served over stdio, SSE or streamable HTTP.

``python servers.py stdio`` | ``python servers.py http PORT`` | ``python servers.py sse PORT``. When
``MCP_PID_FILE`` is set, the server writes its process id there (tests check it is gone afterwards).
"""

from __future__ import annotations

import base64
import os
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import EmbeddedResource, ImageContent, TextContent, TextResourceContents

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n-fake-pixel").decode()


def build(port: int = 0) -> FastMCP:
    server = FastMCP("calc", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def picture() -> list[TextContent | ImageContent]:
        """A caption and a one-pixel image."""
        return [
            TextContent(type="text", text="a pixel"),
            ImageContent(type="image", data=PIXEL, mimeType="image/png"),
        ]

    @server.tool()
    def readme() -> EmbeddedResource:
        """An embedded text resource."""
        contents = TextResourceContents(
            uri="file:///README", mimeType="text/plain", text="hello from a resource"
        )
        return EmbeddedResource(type="resource", resource=contents)

    @server.tool()
    def explode() -> str:
        """Always fails."""
        raise ValueError("boom")

    @server.tool()
    def header(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """The value of an HTTP request header (HTTP transports only)."""
        request = ctx.request_context.request
        return request.headers.get(name, "") if request is not None else ""

    return server


def main() -> None:
    if path := os.environ.get("MCP_PID_FILE"):
        with open(path, "w") as fh:
            fh.write(str(os.getpid()))
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = build(port)
    server.run({"stdio": "stdio", "http": "streamable-http", "sse": "sse"}[transport])  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
