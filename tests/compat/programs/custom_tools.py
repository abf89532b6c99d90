"""Custom tools on an in-process MCP server, as in the Claude Agent SDK's custom-tools guide."""

from typing import Any

import anyio

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    ToolUseBlock,
    create_sdk_mcp_server,
    query,
    tool,
)


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


@tool("multiply", "Multiply two numbers", {"a": float, "b": float})
async def multiply(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a'] * args['b']:g}"}]}


calculator = create_sdk_mcp_server(name="calculator", version="2.0.0", tools=[add, multiply])


async def main() -> None:
    options = ClaudeAgentOptions(
        mcp_servers={"calc": calculator},
        allowed_tools=["mcp__calc__add", "mcp__calc__multiply"],
    )
    async for message in query(prompt="What is (2 + 3) * 4?", options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    print(f"tool: {block.name} {block.input}")
                elif isinstance(block, TextBlock):
                    print(f"Claude: {block.text}")
        elif isinstance(message, ResultMessage):
            print(f"result: {message.result}")


if __name__ == "__main__":
    anyio.run(main)
