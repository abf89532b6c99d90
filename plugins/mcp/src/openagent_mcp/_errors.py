"""The errors an MCP server's failures raise in Python code (the model sees them as error results)."""

from __future__ import annotations

from openagent.errors import OpenAgentError, ProviderConnectionError

__all__ = ["McpConnectionError", "McpServerError"]


class McpServerError(OpenAgentError):
    """An MCP server failed, was not connected, or did not answer in time; the message says which and why."""

    def __init__(self, message: str, *, server: str) -> None:
        self.server = server
        """The server's key in ``mcp_servers``."""
        super().__init__(f"MCP server {server!r}: {message}")


class McpConnectionError(McpServerError, ProviderConnectionError):
    """An MCP server could not be reached or started. Retryable: a ``reconnect`` policy tries again."""

    def __init__(self, message: str, *, server: str) -> None:
        ProviderConnectionError.__init__(self, message, provider=f"MCP server {server!r}")
        self.server = server
