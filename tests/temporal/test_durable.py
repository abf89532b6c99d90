"""Durable runs on the real Temporal dev server: the same messages as `query()`, approvals, interrupts,
subagents as child workflows, sessions any process can resume."""

from __future__ import annotations

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
        [
            tool_call("add", {"a": 2, "b": 3}, id="c1"),
            tool_call("add", {"a": 1, "b": 1}, id="c2"),
            usage(10, 4),
        ],
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


@pytest.mark.parametrize("fast", [False, True], ids=["default", "unsandboxed-local-turns"])
async def test_a_tool_loop_as_a_workflow_yields_the_messages_of_query(
    temporal_server: str, task_queue: str, tmp_path, fast: bool
) -> None:
    def options(model: ScriptedModel) -> AgentOptions:
        return AgentOptions(model=model, tools=[add], cwd=str(tmp_path), permission_mode="bypassPermissions")

    expected = [
        m
        async for m in query(
            prompt="add them", options=options(ScriptedModel(script())).replace(session_id="s-1")
        )
    ]
    model = ScriptedModel(script())
    client = await Client.connect(temporal_server)
    agent = DurableAgent(options(model), local_model_turns=fast)
    async with worker(client, task_queue, {"adder": agent}, sandboxed=not fast):
        got = [
            m
            async for m in durable_query(
                prompt="add them", client=client, task_queue=task_queue, agent="adder", session_id="s-1"
            )
        ]
    assert comparable(got) == comparable(expected)
    assert [type(m).__name__ for m in got] == [
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    assert got[-1].result == "2 + 3 = 5, and 1 + 1 = 2"


def entry_shape(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """A session's entries as what each says: its type, and for a tool call's note, which call and how.

    Calls run at once finish in either order, in-process and durably alike: their notes, one group between
    the assistant message and the results, are compared in call id order.
    """
    shape: list[Any] = []
    for entry in entries:
        if entry["type"] == "tool_outcome":
            note = ("tool_outcome", entry["tool_use_id"], entry["tool_name"], entry["permission"])
            if shape and isinstance(shape[-1], list):
                shape[-1].append(note)
            else:
                shape.append([note])
        else:
            shape.append((entry["type"], entry.get("message", {}).get("subtype")))
    return [
        note
        for item in shape
        for note in (sorted(item, key=lambda n: n[1]) if isinstance(item, list) else [item])
    ]


@pytest.mark.parametrize("fast", [False, True], ids=["default", "unsandboxed-local-turns"])
async def test_a_durable_run_writes_the_session_query_writes(
    temporal_server: str, task_queue: str, tmp_path, fast: bool
) -> None:
    from openagent import MemorySessionStore
    from openagent.plugin import project_key_for

    store = MemorySessionStore()

    def options(session_id: str) -> AgentOptions:
        return AgentOptions(
            model=ScriptedModel(script()), tools=[add], cwd=str(tmp_path), session_store=store,
            permission_mode="bypassPermissions", session_id=session_id,
        )  # fmt: skip

    [m async for m in query(prompt="add them", options=options("in-process"))]
    client = await Client.connect(temporal_server)
    agent = DurableAgent(options("durable"), local_model_turns=fast)
    async with worker(client, task_queue, {"adder": agent}, sandboxed=not fast):
        run = await start_run(client, "add them", task_queue=task_queue, agent="adder", session_id="durable")
        with anyio.fail_after(30):
            await run.result()
    project = project_key_for(tmp_path)
    expected = await store.load({"project_key": project, "session_id": "in-process"})
    got = await store.load({"project_key": project, "session_id": "durable"})
    assert expected is not None and got is not None
    assert entry_shape(got) == entry_shape(expected)
    notes = [e for e in entry_shape(got) if e[0] == "tool_outcome"]
    assert [note[1] for note in notes] == ["c1", "c2"]  # one note per call, each with its permission
    assert all(note[3]["behavior"] == "allow" for note in notes)


@tool(requires_permission=True)
def launch(target: str) -> str:
    """Launch something (it needs a person's approval)."""
    return f"launched {target}"


async def first(run: Any, kind: type, predicate: Any = lambda m: True) -> Any:
    async for message in run.messages():
        if isinstance(message, kind) and predicate(message):
            return message
    raise AssertionError(f"no {kind.__name__} came")


async def test_an_approval_after_both_workers_restarted_resumes_the_run(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent import SystemMessage

    model = ScriptedModel([[tool_call("launch", {"target": "rocket"}, id="L1")], ["done: launched"]])
    agents = {"ops": AgentOptions(model=model, tools=[launch], cwd=str(tmp_path))}
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, agents):
        run = await start_run(client, "launch it", task_queue=task_queue, agent="ops")
        with anyio.fail_after(30):
            asked = await first(run, SystemMessage, lambda m: m.subtype == "permission_request")
        assert asked.data["tool_use_id"] == "L1" and asked.data["tool_name"] == "launch"
        assert asked.data["tool_input"] == {"target": "rocket"}
    async with worker(client, task_queue, agents):  # the worker that asked is gone; another takes over
        pass
    other = attach(await Client.connect(temporal_server), run.id)  # answered from another client
    async with worker(client, task_queue, agents):
        with anyio.fail_after(30):
            assert [a["tool_use_id"] for a in await other.pending_approvals()] == ["L1"]
            with pytest.raises(Exception, match="no tool call 'nope' is waiting"):
                await other.approve("nope", "allow")
            await other.approve("L1", "allow", by="test")
            result = await other.result()
    assert result.subtype == "success" and result.result == "done: launched"
    sent = model.requests[-1].messages[-1]
    assert sent.content[0].content == "launched rocket"  # the approved call ran, once


async def test_a_denial_reaches_the_model_as_the_callback_s_would(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    model = ScriptedModel([[tool_call("launch", {"target": "rocket"}, id="L1")], ["not launched"]])
    client = await Client.connect(temporal_server)
    async with worker(
        client, task_queue, {"ops": AgentOptions(model=model, tools=[launch], cwd=str(tmp_path))}
    ):
        run = await start_run(client, "launch it", task_queue=task_queue, agent="ops")
        from openagent import SystemMessage

        with anyio.fail_after(30):
            await first(run, SystemMessage, lambda m: m.subtype == "permission_request")
            await run.approve("L1", "deny", message="not today")
            result = await run.result()
    assert result.subtype == "success" and result.permission_denials == [
        {"tool_name": "launch", "tool_use_id": "L1", "tool_input": {"target": "rocket"}}
    ]
    answer = model.requests[-1].messages[-1].content[0]
    assert answer.is_error and answer.content == "not today"


@tool
async def nap(seconds: float) -> str:
    """Sleep a while."""
    await anyio.sleep(seconds)
    return "rested"


async def test_interrupt_by_signal_cuts_the_call_in_flight(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from datetime import timedelta

    model = ScriptedModel([[tool_call("nap", {"seconds": 60}, id="N1")], ["never"]])
    options = AgentOptions(model=model, tools=[nap], cwd=str(tmp_path), permission_mode="bypassPermissions")
    agent = DurableAgent(options, heartbeat_timeout=timedelta(seconds=2))
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"napper": agent}):
        run = await start_run(client, "rest", task_queue=task_queue, agent="napper")
        with anyio.fail_after(30):
            from openagent import AssistantMessage

            await first(run, AssistantMessage)
            await anyio.sleep(0.5)
            await run.interrupt()
            result = await run.result()
    assert result.subtype == "error_during_execution" and result.stop_reason == "interrupted"
    assert len(model.requests) == 1  # the run stopped: no second turn


async def test_a_subagent_runs_as_a_child_workflow(temporal_server: str, task_queue: str, tmp_path) -> None:
    model = ScriptedModel(
        [
            [
                tool_call(
                    "Task", {"description": "sum", "prompt": "add 2 and 3", "subagent_type": "math"}, id="T1"
                )
            ],
            [tool_call("add", {"a": 2, "b": 3}, id="c1")],
            ["five"],
            ["the helper says five"],
        ]
    )
    options = AgentOptions(
        model=model,
        tools=[add],
        cwd=str(tmp_path),
        permission_mode="bypassPermissions",
        agents={"math": AgentDefinition(description="does sums", prompt="You add.")},
    )
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"boss": options}):
        run = await start_run(client, "ask the helper", task_queue=task_queue, agent="boss")
        with anyio.fail_after(30):
            got = [m async for m in run.messages()]
        child = client.get_workflow_handle(f"{run.id}/T1")
        described = await child.describe()
    assert described.status is not None and described.status.name == "COMPLETED"
    assert got[-1].result == "the helper says five"
    handed = [m for m in got if getattr(m, "parent_tool_use_id", None) == "T1"]
    assert handed, "the child's messages reach the parent's stream, marked with the Task call"
    task_result = model.requests[-1].messages[-1].content[0]
    assert task_result.tool_use_id == "T1" and task_result.content == "five"


