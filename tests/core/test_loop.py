"""The agent loop through query(), run() and Client, driven by ScriptedModel under asyncio and trio."""

import threading

import anyio
import pytest
import stamina

from openagent import AgentOptions, Client, query, run, tool
from openagent.errors import ProviderError, RateLimitError, StreamError
from openagent.models import Stop, TextDelta
from openagent.testing import ScriptedModel, error, text, thinking, tool_call, usage
from openagent.types import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)

pytestmark = pytest.mark.anyio


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def collect(prompt, options):
    return [m async for m in query(prompt=prompt, options=options)]


def kinds(messages):
    return [type(m).__name__ for m in messages if not isinstance(m, StreamEvent)]


async def test_message_order_for_a_tool_round_trip():
    model = ScriptedModel([[tool_call("add", {"a": 2, "b": 3}), usage(10, 5)], ["2 + 3 = 5", usage(20, 4)]])
    messages = await collect("What is 2 + 3?", AgentOptions(model=model, tools=[add]))

    assert kinds(messages) == [
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    init, call, results, answer, result = messages
    assert (
        init.subtype == "init"
        and init.data["tools"] == ["add"]
        and init.data["session_id"] == result.session_id
    )
    assert call.content == [ToolUseBlock(id=call.content[0].id, name="add", input={"a": 2, "b": 3})]
    assert call.stop_reason == "tool_use"
    assert results.content == [ToolResultBlock(tool_use_id=call.content[0].id, content="5.0")]
    assert answer.content == [TextBlock(text="2 + 3 = 5")]
    assert (result.subtype, result.is_error, result.num_turns, result.result) == (
        "success",
        False,
        2,
        "2 + 3 = 5",
    )
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 9)
    # the second request carried the tool call and its result, in order
    second = model.requests[1].messages
    assert [type(m).__name__ for m in second] == ["UserMessage", "AssistantMessage", "UserMessage"]
    assert second[-1].content[0].content == "5.0"


async def test_partial_stream_events_concatenate_to_the_final_text_in_anthropic_shapes():
    model = ScriptedModel([[thinking("let me see", "sig"), text("Hello, streaming world!")]], chunk_size=3)
    messages = await collect("hi", AgentOptions(model=model, include_partial_messages=True))

    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    text_deltas = [
        e["delta"]["text"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    ]
    thinking_deltas = [
        e["delta"]["thinking"] for e in events if e.get("delta", {}).get("type") == "thinking_delta"
    ]
    assert len(text_deltas) > 3
    final = next(m for m in messages if isinstance(m, AssistantMessage))
    assert "".join(text_deltas) == final.content[1].text == "Hello, streaming world!"
    assert "".join(thinking_deltas) == "let me see"
    assert final.content[0] == ThinkingBlock(thinking="let me see", signature="sig")
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["message_start", "content_block_start", "content_block_delta"]
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0]["message"]["role"] == "assistant" and events[0]["message"]["model"] == "scripted"
    assert events[1]["content_block"]["type"] == "thinking"
    assert {e["index"] for e in events if e["type"] == "content_block_stop"} == {0, 1}
    assert kinds.index("content_block_stop") < kinds.index("message_delta")
    assert events[-2]["delta"]["stop_reason"] == "end_turn" and "output_tokens" in events[-2]["usage"]
    # partial events come before the complete message
    assert messages.index(final) > max(i for i, m in enumerate(messages) if isinstance(m, StreamEvent))


async def test_tool_calls_in_one_turn_run_concurrently_and_answer_in_call_order():
    met = anyio.Event()

    @tool
    async def first() -> str:
        """Waits for the second."""
        with anyio.fail_after(5):
            await met.wait()
        return "first"

    @tool
    async def second() -> str:
        """Lets the first go."""
        met.set()
        return "second"

    model = ScriptedModel([[tool_call("first", {}), tool_call("second", {})], "done"])
    messages = await collect("go", AgentOptions(model=model, tools=[first, second]))

    results = next(m for m in messages if isinstance(m, UserMessage)).content
    assert [r.content for r in results] == ["first", "second"]


async def test_parallel_tool_calls_false_runs_calls_one_after_another():
    order = []

    @tool
    async def step(n: int) -> int:
        """Record n."""
        order.append(("start", n))
        await anyio.sleep(0.01)
        order.append(("end", n))
        return n

    model = ScriptedModel([[tool_call("step", {"n": 1}), tool_call("step", {"n": 2})], "done"])
    await collect("go", AgentOptions(model=model, tools=[step], parallel_tool_calls=False))
    assert order == [("start", 1), ("end", 1), ("start", 2), ("end", 2)]


