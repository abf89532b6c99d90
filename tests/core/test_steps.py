"""The steps of a run on their own: driven from outside, fed serialised inputs, and the options they leave."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import pytest

from openagent import AgentOptions, Client, query, tool
from openagent._models import ModelRequest
from openagent._runtime import open_runtime, prepare
from openagent._steps import (
    Finish,
    FollowUp,
    Outcome,
    Pause,
    RunState,
    RunTools,
    after_tools,
    count_turn,
    decide,
    model_turn,
    new_state,
    prepare_request,
    result_message,
    submit,
    tool_results,
    turn_limit,
)
from openagent._toolcall import ToolCallResult, tool_call
from openagent._types import AssistantMessage, Message, ResultMessage, ToolUseBlock, UserMessage
from openagent.testing import ScriptedModel, usage
from openagent.testing import tool_call as call

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def script() -> list[Any]:
    return [
        [call("add", {"a": 2, "b": 3}, id="c1"), call("add", {"a": 1, "b": 1}, id="c2"), usage(10, 4)],
        [call("nope", {}, id="c3"), usage(12, 2)],
        ["2 + 3 = 5, and 1 + 1 = 2", usage(20, 9)],
    ]


def options(model: ScriptedModel, **more: Any) -> AgentOptions:
    return AgentOptions(model=model, tools=[add], session_id="s-1", persist_session=False, **more)


def comparable(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as data, without what differs between two runs of the same program (wall time)."""
    out = []
    for message in messages:
        data = message.model_dump(mode="json", exclude={"uuid"})  # a random id per message
        if isinstance(message, ResultMessage):
            data.pop("duration_ms")
            data.pop("duration_api_ms")
        out.append(data)
    return out


def sent(model: ScriptedModel) -> list[dict[str, Any]]:
    """The requests a model got, as data, without the random ids the loop gives the messages it records."""
    requests = [request.to_json() for request in model.requests]
    for request in requests:
        for message in request["messages"]:
            message.pop("uuid", None)
    return requests


def roundtrip(data: dict[str, Any]) -> Any:
    """Through JSON text, as an activity's input and output travel."""
    return json.loads(json.dumps(data))


async def drive(options: AgentOptions, prompt: str) -> list[Message]:
    """A run driven from outside, step by step, as a workflow engine would: the model turn and each tool
    call fed from serialised inputs, every decision taken by the steps' typed outcomes.
    """
    runtime = await open_runtime(prepare(options))
    state = new_state(runtime, options.session_id or "")
    state.begin_prompt()
    started = time.monotonic()
    messages: list[Message] = [runtime.init_message(state.session_id, state.permission_mode)]
    outcome: Outcome = await submit(runtime, state, prompt, first=True)
    last: AssistantMessage | None = None
    while not isinstance(outcome, Finish | Pause):
        if isinstance(outcome, FollowUp):
            state.remember(outcome.message)
        elif isinstance(outcome, RunTools):
            state.await_answers(outcome.pending)
            env = runtime.tool_env(state.session_id, state, {})
            done = []
            for one in outcome.calls:
                sent = ToolUseBlock.model_validate(roundtrip(one.model_dump(mode="json")))
                done.append(ToolCallResult.from_json(roundtrip((await tool_call(env, sent)).to_json())))
            emitted, answer, ends_turn = tool_results(runtime, state, outcome.calls, done)
            assert answer is not None
            messages += [*emitted, answer]
            state.remember(answer)
            assert last is not None
            if (
                ended := after_tools(runtime, state, last, ends_turn=ends_turn, interrupted=False)
            ) is not None:
                outcome = ended
                continue
        if (limit := turn_limit(runtime, state, last)) is not None:
            outcome = limit
            continue
        request = ModelRequest.from_json(roundtrip(prepare_request(runtime, state).to_json()))
        response = await model_turn(runtime.provider, request)
        response = AssistantMessage.model_validate(roundtrip(response.model_dump(mode="json")))
        count_turn(runtime, state, response, 0.0)
        state.remember(response)
        messages.append(response)
        last = response
        outcome = await decide(runtime, state, response, interrupted=False)
    messages.append(result_message(outcome, state, started, last))
    return messages