async def test_the_session_is_resumable_in_process_afterwards(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    model = ScriptedModel(script())
    options = AgentOptions(model=model, tools=[add], cwd=str(tmp_path), permission_mode="bypassPermissions")
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"adder": options}):
        got = [
            m
            async for m in durable_query(
                prompt="add them", client=client, task_queue=task_queue, agent="adder", session_id="sess-9"
            )
        ]
    assert got[-1].session_id == "sess-9"
    later = ScriptedModel([["you asked me to add"]])
    again = [
        m
        async for m in query(
            prompt="what did I ask?", options=AgentOptions(model=later, cwd=str(tmp_path), resume="sess-9")
        )
    ]
    assert again[-1].result == "you asked me to add"
    history = later.requests[0].messages
    assert [m.type for m in history] == ["user", "assistant", "user", "assistant", "user"]
    assert history[0].content == "add them" and history[-1].content == "what did I ask?"
    # and durably again, from the same session
    model2 = ScriptedModel([["still here"]])
    async with worker(client, task_queue + "-2", {"adder": options.replace(model=model2)}):
        run = await start_run(
            client, "still there?", task_queue=task_queue + "-2", agent="adder", resume="sess-9"
        )
        with anyio.fail_after(30):
            result = await run.result()
    assert result.result == "still here" and result.session_id == "sess-9"
    resumed = model2.requests[0].messages
    assert resumed[0].content == "add them" and resumed[-1].content == "still there?"
    assert len(resumed) == len(history) + 2  # the in-process turn's question and answer are there too


