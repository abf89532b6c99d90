"""Hooks with typed inputs, as the SDK's hooks example writes them: block a command, add context, stop."""

import logging

import anyio

from openagent.compat.claude import ClaudeAgentOptions, ClaudeSDKClient
from openagent.compat.claude.types import (
    AssistantMessage,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    Message,
    ResultMessage,
    TextBlock,
)

logger = logging.getLogger(__name__)


def display_message(msg: Message) -> None:
    if isinstance(msg, AssistantMessage):
        for block in msg.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
    elif isinstance(msg, ResultMessage):
        print(f"Result ended: {msg.subtype}")


async def check_bash_command(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    if input_data["tool_name"] != "Bash":
        return {}
    command = input_data["tool_input"].get("command", "")
    if "foo.sh" in command:
        logger.warning("Blocked command: %s", command)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Command contains invalid pattern: foo.sh",
            }
        }
    return {}


async def add_custom_instructions(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "My favorite color is hot pink",
        }
    }


async def review_tool_output(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    if "no such file" in str(input_data.get("tool_response", "")).lower():
        return {
            "systemMessage": "The command produced an error",
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "The command failed. Try a different approach.",
            },
        }
    return {}


async def stop_on_error_hook(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    if "critical" in str(input_data.get("tool_response", "")).lower():
        return {"continue_": False, "stopReason": "Critical error detected in tool output"}
    return {"continue_": True}


async def run(options: ClaudeAgentOptions, *prompts: str) -> None:
    async with ClaudeSDKClient(options=options) as client:
        for prompt in prompts:
            print(f"User: {prompt}")
            await client.query(prompt)
            async for msg in client.receive_response():
                display_message(msg)


async def main() -> None:
    bash = HookMatcher(matcher="Bash", hooks=[check_bash_command])
    await run(
        ClaudeAgentOptions(allowed_tools=["Bash"], hooks={"PreToolUse": [bash]}),
        "Run the bash command: ./foo.sh --help",
        "Run the bash command: echo 'Hello from hooks example!'",
    )
    prompt_hook = HookMatcher(matcher=None, hooks=[add_custom_instructions])
    await run(ClaudeAgentOptions(hooks={"UserPromptSubmit": [prompt_hook]}), "What's my favorite color?")
    review = HookMatcher(matcher="Bash", hooks=[review_tool_output])
    hooks = {"PostToolUse": [review], "PostToolUseFailure": [review]}  # a failing command is a failed call
    await run(ClaudeAgentOptions(allowed_tools=["Bash"], hooks=hooks), "ls /nonexistent_directory")
    stop = HookMatcher(matcher="Bash", hooks=[stop_on_error_hook])
    await run(
        ClaudeAgentOptions(allowed_tools=["Bash"], hooks={"PostToolUse": [stop]}), "echo 'CRITICAL ERROR'"
    )


if __name__ == "__main__":
    anyio.run(main)
