"""Partial messages read a stream one event at a time: an interrupt stops a waiting read at once, and
leaves the task as it found it; a cancellation that is not the interrupt's is never swallowed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from openagent import AgentOptions, Client, ResultMessage, StreamEvent
from openagent._models import ModelEvent, Stop, TextDelta
from openagent._reader import EventReader
from openagent.testing import ScriptedModel

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