@tool
def dump(kilobytes: int) -> str:
    """Return a large text."""
    return "x" * (kilobytes * 1024)


async def test_a_large_tool_result_stays_out_of_the_history(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent import get_session_messages

    model = ScriptedModel(
        [[tool_call("dump", {"kilobytes": 90}, id="big")], ["that was long"], ["and again"]]
    )
    options = AgentOptions(model=model, tools=[dump], cwd=str(tmp_path), permission_mode="bypassPermissions")
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"dumper": options}):
        run = await start_run(client, "dump", task_queue=task_queue, agent="dumper", session_id="big-1")
        with anyio.fail_after(30):
            result = await run.result()
        described = await run.handle.describe()
    assert result.result == "that was long"
    sent = model.requests[-1].messages[-1].content[0]
    assert sent.tool_use_id == "big" and sent.content == "x" * 90 * 1024  # the model saw all of it
    history_bytes = described.raw_description.workflow_execution_info.history_size_bytes
    assert history_bytes < 40_000, history_bytes  # 90 KB of output (over the 64 KB inline limit): a reference
    transcript = await get_session_messages("big-1", cwd=str(tmp_path))
    results = [
        b
        for m in transcript
        for b in (getattr(m, "content", None) if isinstance(getattr(m, "content", None), list) else [])
        if getattr(b, "tool_use_id", None) == "big"
    ]
    assert [len(b.content) for b in results] == [90 * 1024]  # the transcript as query() writes it
    later = [
        m
        async for m in query(
            prompt="again?", options=AgentOptions(model=model, cwd=str(tmp_path), resume="big-1")
        )
    ]
    assert (
        later[-1].result == "and again"
        and model.requests[-1].messages[2].content[0].content == "x" * 90 * 1024
    )


async def test_model_request_and_response_hooks_run_in_the_durable_turn(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent import AssistantMessage, HookMatcher, TextBlock

    seen: list[str] = []

    async def before(data: dict[str, Any], tool_use_id: Any, context: Any) -> dict[str, Any]:
        seen.append(f"request to {data['request'].model} in {data['session_id']}")
        return {}

    async def after(data: dict[str, Any], tool_use_id: Any, context: Any) -> dict[str, Any]:
        reply = AssistantMessage(content=[TextBlock(text="rewritten")], model=data["response"].model)
        return {"hookSpecificOutput": {"hookEventName": "PostModelResponse", "updatedResponse": reply}}

    model = ScriptedModel([["original"]])
    hooks = {
        "PreModelRequest": [HookMatcher(hooks=[before])],
        "PostModelResponse": [HookMatcher(hooks=[after])],
    }
    options = AgentOptions(model=model, cwd=str(tmp_path), hooks=hooks)
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"hooked": options}):
        with anyio.fail_after(30):
            got = [
                m
                async for m in durable_query(
                    prompt="hi", client=client, task_queue=task_queue, agent="hooked", session_id="h-1"
                )
            ]
    assert got[-1].result == "rewritten" and seen == [f"request to {model.requests[0].model} in h-1"]


