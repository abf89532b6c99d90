"""A PreToolUse hook that blocks dangerous commands and a PostToolUse hook that logs, from the hooks guide."""

from typing import Any

import anyio

from openagent.compat.claude import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookContext,
    HookMatcher,
    ResultMessage,
    create_sdk_mcp_server,
    tool,
)

executed: list[str] = []


@tool("run", "Run a shell command", {"command": str})
async def run(args: dict[str, Any]) -> dict[str, Any]:
    executed.append(args["command"])
    return {"content": [{"type": "text", "text": f"ran {args['command']}"}]}


async def check_command(
    input_data: dict[str, Any], tool_use_id: str | None, context: HookContext
) -> dict[str, Any]:
    command = input_data["tool_input"].get("command", "")
    if "rm -rf" in command:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"Dangerous command blocked: {command}",
            }
        }
    return {}


async def log_use(
    input_data: dict[str, Any], tool_use_id: str | None, context: HookContext
) -> dict[str, Any]:
    print(f"used {input_data['tool_name']}: {input_data['tool_response']}")
    return {}


async def main() -> None:
    options = ClaudeAgentOptions(
        mcp_servers={"shell": create_sdk_mcp_server("shell", tools=[run])},
        allowed_tools=["mcp__shell__run"],
        hooks={
            "PreToolUse": [HookMatcher(matcher="mcp__shell__run", hooks=[check_command])],
            "PostToolUse": [HookMatcher(matcher="mcp__shell__.*", hooks=[log_use])],
        },
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Clean up the build directory, then list it.")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                print(f"result: {message.result}")


if __name__ == "__main__":
    anyio.run(main)