async def test_client_side_tool_ends_the_turn_and_continues_with_the_callers_answer():
    weather = {
        "name": "weather",
        "description": "Weather in a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    model = ScriptedModel([[tool_call("weather", {"city": "Paris"})], "It is sunny in Paris."])
    async with Client(AgentOptions(model=model, tools=[weather])) as client:
        await client.query("Weather in Paris?")
        first = [m async for m in client.receive_response()]
        assert isinstance(first[-1], ResultMessage) and first[-1].stop_reason == "tool_use"
        call = next(m for m in first if isinstance(m, AssistantMessage)).content[0]
        assert isinstance(call, ToolUseBlock) and call.input == {"city": "Paris"}

        client.add_tool_result(call.id, "sunny, 21 C")
        second = [m async for m in client.receive_response()]
    assert second[-1].result == "It is sunny in Paris."
    sent = model.requests[1].messages[-1]
    assert sent.content == [ToolResultBlock(tool_use_id=call.id, content="sunny, 21 C")]


async def test_max_turns_ends_with_error_max_turns():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})]] * 5)
    messages = await collect("loop forever", AgentOptions(model=model, tools=[add], max_turns=2))
    result = messages[-1]
    assert (result.subtype, result.is_error, result.num_turns) == ("error_max_turns", True, 2)
    assert len(model.requests) == 2


async def test_interrupt_stops_a_streaming_turn_within_one_chunk():
    model = ScriptedModel([text("x" * 200)], chunk_size=1, delay=0.01)
    seen_after_interrupt = 0
    async with Client(AgentOptions(model=model, include_partial_messages=True)) as client:
        await client.query("long answer")
        interrupted = False
        async for message in client.receive_response():
            if interrupted and isinstance(message, StreamEvent):
                # the message is still closed (content_block_stop, message_delta, message_stop); no more text
                seen_after_interrupt += message.event["type"] == "content_block_delta"
            if (
                isinstance(message, StreamEvent)
                and message.event["type"] == "content_block_delta"
                and not interrupted
            ):
                await client.interrupt()
                interrupted = True
            last = message
    assert isinstance(last, ResultMessage)
    assert (last.subtype, last.stop_reason) == ("error_during_execution", "interrupted")
    assert seen_after_interrupt <= 1


async def test_interrupt_from_another_task_stops_the_fast_path():
    model = ScriptedModel([text("y" * 500)], chunk_size=1, delay=0.01)
    async with Client(AgentOptions(model=model)) as client:
        await client.query("long answer")
        messages = []
        async with anyio.create_task_group() as group:

            async def interrupt_soon():
                await anyio.sleep(0.1)
                await client.interrupt()

            group.start_soon(interrupt_soon)
            with anyio.fail_after(5):
                messages = [m async for m in client.receive_response()]
        # the model could not finish: far fewer than 500 characters were streamed
        answer = [m for m in messages if isinstance(m, AssistantMessage)]
        assert not answer or len(answer[0].content[0].text) < 500
        assert messages[-1].stop_reason == "interrupted"
        # the conversation stays usable
        model.turns = ["again"]
        model._next = 0
        await client.query("hello")
        assert [m async for m in client.receive_response()][-1].result == "again"


async def test_invalid_arguments_become_an_error_result_and_the_run_continues():
    model = ScriptedModel([[tool_call("add", {"a": "two", "b": 3})], "sorry"])
    messages = await collect("add", AgentOptions(model=model, tools=[add]))
    result = next(m for m in messages if isinstance(m, UserMessage)).content[0]
    assert result.is_error and "a:" in result.content and "'two'" in result.content
    assert messages[-1].subtype == "success"


async def test_unknown_tool_name_gets_an_error_listing_the_tools():
    model = ScriptedModel([[tool_call("mul", {"a": 1})], "ok"])
    messages = await collect("x", AgentOptions(model=model, tools=[add]))
    result = next(m for m in messages if isinstance(m, UserMessage)).content[0]
    assert result.is_error and "mul" in result.content and "add" in result.content


@pytest.mark.parametrize(
    "raw", ['{"a": 1, "b":', "[1, 2]", '"just a string"'], ids=["truncated-json", "array", "bare-string"]
)
async def test_garbled_arguments_stay_visible_and_the_tool_never_runs(raw):
    calls = []

    @tool
    def record(a: int = 0, b: int = 0) -> str:
        """Record a call."""
        calls.append((a, b))
        return "ran"

    model = ScriptedModel([[tool_call("record", raw)], "ok"])
    messages = await collect("x", AgentOptions(model=model, tools=[record]))
    block = next(m for m in messages if isinstance(m, AssistantMessage)).content[0]
    assert isinstance(block, ToolUseError) and block.raw_data == raw and block.name == "record"
    answer = next(m for m in messages if isinstance(m, UserMessage)).content[0]
    assert answer.tool_use_id == block.id and answer.is_error
    assert calls == []


