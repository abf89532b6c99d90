"""A permission callback that allows reads, redirects writes into a safe folder and denies dangerous Bash."""

import asyncio
import json

from openagent.compat.claude import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    TextBlock,
    ToolPermissionContext,
)

tool_usage_log: list[dict] = []


async def my_permission_callback(
    tool_name: str, input_data: dict, context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    tool_usage_log.append({"tool": tool_name, "input": input_data})
    print(f"Tool Permission Request: {tool_name} {json.dumps(input_data, sort_keys=True)}")
    if tool_name in ["Read", "Glob", "Grep"]:
        return PermissionResultAllow()
    if tool_name in ["Write", "Edit", "MultiEdit"]:
        file_path = input_data.get("file_path", "")
        if file_path.startswith("/etc/") or file_path.startswith("/usr/"):
            return PermissionResultDeny(message=f"Cannot write to system directory: {file_path}")
        if not file_path.startswith("./"):
            safe_path = f"./safe_output/{file_path.split('/')[-1]}"
            print(f"  Redirecting write from {file_path} to {safe_path}")
            return PermissionResultAllow(updated_input={**input_data, "file_path": safe_path})
    if tool_name == "Bash":
        command = input_data.get("command", "")
        for dangerous in ["rm -rf", "sudo", "chmod 777", "dd if=", "mkfs"]:
            if dangerous in command:
                return PermissionResultDeny(message=f"Dangerous command pattern detected: {dangerous}")
        return PermissionResultAllow()
    return PermissionResultDeny(message="User denied permission")


async def main() -> None:
    options = ClaudeAgentOptions(can_use_tool=my_permission_callback, permission_mode="default", cwd=".")
    async with ClaudeSDKClient(options) as client:
        await client.query("Create hello.py, run it, then clean up")
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(f"Claude: {block.text}")
            elif isinstance(message, ResultMessage):
                print(
                    f"Task completed: {message.subtype}, denials: {[d['tool_name'] for d in message.permission_denials]}"
                )


if __name__ == "__main__":
    asyncio.run(main())