async def test_limits_end_a_durable_run_with_query_s_subtypes(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    def options(model: ScriptedModel) -> AgentOptions:
        return AgentOptions(model=model, tools=[add], cwd=str(tmp_path), permission_mode="bypassPermissions")

    expected = [
        m async for m in query(prompt="add", options=options(ScriptedModel(script())).replace(max_turns=1))
    ]
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"adder": options(ScriptedModel(script()))}):
        run = await start_run(client, "add", task_queue=task_queue, agent="adder", max_turns=1)
        with anyio.fail_after(30):
            result = await run.result()
        with pytest.raises(Exception, match="cannot set \\['model'\\]"):
            await start_run(client, "add", task_queue=task_queue, agent="adder", model="other")
    assert (result.subtype, result.num_turns, result.is_error) == ("error_max_turns", 1, True)
    assert result.subtype == expected[-1].subtype and result.num_turns == expected[-1].num_turns


async def test_a_retried_model_turn_writes_the_session_once_and_a_bad_request_is_not_retried(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from datetime import timedelta

    from temporalio.common import RetryPolicy

    from openagent import get_session_messages
    from openagent.plugin import BadRequestError, ServerError

    fast_retry = RetryPolicy(initial_interval=timedelta(milliseconds=50), maximum_attempts=3)
    model = ScriptedModel(
        [
            [tool_call("add", {"a": 1, "b": 2}, id="c1")],
            ServerError("overloaded", provider="test", status_code=503),
            "three",
        ]
    )
    options = AgentOptions(model=model, tools=[add], cwd=str(tmp_path), permission_mode="bypassPermissions")
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"adder": DurableAgent(options, model_retry=fast_retry)}):
        run = await start_run(client, "add", task_queue=task_queue, agent="adder", session_id="r-1")
        with anyio.fail_after(30):
            result = await run.result()
    assert result.result == "three" and len(model.requests) == 3  # the 503 was asked again
    transcript = await get_session_messages("r-1", cwd=str(tmp_path))
    kinds = [getattr(m, "subtype", None) or m.type for m in transcript]
    assert kinds == ["init", "user", "assistant", "user", "assistant", "success"]  # written once each

    refused = ScriptedModel([BadRequestError("no such parameter", provider="test", status_code=400), "never"])
    options = options.replace(model=refused)
    async with worker(client, task_queue + "-b", {"adder": DurableAgent(options, model_retry=fast_retry)}):
        with anyio.fail_after(30):
            got = [
                m
                async for m in durable_query(
                    prompt="add", client=client, task_queue=task_queue + "-b", agent="adder"
                )
            ]
    assert got[-1].subtype == "error_during_execution", [m.model_dump() for m in got]
    assert "no such parameter" in got[-1].result
    assert len(refused.requests) == 1  # a 400 is never retried


async def test_a_subagent_s_approval_is_listed_and_answered_on_the_parent_run(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent import SystemMessage

    model = ScriptedModel(
        [
            [
                tool_call(
                    "Task", {"description": "go", "prompt": "launch it", "subagent_type": "ops"}, id="T1"
                )
            ],
            [tool_call("launch", {"target": "probe"}, id="L7")],
            ["probe launched"],
            ["the helper launched the probe"],
        ]
    )
    options = AgentOptions(
        model=model, tools=[launch], cwd=str(tmp_path),
        agents={"ops": AgentDefinition(description="launches things", prompt="You launch.")},
    )  # fmt: skip
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"boss": options}):
        run = await start_run(client, "delegate the launch", task_queue=task_queue, agent="boss")
        with anyio.fail_after(30):
            asked = await first(run, SystemMessage, lambda m: m.subtype == "permission_request")
            assert asked.data["tool_use_id"] == "L7" and asked.data["run_id"] == f"{run.id}/T1"
            assert [a["tool_use_id"] for a in await run.pending_approvals()] == ["L7"]
            await run.approve("L7", "allow")  # on the parent: passed on to the child workflow
            result = await run.result()
            assert await run.pending_approvals() == []
    assert result.result == "the helper launched the probe"
    assert model.requests[2].messages[-1].content[0].content == "launched probe"


