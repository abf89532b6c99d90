"""Partial messages read a stream one event at a time: an interrupt stops a waiting read at once, and
leaves the task as it found it; a cancellation that is not the interrupt's is never swallowed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from openagent import AgentOptions, AssistantMessage, Client, Message, ResultMessage, StreamEvent, query, tool
from openagent._errors import ProviderError
from openagent._loop import Conversation
from openagent._models import ModelEvent, Stop, TextDelta
from openagent._reader import EventReader
from openagent.testing import ScriptedModel, error, text, thinking, tool_call, usage

pytestmark = pytest.mark.anyio


class Stalls(ScriptedModel):
    """Sends one word, then nothing until cancelled (a server that stopped mid-answer); then echoes."""

    stalls: int = 1

    async def stream(self, request):  # type: ignore[no-untyped-def]
        if self.stalls:
            self.stalls -= 1
            yield TextDelta("first ")
            await anyio.sleep_forever()
        async for event in super().stream(request):
            yield event


async def test_an_interrupt_stops_a_read_that_waits_and_the_conversation_goes_on() -> None:
    model = Stalls()
    async with Client(
        AgentOptions(model=model, include_partial_messages=True, persist_session=False)
    ) as client:
        await client.query("hello")
        seen = []
        with anyio.fail_after(5):
            async for message in client.receive_response():
                seen.append(message)
                if isinstance(message, StreamEvent):
                    await client.interrupt()
        result = seen[-1]
        assert isinstance(result, ResultMessage) and result.stop_reason == "interrupted"
        with anyio.fail_after(5):
            await anyio.sleep(0.01)  # the task is not left cancelled: it can wait again
            await client.query("again")
            again = [m async for m in client.receive_response()]
    assert again[-1].result == "again"


async def _stalled() -> AsyncIterator[ModelEvent]:
    yield TextDelta("a")
    await anyio.sleep_forever()
    yield Stop("end_turn")  # pragma: no cover - never reached


async def test_a_cancellation_that_is_not_the_interrupts_goes_through() -> None:
    stream = _stalled()
    reader = EventReader(stream)
    assert await reader.next() == TextDelta("a")
    reached = False
    with anyio.fail_after(5):
        with anyio.move_on_after(0.05) as outer:
            await reader.next()
            reached = True
    assert outer.cancelled_caught and not reached
    await stream.aclose()


async def test_the_interrupt_and_an_outer_cancellation_together_still_cancel() -> None:
    """The interrupt takes back only its own cancellation: the outer one reaches the next checkpoint."""
    stream = _stalled()
    reader = EventReader(stream)
    await reader.next()
    reached = False
    with anyio.fail_after(5):
        with anyio.CancelScope() as outer:

            async def both() -> None:
                await anyio.sleep(0.05)
                reader.interrupt()
                outer.cancel()

            async with anyio.create_task_group() as group:
                group.start_soon(both)
                await reader.next()  # may end as interrupted: the outer cancellation comes next
                await anyio.sleep(5)
                reached = True
    assert outer.cancelled_caught and not reached
    await stream.aclose()


async def test_an_interrupt_between_reads_touches_nothing() -> None:
    async def events() -> AsyncIterator[ModelEvent]:
        yield TextDelta("a")
        yield TextDelta("b")

    reader = EventReader(events())
    assert await reader.next() == TextDelta("a")
    reader.interrupt()  # no read is waiting: nothing to stop
    assert await reader.next() == TextDelta("b")
    assert await reader.next() is None


# --- the caller's stream reads a turn's events itself (TurnEvents): the same messages as Conversation.run ---

MIXED = [
    [thinking("plan it", "sig"), text("calling add"), tool_call("add", {"a": 1, "b": 2}), usage(7, 3)],
    ["the answer is 3", usage(9, 4)],
]


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def _shape(messages: list[Message]) -> list[Any]:
    """What a caller sees, without the ids drawn per run."""
    out: list[Any] = []
    for message in messages:
        if isinstance(message, StreamEvent):
            event = message.event
            if event["type"] == "message_start":
                event = {**event, "message": {**event["message"], "id": None}}
            out.append(("event", event, message.session_id is not None, message.parent_tool_use_id))
        elif isinstance(message, AssistantMessage):
            out.append(
                ("assistant", [b.model_dump(exclude={"id"}) for b in message.content], message.stop_reason)
            )
        else:
            out.append(type(message).__name__)
    return out


async def _through_query(options: AgentOptions) -> tuple[list[Message], BaseException | None]:
    seen: list[Message] = []
    try:
        async for message in query(prompt="add 1 and 2", options=options):
            seen.append(message)
    except Exception as exc:  # compared below
        return seen, exc
    return seen, None


async def _through_run(options: AgentOptions) -> tuple[list[Message], BaseException | None]:
    """`Conversation.run` itself: each partial event through the loop's generators."""
    conversation = Conversation(options)
    seen: list[Message] = []
    try:
        async for message in conversation.run("add 1 and 2"):
            seen.append(message)
    except Exception as exc:  # compared below
        return seen, exc
    finally:
        await conversation.aclose()
    return seen, None


