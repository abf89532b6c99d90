"""Calling a built-in tool in a test, and reading its result."""

from typing import Any

from openagent import Tool, ToolContext, ToolResultBlock


async def call(tool: Tool, context: ToolContext, **arguments: Any) -> ToolResultBlock:
    return await tool.call("call_1", arguments, context)


def ok(result: ToolResultBlock) -> str:
    assert not result.is_error, result.content
    assert isinstance(result.content, str)
    return result.content


def failed(result: ToolResultBlock) -> str:
    assert result.is_error, result.content
    assert isinstance(result.content, str)
    return result.content