async def test_a_tool_that_raises_becomes_an_error_result():
    @tool
    def boom() -> str:
        """Fails."""
        raise RuntimeError("disk on fire")

    model = ScriptedModel([[tool_call("boom", {})], "ok"])
    messages = await collect("x", AgentOptions(model=model, tools=[boom]))
    result = next(m for m in messages if isinstance(m, UserMessage)).content[0]
    assert result.is_error and "RuntimeError: disk on fire" in result.content


async def test_sync_tools_run_in_a_worker_thread():
    threads = []

    @tool
    def where() -> str:
        """Which thread."""
        threads.append(threading.get_ident())
        return "here"

    await collect("x", AgentOptions(model=ScriptedModel([[tool_call("where", {})], "ok"]), tools=[where]))
    assert threads and threads[0] != threading.get_ident()


async def test_slow_tool_times_out_into_an_error_result():
    @tool(timeout=0.05)
    async def slow() -> str:
        """Sleeps."""
        await anyio.sleep(10)
        return "late"

    messages = await collect(
        "x", AgentOptions(model=ScriptedModel([[tool_call("slow", {})], "ok"]), tools=[slow])
    )
    result = next(m for m in messages if isinstance(m, UserMessage)).content[0]
    assert result.is_error and "timed out" in result.content


async def test_large_results_are_truncated_with_a_notice():
    @tool(max_result_chars=100)
    def big() -> str:
        """Lots of output."""
        return "z" * 1000

    messages = await collect(
        "x", AgentOptions(model=ScriptedModel([[tool_call("big", {})], "ok"]), tools=[big])
    )
    result = next(m for m in messages if isinstance(m, UserMessage)).content[0]
    assert (
        result.content.startswith("z" * 100) and "[truncated: 100 of 1000 characters shown]" in result.content
    )


async def test_provider_failure_yields_an_error_result_then_raises_the_typed_error():
    model = ScriptedModel([ProviderError("model exploded", provider="test", status_code=400)])
    messages = []
    with pytest.raises(ProviderError, match="model exploded") as raised:
        async for message in query(prompt="x", options=AgentOptions(model=model)):
            messages.append(message)
    assert raised.value.status_code == 400
    assert messages[-1].subtype == "error_during_execution" and "model exploded" in messages[-1].result


async def test_retryable_errors_before_the_first_event_are_retried():
    stamina.set_testing(True, attempts=3)
    try:
        model = ScriptedModel([RateLimitError("slow down", retry_after=0.0), "recovered"])
        result = await run("x", AgentOptions(model=model))
    finally:
        stamina.set_testing(False)
    assert result.text == "recovered" and len(model.requests) == 2


async def test_errors_after_output_began_are_never_retried():
    stamina.set_testing(True, attempts=3)
    try:
        model = ScriptedModel([[text("partial "), error(RateLimitError("mid-stream"))], "never sent"])
        with pytest.raises(RateLimitError):
            await run("x", AgentOptions(model=model))
    finally:
        stamina.set_testing(False)
    assert len(model.requests) == 1


async def test_a_stream_without_a_stop_is_a_stream_error_keeping_the_partial_text():
    class Truncated(ScriptedModel):
        async def stream(self, request):
            yield TextDelta("half an ans")

    with pytest.raises(StreamError) as raised:
        await run("x", AgentOptions(model=Truncated()))
    assert raised.value.body == "half an ans"


async def test_streaming_input_answers_each_prompt_in_one_conversation():
    async def prompts():
        yield {"type": "user", "message": {"role": "user", "content": "one"}}
        yield {"type": "user", "message": {"role": "user", "content": "two"}}

    model = ScriptedModel(["first answer", "second answer"])
    messages = await collect(prompts(), AgentOptions(model=model))
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["first answer", "second answer"]
    assert len(model.requests[1].messages) == 3  # one, first answer, two


async def test_budget_stops_the_run_with_error_max_budget_usd():
    model = ScriptedModel([[tool_call("add", {"a": 1, "b": 1}), usage(100, 100)]] * 3, cost_per_token=0.01)
    messages = await collect("x", AgentOptions(model=model, tools=[add], max_budget_usd=1.0))
    assert messages[-1].subtype == "error_max_budget_usd" and messages[-1].total_cost_usd == pytest.approx(
        2.0
    )


