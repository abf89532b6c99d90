"""A can_use_tool callback that rewrites one tool's input and denies another, from the permissions guide."""

from typing import Any

import anyio

from openagent.compat.claude import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

asked: list[str] = []


@tool("read", "Read a file", {"path": str})
async def read(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"contents of {args['path']}"}]}


@tool("write", "Write a file", {"path": str, "text": str})
async def write(args: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("the permission callback must have denied this")


async def can_use_tool(
    tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    asked.append(tool_name)
    if tool_name == "mcp__files__write":
        return PermissionResultDeny(message="Writing is not allowed in this session")
    if input_data.get("path", "").startswith("/etc/"):
        return PermissionResultAllow(updated_input={**input_data, "path": "/sandbox" + input_data["path"]})
    return PermissionResultAllow()


async def main() -> None:
    options = ClaudeAgentOptions(
        mcp_servers={"files": create_sdk_mcp_server("files", tools=[read, write])},
        can_use_tool=can_use_tool,
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Read /etc/hosts and save a copy.")
        async for message in client.receive_response():
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                for block in message.content:
                    print(f"tool result: {block.content!r} error={block.is_error}")
            elif isinstance(message, ResultMessage):
                print(f"result: {message.result}")


if __name__ == "__main__":
    anyio.run(main)
