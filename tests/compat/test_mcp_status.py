"""The MCP status shapes and Client methods against the real ``claude_agent_sdk``: same keys, same names."""

from __future__ import annotations

import inspect
from typing import Any, get_args

import claude_agent_sdk
import claude_agent_sdk.types as claude
import pytest

from openagent import Client, mcp

SHAPES = ["McpStatusResponse", "McpServerStatus", "McpServerInfo", "McpToolInfo", "McpToolAnnotations"]


@pytest.mark.parametrize("name", SHAPES)
def test_status_shapes_have_the_sdks_keys(name: str) -> None:
    ours, theirs = getattr(mcp, name), getattr(claude, name)
    assert ours.__required_keys__ == theirs.__required_keys__
    assert ours.__optional_keys__ == theirs.__optional_keys__


def test_connection_statuses_are_the_sdks() -> None:
    assert get_args(mcp.McpServerConnectionStatus) == get_args(claude.McpServerConnectionStatus)


@pytest.mark.parametrize("method", ["get_mcp_status", "reconnect_mcp_server", "toggle_mcp_server"])
def test_client_mcp_methods_have_the_sdks_signatures(method: str) -> None:
    ours = inspect.signature(getattr(Client, method))
    theirs = inspect.signature(getattr(claude_agent_sdk.ClaudeSDKClient, method))
    assert list(ours.parameters) == list(theirs.parameters)
    assert inspect.iscoroutinefunction(getattr(Client, method))
    returned = theirs.return_annotation
    assert ours.return_annotation == getattr(returned, "__name__", str(returned))  # McpStatusResponse, None


@pytest.mark.anyio
async def test_the_sdk_client_reports_and_controls_mcp_servers(script: Any) -> None:
    from openagent.compat.claude import ClaudeAgentOptions, ClaudeSDKClient, create_sdk_mcp_server, tool

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    script([])
    options = ClaudeAgentOptions(mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])})
    async with ClaudeSDKClient(options) as client:
        status = await client.get_mcp_status()
        assert status["mcpServers"] == [
            {
                "name": "calc",
                "status": "connected",
                "config": {"type": "sdk", "name": "calc"},
                "tools": [{"name": "add", "description": "Add two numbers"}],
            }
        ]
        await client.toggle_mcp_server("calc", False)
        assert (await client.get_mcp_status())["mcpServers"][0]["status"] == "disabled"
        await client.toggle_mcp_server("calc", True)
        assert (await client.get_mcp_status())["mcpServers"][0]["status"] == "connected"
