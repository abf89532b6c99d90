"""An in-process MCP calculator server, used by a streaming client (the SDK's mcp_calculator example)."""

import asyncio
import math
from typing import Any

from openagent.compat.claude import ClaudeAgentOptions, create_sdk_mcp_server, tool


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add_numbers(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a']} + {args['b']} = {args['a'] + args['b']}"}]}


@tool("divide", "Divide one number by another", {"a": float, "b": float})
async def divide_numbers(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        return {
            "content": [{"type": "text", "text": "Error: Division by zero is not allowed"}],
            "is_error": True,
        }
    return {"content": [{"type": "text", "text": f"{args['a']} ÷ {args['b']} = {args['a'] / args['b']}"}]}


@tool("sqrt", "Calculate square root", {"n": float})
async def square_root(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"√{args['n']} = {math.sqrt(args['n'])}"}]}


def display_message(msg: object) -> None:
    from openagent.compat.claude import (
        AssistantMessage,
        ResultMessage,
        TextBlock,
        ToolResultBlock,
        ToolUseBlock,
        UserMessage,
    )

    if isinstance(msg, UserMessage):
        for block in msg.content:
            if isinstance(block, ToolResultBlock):
                print(
                    f"Tool Result: {block.content[0]['text'] if block.content else 'None'} error={block.is_error}"
                )
    elif isinstance(msg, AssistantMessage):
        for block in msg.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
            elif isinstance(block, ToolUseBlock):
                print(f"Using tool: {block.name} {block.input}")
    elif isinstance(msg, ResultMessage):
        print("Result ended")


async def main() -> None:
    from openagent.compat.claude import ClaudeSDKClient

    calculator = create_sdk_mcp_server(
        name="calculator", version="2.0.0", tools=[add_numbers, divide_numbers, square_root]
    )
    options = ClaudeAgentOptions(
        mcp_servers={"calc": calculator},
        allowed_tools=["mcp__calc__add", "mcp__calc__divide", "mcp__calc__sqrt"],
    )
    for prompt in ["Calculate 15 + 27", "What is 100 divided by 0?", "Calculate the square root of 144"]:
        print(f"Prompt: {prompt}")
        async with ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            async for message in client.receive_response():
                display_message(message)


if __name__ == "__main__":
    asyncio.run(main())