async def test_breaking_out_early_leaves_nothing_behind(tmp_path):
    model = ScriptedModel(["a long answer"], chunk_size=1)
    options = AgentOptions(model=model, include_partial_messages=True, cwd=tmp_path)
    async for message in query(prompt="x", options=options):
        if isinstance(message, StreamEvent):
            session_id = message.session_id
            break
    await anyio.sleep(0.01)  # let the event loop finalize the abandoned generator
    # the transcript is intact and another run can resume it
    again = ScriptedModel(["resumed"])
    assert (await run("y", AgentOptions(model=again, resume=session_id, cwd=tmp_path))).text == "resumed"


async def test_stop_reason_from_the_model_is_kept():
    model = ScriptedModel([[text("cut"), Stop("max_tokens", raw="length")]])
    messages = await collect("x", AgentOptions(model=model))
    assert messages[-1].stop_reason == "max_tokens"
    assert next(m for m in messages if isinstance(m, AssistantMessage)).stop_reason == "max_tokens"


async def test_init_message_is_first_and_carries_cwd_and_model(tmp_path):
    messages = await collect("x", AgentOptions(model=ScriptedModel(["hi"]), cwd=tmp_path))
    assert isinstance(messages[0], SystemMessage) and messages[0].data["cwd"] == str(tmp_path)
    assert messages[0].data["model"] == "scripted"


async def test_breaking_out_of_a_client_response_leaves_the_client_usable():
    model = ScriptedModel(["first answer, streamed", "second"], chunk_size=2)
    async with Client(AgentOptions(model=model, include_partial_messages=True)) as client:
        await client.query("one")
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                break
        await client.query("two")
        messages = [m async for m in client.receive_response()]
    assert messages[-1].result == "second"


async def test_cancelling_the_consuming_task_ends_the_run_cleanly():
    model = ScriptedModel([text("z" * 100)], chunk_size=1, delay=0.01)
    with anyio.move_on_after(0.05) as scope:
        async for _ in query(prompt="x", options=AgentOptions(model=model, include_partial_messages=True)):
            pass
    assert scope.cancelled_caught


async def test_partial_events_for_parallel_tool_calls_open_and_close_each_block():
    model = ScriptedModel(
        [[text("calling"), tool_call("add", {"a": 1, "b": 2}), tool_call("add", {"a": 3, "b": 4})], "ok"],
        chunk_size=4,
    )
    messages = await collect("x", AgentOptions(model=model, tools=[add], include_partial_messages=True))
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    events = events[: [e["type"] for e in events].index("message_stop") + 1]  # the first turn
    starts = [e["index"] for e in events if e["type"] == "content_block_start"]
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    assert starts == stops == [0, 1, 2]
    args = {}
    for e in events:
        if e.get("delta", {}).get("type") == "input_json_delta":
            args[e["index"]] = args.get(e["index"], "") + e["delta"]["partial_json"]
    assert args == {1: '{"a": 1, "b": 2}', 2: '{"a": 3, "b": 4}'}


async def test_a_paused_turn_is_sent_back_to_continue():
    from openagent.models import RawContent

    search = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "x"}}
    model = ScriptedModel([[RawContent("anthropic", search), Stop("pause_turn")], "found it"])
    messages = await collect("search", AgentOptions(model=model))
    assert messages[-1].result == "found it" and messages[-1].num_turns == 2
    paused = model.requests[1].messages[-1]
    assert isinstance(paused, AssistantMessage) and paused.stop_reason == "pause_turn"
    assert paused.content[0].data == search and paused.content[0].provider == "anthropic"


async def test_thinking_after_a_signature_starts_a_new_signed_block():
    model = ScriptedModel([[thinking("first", "sig-a"), thinking("second", "sig-b"), text("answer")]])
    messages = await collect("x", AgentOptions(model=model))
    content = next(m for m in messages if isinstance(m, AssistantMessage)).content
    assert content[:2] == [
        ThinkingBlock(thinking="first", signature="sig-a"),
        ThinkingBlock(thinking="second", signature="sig-b"),
    ]


async def test_set_model_switches_provider_and_closes_the_one_it_made(monkeypatch):
    closed = []

    class Closing(ScriptedModel):
        async def aclose(self):
            closed.append(self.model)

    import openagent.client

    made = lambda options: (Closing(model=options.model), options.model)  # noqa: E731 - a stand-in resolver
    monkeypatch.setattr(openagent.client, "resolve_provider", made)
    first = Closing(["from the first"], model="mine")
    async with Client(AgentOptions(model=first)) as client:
        await client.set_model("test:one")
        assert closed == []  # a provider instance belongs to the caller
        await client.query("echo me")
        assert [m async for m in client.receive_response()][-1].result == "echo me"
        await client.set_model("test:two")
        assert closed == ["test:one"]  # the provider made from a model string is closed when replaced
    assert first.requests == []