async def test_a_run_driven_step_by_step_from_outside_produces_the_messages_of_run() -> None:
    looped = ScriptedModel(script())
    expected = [m async for m in query(prompt="add them", options=options(looped))]
    stepped = ScriptedModel(script())
    got = await drive(options(stepped), "add them")
    assert comparable(got) == comparable(expected)
    assert [type(m).__name__ for m in got] == [
        "SystemMessage", "AssistantMessage", "UserMessage", "AssistantMessage", "UserMessage",
        "AssistantMessage", "ResultMessage",
    ]  # fmt: skip
    assert sent(stepped) == sent(looped)  # the same three requests, field by field
    assert got[-1].result == "2 + 3 = 5, and 1 + 1 = 2" and got[-1].usage.input_tokens == 42


async def test_driven_from_outside_a_limit_ends_the_run_as_run_does() -> None:
    expected = [m async for m in query(prompt="go", options=options(ScriptedModel(script()), max_turns=1))]
    got = await drive(options(ScriptedModel(script()), max_turns=1), "go")
    assert comparable(got) == comparable(expected)
    assert got[-1].subtype == "error_max_turns"


async def test_a_model_turn_runs_alone_from_a_serialised_request() -> None:
    model = ScriptedModel(script())
    messages = [m async for m in query(prompt="add them", options=options(model))]
    turns = [m for m in messages if isinstance(m, AssistantMessage)]
    for index, request in enumerate(model.requests):
        text = json.dumps(request.to_json())
        rebuilt = ModelRequest.from_json(json.loads(text))
        assert rebuilt == request
        alone = ScriptedModel([script()[index]])
        answer = await model_turn(alone, rebuilt)
        assert answer == turns[index].model_copy(update={"uuid": None})  # the loop gives recorded ones an id
        assert AssistantMessage.model_validate_json(answer.model_dump_json()) == answer
        assert alone.requests == [request]


async def test_a_tool_call_runs_alone_from_a_serialised_call() -> None:
    messages = [m async for m in query(prompt="add them", options=options(ScriptedModel(script())))]
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]  # type: ignore[union-attr]
    runtime = await open_runtime(prepare(options(ScriptedModel())))
    env = runtime.tool_env("s-1", new_state(runtime, "s-1"), {})
    for raw, expected in [
        ('{"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 2, "b": 3}}', results[0]),
        ('{"type": "tool_use", "id": "c3", "name": "nope", "input": {}}', results[2]),
    ]:
        done = await tool_call(env, ToolUseBlock.model_validate_json(raw))
        assert done.result == expected
        assert ToolCallResult.from_json(json.loads(json.dumps(done.to_json()))) == done


async def test_run_state_round_trips_through_json() -> None:
    model = ScriptedModel(script())
    async with Client(options(model)) as client:
        await client.query("add them")
        [m async for m in client.receive_response()]
        state = client.conversation.state
    again = RunState.from_json(json.loads(json.dumps(state.to_json())))
    assert again == state and len(again.history) == 6


async def test_set_model_and_permission_mode_leave_the_callers_options_untouched() -> None:
    first = ScriptedModel(["one"])
    given = options(first)
    async with Client(given) as client:
        await client.set_model("test:echo")
        await client.set_permission_mode("plan")
        await client.query("echoed")
        answer = [m async for m in client.receive_response()][-1]
    assert answer.result == "echoed"
    assert given.model is first and given.permission_mode == "default"
    assert client.options.model == "test:echo" and client.options is not given
    assert first.requests == []


def test_options_are_frozen_and_replace_checks_names() -> None:
    given = AgentOptions(model="test:echo")
    with pytest.raises(dataclasses.FrozenInstanceError):
        given.model = "test:other"  # type: ignore[misc]
    changed = given.replace(max_turns=3)
    assert (changed.max_turns, given.max_turns, changed.model) == (3, None, "test:echo")
    with pytest.raises(TypeError, match=r"'max_turn' \(did you mean 'max_turns'\?\)"):
        given.replace(max_turn=3)