async def test_a_failing_model_falls_back_once_and_the_run_keeps_the_fallback(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent.plugin import BadRequestError

    broken = ScriptedModel([BadRequestError("model retired", provider="test", status_code=400)])
    options = AgentOptions(model=broken, fallback_model="test:echo", cwd=str(tmp_path))
    expected = [m async for m in query(prompt="hello there", options=options)]
    broken = ScriptedModel([BadRequestError("model retired", provider="test", status_code=400)])
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"fragile": options.replace(model=broken)}):
        with anyio.fail_after(30):
            got = [
                m
                async for m in durable_query(
                    prompt="hello there", client=client, task_queue=task_queue, agent="fragile"
                )
            ]
    assert got[-1].subtype == expected[-1].subtype == "success"
    assert got[-1].result == expected[-1].result and "hello there" in got[-1].result
    assert list(got[-1].model_usage) == list(expected[-1].model_usage)  # counted on the fallback model
    assert len(broken.requests) == 1  # the 400 was not retried: the fallback took over


async def test_interrupt_by_signal_cuts_the_model_turn_in_flight(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from datetime import timedelta

    model = ScriptedModel([["a very slow answer"]], delay=60)
    agent = DurableAgent(AgentOptions(model=model, cwd=str(tmp_path)), heartbeat_timeout=timedelta(seconds=2))
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"slow": agent}):
        run = await start_run(client, "think", task_queue=task_queue, agent="slow")
        with anyio.fail_after(30):
            while not model.requests:  # noqa: ASYNC110 - the model runs in the worker, in this process
                await anyio.sleep(0.05)
            await run.interrupt()
            result = await run.result()
    # the cut turn counts, as in-process (the loop counts an interrupted turn too)
    assert (result.subtype, result.stop_reason, result.num_turns) == (
        "error_during_execution",
        "interrupted",
        1,
    )


async def test_a_run_that_cannot_start_says_why_instead_of_retrying_forever(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from temporalio.client import WorkflowFailureError

    options = AgentOptions(model=ScriptedModel(["never"]), cwd=str(tmp_path))
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"known": options}):
        with anyio.fail_after(30):
            missing = await start_run(
                client, "hi", task_queue=task_queue, agent="known", resume="no-such-session"
            )
            result = await missing.result()
            assert (
                result.subtype == "error_during_execution" and "no session 'no-such-session'" in result.result
            )
            garbled = await start_run(client, {"content": 5}, task_queue=task_queue, agent="known")
            result = await garbled.result()  # a prompt that is not one: said at once, not retried
            assert result.subtype == "error_during_execution" and "content" in result.result
            unknown = await start_run(client, "hi", task_queue=task_queue, agent="unknown")
            with pytest.raises(WorkflowFailureError) as failed:
                await unknown.result()
            assert "runs no agent named 'unknown'" in str(failed.value.cause)
            with pytest.raises(WorkflowFailureError):
                [m async for m in unknown.messages()]


async def test_a_stored_result_missing_from_the_store_is_said_not_crashed_on(tmp_path) -> None:
    from openagent.plugin import resolve
    from openagent_temporal._payloads import KIND, expand_messages

    store = resolve("session_store", None)  # the default JSONL store, in this test's private data dir
    key = {"project_key": "p", "session_id": "s"}
    gone = {
        "type": "tool_result",
        "tool_use_id": "x",
        "content": [{"type": KIND, "subpath": "openagent-results/x", "bytes": 9}],
    }
    hostile = {
        "type": "tool_result",
        "tool_use_id": "y",
        "content": [{"type": KIND, "subpath": "../../etc/passwd"}],
    }
    with anyio.fail_after(10):
        out = await expand_messages(store, key, [{"type": "user", "content": [gone, hostile]}])
    blocks = out[0]["content"]
    assert blocks[0]["is_error"] and "missing from the session store" in blocks[0]["content"]
    assert blocks[1]["is_error"] and blocks[1]["content"] == "Error: not a stored result of this call"