@pytest.mark.parametrize("chunk_size", [0, 1, 4])
async def test_query_hands_on_the_same_partial_events_as_conversation_run(chunk_size: int) -> None:
    def options() -> AgentOptions:
        model = ScriptedModel(MIXED, chunk_size=chunk_size)
        return AgentOptions(model=model, tools=[add], include_partial_messages=True, persist_session=False)

    fast, fast_error = await _through_query(options())
    plain, plain_error = await _through_run(options())
    assert fast_error is None and plain_error is None
    assert _shape(fast) == _shape(plain)
    assert sum(isinstance(m, StreamEvent) for m in fast) > 10
    ids = [m.uuid for m in fast if isinstance(m, StreamEvent)]
    assert len(set(ids)) == len(ids)


async def test_a_stream_that_fails_midway_ends_the_same_either_way() -> None:
    def options() -> AgentOptions:
        model = ScriptedModel(
            [[text("half an answer"), error(RuntimeError("connection reset"))]], chunk_size=2
        )
        return AgentOptions(model=model, include_partial_messages=True, persist_session=False)

    fast, fast_error = await _through_query(options())
    plain, plain_error = await _through_run(options())
    assert isinstance(fast_error, ProviderError) and isinstance(plain_error, ProviderError)
    assert str(fast_error) == str(plain_error) and "connection reset" in str(fast_error)
    assert isinstance(fast_error.__cause__, RuntimeError)
    assert _shape(fast) == _shape(plain)
    deltas = [m.event["delta"]["text"] for m in fast if isinstance(m, StreamEvent) and "delta" in m.event]
    assert "".join(deltas) == "half an answer"
    assert isinstance(fast[-1], ResultMessage) and fast[-1].subtype == "error_during_execution"


async def test_listeners_see_every_partial_event_in_order() -> None:
    seen: list[Message] = []
    model = ScriptedModel(MIXED, chunk_size=3)
    options = AgentOptions(
        model=model, tools=[add], include_partial_messages=True, persist_session=False, on_message=seen.append
    )
    received, failure = await _through_query(options)
    assert failure is None
    assert [id(m) for m in seen] == [id(m) for m in received]
    assert sum(isinstance(m, StreamEvent) for m in seen) > 10


async def test_an_interrupt_from_the_callers_task_stops_after_the_events_of_one_chunk() -> None:
    """The caller interrupts while handling an event: the rest of that chunk's events, then the close."""
    model = ScriptedModel([text("x" * 50)], chunk_size=1)
    async with Client(
        AgentOptions(model=model, include_partial_messages=True, persist_session=False)
    ) as client:
        await client.query("long answer")
        after: list[str] = []
        interrupted = False
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                if interrupted:
                    after.append(message.event["type"])
                elif message.event["type"] == "content_block_delta":
                    await client.interrupt()
                    interrupted = True
    assert after == ["content_block_stop", "message_delta", "message_stop"]
    assert isinstance(message, ResultMessage) and message.stop_reason == "interrupted"
