"""The synchronous API, from plain (non-async) test functions."""

import threading

from openagent import AgentOptions, tool
from openagent._types import AssistantMessage, ResultMessage, StreamEvent, UserMessage
from openagent.sync import Client, query_sync
from openagent.testing import ScriptedModel, text, tool_call


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def test_query_sync_runs_a_tool_loop_from_plain_code():
    model = ScriptedModel([[tool_call("add", {"a": 2, "b": 3})], "5"])
    messages = list(query_sync("2 + 3?", AgentOptions(model=model, tools=[add])))
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["SystemMessage", "AssistantMessage", "UserMessage", "AssistantMessage", "ResultMessage"]
    assert messages[2].content[0].content == "5.0" and messages[-1].result == "5"


def test_stopping_early_closes_the_run_and_its_thread():
    before = set(threading.enumerate())
    model = ScriptedModel(["a b c d"], chunk_size=1)
    messages = query_sync("x", AgentOptions(model=model, include_partial_messages=True))
    for message in messages:
        if isinstance(message, StreamEvent):
            started = set(threading.enumerate()) - before  # the event loop's thread
            break
    assert started
    messages.close()
    for thread in started:
        thread.join(timeout=10)
        assert not thread.is_alive()


def test_sync_client_multi_turn_and_interrupt_from_another_thread():
    model = ScriptedModel(["first", text("z" * 400)], chunk_size=1, delay=0.005)
    with Client(AgentOptions(model=model, include_partial_messages=True)) as client:
        client.query("one")
        assert [m for m in client.receive_response() if isinstance(m, ResultMessage)][0].result == "first"
        assert client.status == "finished"

        client.query("two")
        timer = threading.Timer(0.1, client.interrupt)
        timer.start()
        messages = list(client.receive_response())
        timer.join()
        assert messages[-1].stop_reason == "interrupted" and client.status == "cancelled"
        streamed = "".join(
            m.event["delta"].get("text", "")
            for m in messages
            if isinstance(m, StreamEvent) and m.event["type"] == "content_block_delta"
        )
        assert len(streamed) < 400
        assert isinstance(client.history[-1], UserMessage | AssistantMessage)
