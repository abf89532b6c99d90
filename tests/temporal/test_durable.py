"""Durable runs on the real Temporal dev server: the same messages as `query()`, approvals, interrupts,
subagents as child workflows, sessions any process can resume."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from openagent import AgentDefinition, AgentOptions, Message, ResultMessage, query, tool
from openagent.testing import ScriptedModel, tool_call, usage
from openagent_temporal import DurableAgent, attach, durable_query, start_run, worker

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def script() -> list[Any]:
    return [
        [tool_call("add", {"a": 2, "b": 3}, id="c1"), tool_call("add", {"a": 1, "b": 1}, id="c2"), usage(10, 4)],
        ["2 + 3 = 5, and 1 + 1 = 2", usage(20, 9)],
    ]


def comparable(messages: list[Message]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        data = message.model_dump(mode="json", exclude={"uuid"})
        if isinstance(message, ResultMessage):
            data.pop("duration_ms"), data.pop("duration_api_ms")
        if data.get("type") == "system":
            data.get("data", {}).pop("uuid", None)
        out.append(data)
    return out


async def test_a_tool_loop_as_a_workflow_yields_the_messages_of_query(temporal_server: str, task_queue: str, tmp_path) -> None:
    def options(model: ScriptedModel) -> AgentOptions:
        return AgentOptions(model=model, tools=[add], cwd=str(tmp_path), permission_mode="bypassPermissions")

    expected = [m async for m in query(prompt="add them", options=options(ScriptedModel(script())).replace(session_id="s-1"))]
    model = ScriptedModel(script())
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"adder": options(model)}):
        got = [m async for m in durable_query(prompt="add them", client=client, task_queue=task_queue, agent="adder", session_id="s-1")]
    assert comparable(got) == comparable(expected)
    assert [type(m).__name__ for m in got] == [
        "SystemMessage", "AssistantMessage", "UserMessage", "AssistantMessage", "ResultMessage",
    ]
    assert got[-1].result == "2 + 3 = 5, and 1 + 1 = 2"
