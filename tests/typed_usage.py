"""Typical user code; `nox -s types` checks it with mypy --strict, so the public API stays well typed."""

from __future__ import annotations

from openagent import (
    AgentOptions,
    AssistantMessage,
    Client,
    HookContext,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    RunResult,
    TextBlock,
    ToolPermissionContext,
    query,
    run,
    run_sync,
    tool,
)
from openagent.testing import ScriptedModel, tool_call


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def allow_reads(
    name: str, arguments: dict[str, object], context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    return PermissionResultAllow() if name == "Read" else PermissionResultDeny(message="no")


async def log_tool(
    data: dict[str, object], tool_use_id: str | None, context: HookContext
) -> dict[str, object]:
    return {}


OPTIONS = AgentOptions(
    model=ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], "3"]),
    tools=[add],
    can_use_tool=allow_reads,
    hooks={"PreToolUse": [HookMatcher(matcher="add", hooks=[log_tool])]},
    max_turns=3,
)


async def stream() -> str:
    text = ""
    async for message in query(prompt="1 + 2?", options=OPTIONS):
        if isinstance(message, AssistantMessage):
            text += "".join(b.text for b in message.content if isinstance(b, TextBlock))
        elif isinstance(message, ResultMessage):
            assert message.usage is not None
    return text


async def conversation() -> int:
    async with Client(AgentOptions(model="test:echo")) as client:
        await client.query("hello")
        turns = 0
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                turns = message.num_turns
        return turns


async def failed_mcp_servers(client: Client) -> list[str]:
    status = await client.get_mcp_status()
    failed = [s["name"] for s in status["mcpServers"] if s["status"] == "failed"]
    for name in failed:
        await client.reconnect_mcp_server(name)
    return failed


async def once() -> RunResult:
    return await run("hi", AgentOptions(model="test:echo"))


def script() -> str:
    return run_sync("hi", AgentOptions(model="test:echo")).text