async def test_a_budget_set_by_the_run_ends_it_as_query_does(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    def options() -> AgentOptions:
        turns = [[tool_call("add", {"a": 1, "b": 1}), usage(100, 100)]] * 3
        model = ScriptedModel(turns, cost_per_token=0.01)
        return AgentOptions(model=model, tools=[add], cwd=str(tmp_path), permission_mode="bypassPermissions")

    expected = [m async for m in query(prompt="x", options=options().replace(max_budget_usd=1.0))]
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"spender": options()}):
        run = await start_run(client, "x", task_queue=task_queue, agent="spender", max_budget_usd=1.0)
        with anyio.fail_after(30):
            result = await run.result()
    assert result.subtype == expected[-1].subtype == "error_max_budget_usd"
    assert result.total_cost_usd == pytest.approx(expected[-1].total_cost_usd) == pytest.approx(2.0)


async def test_subagent_start_and_stop_hooks_run_around_the_child_workflow(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent import HookMatcher

    seen: list[tuple[str, str]] = []

    async def started(data: dict[str, Any], tool_use_id: Any, context: Any) -> dict[str, Any]:
        seen.append(("start", data["agent_type"]))
        if data["agent_id"] == "T2":
            return {"decision": "block", "reason": "no second helper today"}
        return {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "Be brief."}}

    async def stopped(data: dict[str, Any], tool_use_id: Any, context: Any) -> dict[str, Any]:
        seen.append(("stop", data["last_assistant_message"]))
        return {}

    task = {"description": "sum", "prompt": "add 2 and 3", "subagent_type": "math"}
    model = ScriptedModel([
        [tool_call("Task", task, id="T1")], ["five"], [tool_call("Task", task, id="T2")], ["done"],
    ])  # fmt: skip
    hooks = {"SubagentStart": [HookMatcher(hooks=[started])], "SubagentStop": [HookMatcher(hooks=[stopped])]}
    options = AgentOptions(
        model=model, cwd=str(tmp_path), permission_mode="bypassPermissions", hooks=hooks,
        agents={"math": AgentDefinition(description="does sums", prompt="You add.")},
    )  # fmt: skip
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"boss": options}):
        with anyio.fail_after(30):
            got = [
                m
                async for m in durable_query(prompt="go", client=client, task_queue=task_queue, agent="boss")
            ]
    assert got[-1].result == "done"
    assert seen == [("start", "math"), ("stop", "five"), ("start", "math")]
    assert model.requests[1].messages[0].content == "add 2 and 3\n\nBe brief."  # the child's prompt
    refused = model.requests[3].messages[-1].content[0]
    assert refused.tool_use_id == "T2" and refused.is_error and refused.content == "no second helper today"


async def test_two_workers_in_one_process_share_an_agent_until_the_last_one_stops(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    from openagent import ConfigError

    options = AgentOptions(model=ScriptedModel(["one", "two"]), cwd=str(tmp_path))
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"shared": options}):
        async with worker(client, task_queue + "-b", {"shared": options}):
            with pytest.raises(ConfigError, match="already runs another agent named 'shared'"):
                async with worker(client, task_queue + "-c", {"shared": options.replace(max_turns=3)}):
                    pass
        # the second worker stopped: the first one's agent is still open and runs
        with anyio.fail_after(30):
            got = [
                m
                async for m in durable_query(
                    prompt="hi", client=client, task_queue=task_queue, agent="shared"
                )
            ]
    assert got[-1].result == "one"


async def test_a_model_that_repeats_a_task_call_id_fails_one_call_not_the_run(
    temporal_server: str, task_queue: str, tmp_path
) -> None:
    task = {"description": "sum", "prompt": "add 2 and 3", "subagent_type": "math"}
    model = ScriptedModel([
        [tool_call("Task", task, id="T1"), tool_call("Task", task, id="T1")],  # the same id twice
        ["five"], ["one helper answered"],
    ])  # fmt: skip
    options = AgentOptions(
        model=model, cwd=str(tmp_path), permission_mode="bypassPermissions",
        agents={"math": AgentDefinition(description="does sums", prompt="You add.")},
    )  # fmt: skip
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"boss": options}):
        with anyio.fail_after(30):
            got = [
                m
                async for m in durable_query(prompt="go", client=client, task_queue=task_queue, agent="boss")
            ]
    assert got[-1].subtype == "success" and got[-1].result == "one helper answered"
    results = model.requests[-1].messages[-1].content
    assert len(results) == 2 and sorted(bool(r.is_error) for r in results) == [False, True]
