"""Tracing real runs (`openagent.query` over `ScriptedModel`) into the SDK's in-memory span exporter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from openagent import AgentOptions, Client, ProviderError, ResultMessage, ToolError, query, tool
from openagent.agents import AgentDefinition
from openagent.testing import ScriptedModel, text, tool_call, usage
from openagent.tools import ToolContext
from openagent_otel import CAPTURE_CONTENT_ENV, tracing_hooks

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"exploded: {reason}")


async def drive(options: AgentOptions, prompt: str = "What is 2 + 3?") -> list[Any]:
    return [m async for m in query(prompt=prompt, options=options)]


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def one(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = by_name(spans, name)
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


ADD_SCRIPT = [
    [tool_call("add", {"a": 2, "b": 3}, id="call_add"), usage(11, 4)],
    [text("2 + 3 = 5"), usage(20, 6)],
]


async def test_a_run_with_a_tool_call_makes_the_span_tree(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    options = AgentOptions(model=ScriptedModel(ADD_SCRIPT), tools=[add], hooks=tracing_hooks(provider))
    messages = await drive(options)
    session_id = next(m for m in messages if isinstance(m, ResultMessage)).session_id
    spans = exporter.get_finished_spans()

    run = one(spans, "invoke_agent openagent")
    chats = by_name(spans, "chat scripted")
    tool_span = one(spans, "execute_tool add")
    assert len(spans) == 4 and len(chats) == 2
    assert run.parent is None and run.kind == SpanKind.INTERNAL
    assert {parent_of(s) for s in [*chats, tool_span]} == {run.context.span_id}
    assert {s.context.trace_id for s in spans} == {run.context.trace_id}
    assert attrs(run) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "openagent",
        "gen_ai.conversation.id": session_id,
        "gen_ai.usage.input_tokens": 31,
        "gen_ai.usage.output_tokens": 10,
    }
    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert first.kind == SpanKind.CLIENT
    assert attrs(first)["gen_ai.operation.name"] == "chat"
    assert attrs(first)["gen_ai.request.model"] == "scripted"
    assert attrs(first)["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert (attrs(first)["gen_ai.usage.input_tokens"], attrs(first)["gen_ai.usage.output_tokens"]) == (11, 4)
    assert attrs(second)["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert (attrs(second)["gen_ai.usage.input_tokens"], attrs(second)["gen_ai.usage.output_tokens"]) == (
        20,
        6,
    )
    assert attrs(tool_span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_add",
        "gen_ai.tool.type": "function",
    }
    assert tool_span.status.status_code == StatusCode.UNSET
    # the tool ran between the two model calls, inside the run
    assert first.end_time <= tool_span.start_time <= tool_span.end_time <= second.start_time  # type: ignore[operator]
    assert run.start_time <= first.start_time and second.end_time <= run.end_time  # type: ignore[operator]


async def test_content_is_not_recorded_by_default(
    provider: TracerProvider, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    options = AgentOptions(model=ScriptedModel(ADD_SCRIPT), tools=[add], hooks=tracing_hooks(provider))
    await drive(options, "secret prompt 2 + 3")
    for span in exporter.get_finished_spans():
        assert not [key for key in attrs(span) if "messages" in key or "arguments" in key or "result" in key]
        assert "secret prompt" not in json.dumps(attrs(span))


@pytest.mark.parametrize("how", ["argument", "environment"])
async def test_content_is_recorded_when_opted_in(
    provider: TracerProvider, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "environment":
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, "1")
        hooks = tracing_hooks(provider)
    else:
        monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
        hooks = tracing_hooks(provider, capture_content=True)
    options = AgentOptions(
        model=ScriptedModel(ADD_SCRIPT), tools=[add], hooks=hooks, system_prompt="You add numbers."
    )
    await drive(options, "What is 2 + 3?")
    spans = exporter.get_finished_spans()
    first, second = sorted(by_name(spans, "chat scripted"), key=lambda s: s.start_time or 0)
    sent = json.loads(str(attrs(first)["gen_ai.input.messages"]))
    assert sent == [{"role": "user", "parts": [{"type": "text", "content": "What is 2 + 3?"}]}]
    assert json.loads(str(attrs(first)["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "You add numbers."}
    ]
    answered = json.loads(str(attrs(first)["gen_ai.output.messages"]))
    assert answered[0]["parts"][0] == {
        "type": "tool_call",
        "id": "call_add",
        "name": "add",
        "arguments": {"a": 2, "b": 3},
    }
    resent = json.loads(str(attrs(second)["gen_ai.input.messages"]))
    assert resent[-1]["parts"][0] == {"type": "tool_call_response", "id": "call_add", "response": "5"}
    assert "2 + 3 = 5" in str(attrs(second)["gen_ai.output.messages"])
    tool_span = one(spans, "execute_tool add")
    assert json.loads(str(attrs(tool_span)["gen_ai.tool.call.arguments"])) == {"a": 2, "b": 3}
    assert json.loads(str(attrs(tool_span)["gen_ai.tool.call.result"])) == "5"


async def test_a_failing_tool_marks_its_span_as_an_error(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = [[tool_call("explode", {"reason": "on purpose"})], "it failed"]
    options = AgentOptions(model=ScriptedModel(script), tools=[explode], hooks=tracing_hooks(provider))
    await drive(options)
    spans = exporter.get_finished_spans()
    failed = one(spans, "execute_tool explode")
    assert failed.status.status_code == StatusCode.ERROR
    assert "exploded: on purpose" in (failed.status.description or "")
    assert attrs(failed)["error.type"] == "tool_error"
    run = one(spans, "invoke_agent openagent")
    assert run.status.status_code == StatusCode.UNSET  # the run itself recovered and answered


async def test_a_run_that_fails_still_ends_its_spans(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = [[tool_call("add", {"a": 1, "b": 1})], ProviderError("the server went away", provider="test")]
    options = AgentOptions(model=ScriptedModel(script), tools=[add], hooks=tracing_hooks(provider))
    with pytest.raises(ProviderError):
        await drive(options)
    spans = exporter.get_finished_spans()
    run = one(spans, "invoke_agent openagent")
    first, second = sorted(by_name(spans, "chat scripted"), key=lambda s: s.start_time or 0)
    assert first.status.status_code == StatusCode.UNSET
    assert second.status.status_code == StatusCode.ERROR and attrs(second)["error.type"] == "_OTHER"
    assert run.status.status_code == StatusCode.ERROR
    assert parent_of(second) == run.context.span_id and len(spans) == 4


async def test_a_subagent_nests_under_its_task_call(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = [
        [
            tool_call(
                "Task", {"description": "sum", "prompt": "add 2 and 3", "subagent_type": "adder"}, id="task_1"
            )
        ],
        [tool_call("add", {"a": 2, "b": 3}, id="sub_add"), usage(5, 2)],
        "the sum is 5",
        "the subagent says 5",
    ]
    agents = {"adder": AgentDefinition("Adds numbers", "You add numbers.", tools=["add"])}
    options = AgentOptions(
        model=ScriptedModel(script), tools=[add], agents=agents, hooks=tracing_hooks(provider)
    )
    messages = await drive(options)
    assert any(getattr(m, "parent_tool_use_id", None) == "task_1" for m in messages)
    spans = exporter.get_finished_spans()
    top = one(spans, "invoke_agent openagent")
    task = one(spans, "execute_tool Task")
    sub = one(spans, "invoke_agent adder")
    sub_tool = one(spans, "execute_tool add")
    chats = by_name(spans, "chat scripted")
    assert top.parent is None and parent_of(task) == top.context.span_id
    assert parent_of(sub) == task.context.span_id
    assert parent_of(sub_tool) == sub.context.span_id
    assert sorted(parent_of(c) == sub.context.span_id for c in chats) == [False, False, True, True]
    assert attrs(sub)["gen_ai.agent.name"] == "adder"
    assert attrs(sub)["gen_ai.conversation.id"] != attrs(top)["gen_ai.conversation.id"]
    assert attrs(sub)["gen_ai.usage.input_tokens"] == 5
    assert task.start_time <= sub.start_time and sub.end_time <= task.end_time  # type: ignore[operator]
    assert {s.context.trace_id for s in spans} == {top.context.trace_id}


async def test_each_prompt_of_a_client_is_its_own_run(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    options = AgentOptions(model=ScriptedModel(["one", "two"]), hooks=tracing_hooks(provider))
    async with Client(options) as client:
        for prompt in ("first", "second"):
            await client.query(prompt)
            _ = [m async for m in client.receive_response()]
    runs = by_name(exporter.get_finished_spans(), "invoke_agent openagent")
    assert len(runs) == 2 and runs[0].context.trace_id != runs[1].context.trace_id
    assert len({attrs(r)["gen_ai.conversation.id"] for r in runs}) == 1


async def test_a_run_cut_off_by_the_turn_limit_ends_at_session_end(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    script = [[tool_call("add", {"a": 1, "b": 2})], "never reached"]
    options = AgentOptions(
        model=ScriptedModel(script), tools=[add], max_turns=1, hooks=tracing_hooks(provider)
    )
    messages = await drive(options)
    assert messages[-1].subtype == "error_max_turns"
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans if s.name.startswith("invoke_agent")] == ["invoke_agent openagent"]
    assert len(by_name(spans, "chat scripted")) == 1 and len(by_name(spans, "execute_tool add")) == 1


async def test_a_tool_call_a_hook_blocks_still_ends_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    from openagent import HookMatcher

    async def deny(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"decision": "block", "reason": "not today"}

    hooks = tracing_hooks(provider)
    hooks["PreToolUse"] = [*hooks["PreToolUse"], HookMatcher(hooks=[deny])]
    options = AgentOptions(
        model=ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], "ok"]), tools=[add], hooks=hooks
    )
    await drive(options)
    blocked = one(exporter.get_finished_spans(), "execute_tool add")
    assert blocked.status.status_code == StatusCode.ERROR


async def test_the_installed_plugin_traces_every_run(
    global_exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openagent.plugins import registry

    monkeypatch.setenv("OPENAGENT_PLUGINS", "otel")
    info = registry().plugins["otel"]
    assert info.error is None and "PreToolUse" in info.hooks
    await drive(AgentOptions(model=ScriptedModel(ADD_SCRIPT), tools=[add]))
    names = sorted(s.name for s in global_exporter.get_finished_spans())
    assert names == ["chat scripted", "chat scripted", "execute_tool add", "invoke_agent openagent"]


async def test_parallel_subagents_each_nest_under_their_own_task_call(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    calls = [
        tool_call("Task", {"description": "a", "prompt": "say a", "subagent_type": "echo"}, id="task_a"),
        tool_call("Task", {"description": "b", "prompt": "say b", "subagent_type": "echo"}, id="task_b"),
    ]
    agents = {"echo": AgentDefinition("Repeats", "You repeat.")}
    options = AgentOptions(
        model=ScriptedModel([calls, "child says", "child says", "both done"]),
        agents=agents,
        hooks=tracing_hooks(provider),
    )
    await drive(options)
    spans = exporter.get_finished_spans()
    tasks = {attrs(s)["gen_ai.tool.call.id"]: s for s in by_name(spans, "execute_tool Task")}
    subs = by_name(spans, "invoke_agent echo")
    assert set(tasks) == {"task_a", "task_b"} and len(subs) == 2
    assert sorted(parent_of(s) for s in subs) == sorted(t.context.span_id for t in tasks.values())
    for sub in subs:
        chat = next(c for c in by_name(spans, "chat scripted") if parent_of(c) == sub.context.span_id)
        assert chat.end_time <= sub.end_time  # type: ignore[operator]


async def test_a_subagent_of_a_subagent_nests_two_levels_down(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    def task(call_id: str) -> Any:
        return tool_call("Task", {"description": "d", "prompt": "go", "subagent_type": "helper"}, id=call_id)

    agents = {"helper": AgentDefinition("Helps", "You help.")}
    script = [[task("outer")], [task("inner")], "leaf answer", "middle answer", "top answer"]
    options = AgentOptions(model=ScriptedModel(script), agents=agents, hooks=tracing_hooks(provider))
    await drive(options)
    spans = exporter.get_finished_spans()
    calls = {attrs(s)["gen_ai.tool.call.id"]: s for s in by_name(spans, "execute_tool Task")}
    helpers = by_name(spans, "invoke_agent helper")
    top = one(spans, "invoke_agent openagent")
    assert parent_of(calls["outer"]) == top.context.span_id
    middle = next(h for h in helpers if parent_of(h) == calls["outer"].context.span_id)
    assert parent_of(calls["inner"]) == middle.context.span_id
    leaf = next(h for h in helpers if parent_of(h) == calls["inner"].context.span_id)
    assert len(helpers) == 2 and leaf is not middle
    assert len(spans) == 2 + 3 + 5  # two Task calls, three runs, five model calls


async def test_a_compaction_is_an_event_on_the_run(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    from openagent.compaction import Compaction

    long = "x" * 3000
    script = [[tool_call("add", {"a": 1, "b": 2})], long, "summary of the start", "short answer"]
    options = AgentOptions(
        model=ScriptedModel(script),
        tools=[add],
        hooks=tracing_hooks(provider),
        compaction=Compaction(context_window=1000, keep_last=2),
    )
    async with Client(options) as client:
        for prompt in ("first", "second"):
            await client.query(prompt)
            _ = [m async for m in client.receive_response()]
    runs = sorted(
        by_name(exporter.get_finished_spans(), "invoke_agent openagent"), key=lambda s: s.start_time or 0
    )
    assert [[(e.name, dict(e.attributes or {})) for e in r.events] for r in runs] == [
        [],
        [("openagent.compaction", {"trigger": "auto"})],
    ]


async def test_a_tools_progress_is_an_event_on_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    @tool
    async def download(context: ToolContext) -> str:
        """Report progress twice."""
        assert context.notify is not None  # the tracing hooks listen to Notification
        for step in (1, 2):
            await context.notify(
                {"notification_type": "tool_progress", "progress": step, "total": 2, "message": f"{step}/2"}
            )
        return "done"

    script = [[tool_call("download", {}, id="call_dl")], "ok"]
    await drive(AgentOptions(model=ScriptedModel(script), tools=[download], hooks=tracing_hooks(provider)))
    span = one(exporter.get_finished_spans(), "execute_tool download")
    assert [(e.name, dict(e.attributes or {})) for e in span.events] == [
        ("openagent.tool.progress", {"progress": 1, "total": 2, "message": "1/2"}),
        ("openagent.tool.progress", {"progress": 2, "total": 2, "message": "2/2"}),
    ]
