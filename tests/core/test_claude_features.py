"""Claude Agent SDK concepts openagent gained: fallback model, hook event messages, file checkpoints,
stoppable subagent tasks, permission updates, run reports, receive_response waiting, stream events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from openagent import AgentOptions, Client, HookMatcher, PermissionResultAllow, query, tool
from openagent.errors import ConfigError, ServerError
from openagent.permissions import PermissionRuleValue, PermissionUpdate
from openagent.testing import ScriptedModel, error, text, tool_call, usage
from openagent.types import (
    AssistantMessage,
    HookEventMessage,
    ResultMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    UserMessage,
    parse_message,
)

pytestmark = pytest.mark.anyio


async def collect(prompt: Any, options: AgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=options)]


async def test_a_failed_model_falls_back_for_the_rest_of_the_run() -> None:
    broken = ScriptedModel([error(ServerError("overloaded", provider="x", status_code=529))] * 10)
    fallback = ScriptedModel([[text("from the fallback"), usage(3, 2)]], model="fallback")
    options = AgentOptions(model=broken, fallback_model=fallback, retry=None)
    options.retry = _no_retry
    messages = await collect("hi", options)
    assert messages[-1].result == "from the fallback"
    assert [m.model for m in messages if isinstance(m, AssistantMessage)] == ["fallback"]
    assert set(messages[-1].model_usage) == {"fallback"}


async def _no_retry(attempt: Any) -> Any:
    return await attempt()


async def test_without_a_fallback_the_failure_is_raised() -> None:
    broken = ScriptedModel([error(ServerError("down", provider="x", status_code=500))])
    with pytest.raises(ServerError):
        await collect("hi", AgentOptions(model=broken, retry=_no_retry))


@tool
def echo(word: str) -> str:
    """Echo a word."""
    return word


async def test_hook_events_surround_each_callback() -> None:
    async def pre(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"permissionDecision": "allow"}}

    async def broken(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        raise RuntimeError("oops")

    hooks = {"PreToolUse": [HookMatcher(hooks=[pre])], "Stop": [HookMatcher(hooks=[broken])]}
    model = ScriptedModel([tool_call("echo", {"word": "x"}), "done"])
    messages = await collect(
        "go", AgentOptions(model=model, tools=[echo], hooks=hooks, include_hook_events=True)
    )
    events = [m for m in messages if isinstance(m, HookEventMessage)]
    assert [(e.subtype, e.hook_event_name) for e in events] == [
        ("hook_started", "PreToolUse"), ("hook_response", "PreToolUse"),
        ("hook_started", "Stop"), ("hook_response", "Stop"),
    ]  # fmt: skip
    assert events[1].data["outcome"] == "success" and events[3].data["outcome"] == "error"
    assert events[3].data["output"] == "RuntimeError: oops" and events[0].uuid and events[0].session_id
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    assert isinstance(parse_message(events[0].model_dump()), HookEventMessage)  # the class survives JSON
    plain = await collect("go", AgentOptions(model=ScriptedModel(["x"]), hooks=hooks))
    assert not any(isinstance(m, HookEventMessage) for m in plain)


@tool(requires_permission=True)
def Write(file_path: str, content: str) -> str:
    """Write a file."""
    Path(file_path).write_text(content)
    return "written"


async def test_rewind_files_puts_back_what_the_edit_tools_changed(tmp_path: Path) -> None:
    kept, created = tmp_path / "kept.txt", tmp_path / "new.txt"
    kept.write_text("original")
    model = ScriptedModel(
        [
            [tool_call("Write", {"file_path": str(kept), "content": "changed once"})],
            [tool_call("Write", {"file_path": str(kept), "content": "changed twice"})],
            "done",
            [tool_call("Write", {"file_path": str(created), "content": "new"})],
            "done again",
        ]
    )
    options = AgentOptions(
        model=model, tools=[Write], permission_mode="acceptEdits", enable_file_checkpointing=True
    )
    async with Client(options) as client:
        await client.query({"type": "user", "message": {"role": "user", "content": "edit"}, "uuid": "first"})
        tool_results = [m async for m in client.receive_response() if isinstance(m, UserMessage)]
        await client.query({"type": "user", "message": {"role": "user", "content": "add"}, "uuid": "second"})
        [m async for m in client.receive_response()]
        assert kept.read_text() == "changed twice" and created.read_text() == "new"
        assert await client.rewind_files(tool_results[0].uuid) == [str(kept), str(created)]
        assert kept.read_text() == "changed once" and not created.exists()
        await client.rewind_files("first")
        assert kept.read_text() == "original"
        with pytest.raises(ConfigError, match="no user message"):
            await client.rewind_files("never sent")
    async with Client(AgentOptions(model=ScriptedModel(["x"]))) as client:
        with pytest.raises(ConfigError, match="enable_file_checkpointing"):
            await client.rewind_files("first")


async def test_stop_task_stops_a_running_subagent() -> None:
    from openagent import AgentDefinition

    slow = ScriptedModel(
        [
            tool_call(
                "Task", {"description": "d", "prompt": "count", "subagent_type": "counter"}, id="task-1"
            ),
            [text("1 2 3 " * 200)],
            "stopped it",
        ],
        chunk_size=1,
        delay=0.005,
    )
    options = AgentOptions(model=slow, agents={"counter": AgentDefinition("counts", "You count.")})
    async with Client(options) as client:
        await client.query("start")
        with pytest.raises(ConfigError, match="no running task"):
            await client.stop_task("task-1")
        messages: list[Any] = []
        async with anyio.create_task_group() as group:

            async def stop_soon() -> None:
                for _ in range(500):  # polled: the task registry has no event to wait on
                    if "task-1" in client.conversation.tasks:
                        break
                    await anyio.sleep(0.01)
                await client.stop_task("task-1")

            group.start_soon(stop_soon)
            with anyio.fail_after(10):
                messages = [m async for m in client.receive_response()]
    started = [m for m in messages if isinstance(m, TaskStartedMessage)]
    ended = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert [m.task_id for m in started] == ["task-1"] and started[0].task_type == "local_agent"
    assert [(m.task_id, m.status) for m in ended] == [("task-1", "stopped")]
    assert messages[-1].result == "stopped it"


async def test_a_callbacks_permission_updates_apply_to_the_session() -> None:
    asked: list[str] = []

    async def can_use_tool(name: str, data: dict[str, Any], context: Any) -> PermissionResultAllow:
        asked.append(name)
        rule = PermissionUpdate("addRules", rules=[PermissionRuleValue("Write")], behavior="allow")
        return PermissionResultAllow(updated_permissions=[rule])

    model = ScriptedModel(
        [
            tool_call("Write", {"file_path": "/dev/null", "content": ""}),
            tool_call("Write", {"file_path": "/dev/null", "content": ""}),
            "ok",
        ]
    )
    messages = await collect("w", AgentOptions(model=model, tools=[Write], can_use_tool=can_use_tool))
    assert asked == ["Write"]  # the second call was allowed by the rule the first answer added
    assert messages[-1].permission_denials == []


async def test_refused_calls_are_listed_in_the_result() -> None:
    model = ScriptedModel([tool_call("Write", {"file_path": "/x", "content": ""}, id="w1"), "could not"])
    result = (await collect("w", AgentOptions(model=model, tools=[Write])))[-1]
    assert result.permission_denials == [
        {"tool_name": "Write", "tool_use_id": "w1", "tool_input": {"file_path": "/x", "content": ""}}
    ]


async def test_receive_response_waits_for_the_next_prompt_and_reads_an_iterable_lazily() -> None:
    pulled: list[str] = []

    async def prompts() -> Any:
        for word in ("one", "two"):
            pulled.append(word)
            yield {"type": "user", "message": {"role": "user", "content": word}}

    async with Client(AgentOptions(model="test:echo")) as client:
        await client.connect(prompts())
        first = [m async for m in client.receive_response()]
        assert first[-1].result == "one" and pulled == ["one"]
        assert [m async for m in client.receive_response()][-1].result == "two"
        with anyio.move_on_after(0.2) as waited:
            [m async for m in client.receive_response()]
        assert waited.cancelled_caught  # nothing more to answer: it waits (a drain loop bounds it)

        async def later() -> None:
            await anyio.sleep(0.05)
            await client.query("three")

        async with anyio.create_task_group() as group:
            group.start_soon(later)
            with anyio.fail_after(5):
                assert [m async for m in client.receive_response()][-1].result == "three"
        info, usage = client.server_info(), client.context_usage()
    assert info["model"] == "echo" and info["commands"] == [] and info["output_style"] == "default"
    assert usage["totalTokens"] > 0 and usage["categories"][-1]["name"] == "Messages"
