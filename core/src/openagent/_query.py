"""`query()`, `run()` and `run_sync()`: one-shot entry points over the agent loop."""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from ._loop import Conversation, TurnEvents
from ._options import AgentOptions
from ._tasks import spawn
from ._types import AssistantMessage, Message, ResultMessage, TextBlock, Usage

__all__ = ["MessageStream", "RunResult", "query", "run", "run_sync"]

logger = logging.getLogger("openagent")
T = TypeVar("T")


class MessageStream(AsyncIterator[T]):
    """The async iterator `query()` returns: an async generator that closes itself when abandoned.

    Breaking out of ``async for`` (or cancelling the task) leaves a plain async generator suspended until
    the garbage collector finds it, which trio reports as a ResourceWarning and which would keep the run's
    resources open meanwhile. This wrapper closes the run as soon as it is dropped, in a task of its own in
    the event loop (as the loops' own finalizers do): its clean-up may await, under asyncio and trio alike.
    """

    __slots__ = ("_agen",)

    def __init__(self, agen: AsyncGenerator[T, None]) -> None:
        self._agen = agen

    def __aiter__(self) -> MessageStream[T]:
        return self

    def __anext__(self) -> Awaitable[T]:  # the generator's own awaitable: no coroutine of ours per message
        return self._agen.__anext__()

    async def aclose(self) -> None:
        """Stop the run now and release what it holds."""
        await self._agen.aclose()

    @staticmethod
    def of(agen: AsyncGenerator[Message | TurnEvents, None], partial: bool) -> MessageStream[Message]:
        """The stream of a run's messages: ``agen`` yields messages and, with ``partial`` on, `TurnEvents`."""
        return _Flattening(agen) if partial else MessageStream(agen)  # type: ignore[arg-type]

    def __del__(self) -> None:
        agen = self._agen
        if getattr(agen, "ag_frame", None) is None or getattr(agen, "ag_running", False):
            return
        try:
            spawn(agen.aclose, "closing an abandoned run")
        except RuntimeError:  # no event loop any more: close what closes without awaiting
            _close_now(agen)


class _Flattening(MessageStream[Message]):
    """A `MessageStream` that hands on the events of each `TurnEvents` its generator yields, one by one."""

    __slots__ = ("_events",)

    def __init__(self, agen: AsyncGenerator[Message | TurnEvents, None]) -> None:
        super().__init__(agen)  # type: ignore[arg-type]
        self._events: TurnEvents | None = None

    async def __anext__(self) -> Message:
        while True:
            if (events := self._events) is not None:
                if (event := await events.next()) is not None:
                    return event
                self._events = None  # exhausted: the run goes on (and raises what the reads raised)
            item: Message | TurnEvents = await self._agen.__anext__()
            if type(item) is not TurnEvents:
                return item  # type: ignore[return-value]
            self._events = item

    async def aclose(self) -> None:
        """Stop the run now and release what it holds."""
        self._events = None
        await self._agen.aclose()


def _close_now(agen: AsyncGenerator[Any, None]) -> None:
    closer = agen.aclose()
    try:
        closer.send(None)
    except StopIteration:
        return
    except BaseException as exc:  # a finalizer must not raise
        logger.debug("closing an abandoned run failed: %r", exc)
        return
    closer.close()
    logger.debug("an abandoned run needed I/O to close after its event loop ended; it was dropped instead")


def messages_of(conversation: Conversation, prompt: Any) -> AsyncGenerator[Message | TurnEvents, None]:
    """``conversation.run(prompt)``, with its hook events, handing each message to the listeners first.

    Without hook events and listeners, a streamed turn's partial events come as one `TurnEvents`
    (``Conversation.run(prompt, turn_events=True)``): iterate it through `MessageStream.of`.
    """
    if conversation.hook_events is None and not conversation.listeners:
        return conversation.run(prompt, turn_events=True)
    run = conversation.run(prompt)
    if conversation.hook_events is not None:
        run = _with_hook_events(conversation, run)
    return _notifying(conversation, run) if conversation.listeners else run


async def _with_hook_events(
    conversation: Conversation, messages: AsyncGenerator[Message, None]
) -> AsyncGenerator[Message, None]:
    """The hook events that happened before each message, then the message."""
    async with aclosing(messages):
        async for message in messages:
            for event in conversation.take_hook_events():
                yield event
            yield message


async def _notifying(
    conversation: Conversation, messages: AsyncGenerator[Message, None]
) -> AsyncGenerator[Message, None]:
    """Call the listeners (sync or async; a failing one is only logged) with each message, then yield it."""
    async with aclosing(messages):
        async for message in messages:
            for wanted, callback in conversation.listeners:
                if (
                    wanted is None
                    or wanted == message.type
                    or (isinstance(wanted, type) and isinstance(message, wanted))
                ):
                    try:
                        outcome = callback(message)
                        if inspect.isawaitable(outcome):
                            await outcome
                    except Exception:
                        logger.exception("a message callback failed")
            yield message


def query(
    *, prompt: str | AsyncIterable[Mapping[str, Any]], options: AgentOptions | None = None
) -> MessageStream[Message]:
    """Run an agent on ``prompt`` and yield its messages as they happen.

    The order is `SystemMessage` (``subtype="init"``), then per turn an `AssistantMessage` and, when tools
    ran, a `UserMessage` with their results, and last a `ResultMessage`. ``prompt`` may also be an async
    iterable of user-message dicts (``{"type": "user", "message": {"role": "user", "content": ...}}``),
    each answered in turn within one conversation.

    Args:
        prompt: The user's message, or an async iterable of them.
        options: Model, tools, limits and the rest; ``AgentOptions()`` reads the model from
            ``$OPENAGENT_MODEL``.

    Raises:
        openagent._errors.ProviderError: After the error `ResultMessage` was yielded, when the model
            endpoint failed.
    """
    options = options or AgentOptions()
    return MessageStream.of(_query(prompt, Conversation(options)), options.include_partial_messages)


async def _query(
    prompt: str | AsyncIterable[Mapping[str, Any]], conversation: Conversation
) -> AsyncGenerator[Message | TurnEvents, None]:
    try:
        if isinstance(prompt, str):
            async with aclosing(messages_of(conversation, prompt)) as messages:
                async for message in messages:
                    yield message
        else:
            async for item in prompt:
                async with aclosing(messages_of(conversation, item)) as messages:
                    async for message in messages:
                        yield message
    finally:
        await conversation.aclose()


@dataclass
class RunResult:
    """What `run()` returns: the final text and everything that led to it."""

    text: str
    """The final answer's text (the text of the last assistant message)."""
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    session_id: str = ""
    structured_output: Any = None
    result: ResultMessage | None = None
    """The closing `ResultMessage` (subtype, cost, turns, durations)."""

    @property
    def is_error(self) -> bool:
        """Whether the run ended in an error (max turns, budget, a failure)."""
        return self.result is None or self.result.is_error


async def run(prompt: str, options: AgentOptions | None = None) -> RunResult:
    """Run an agent to completion and return its final answer and messages."""
    messages: list[Message] = [m async for m in query(prompt=prompt, options=options)]
    result = next((m for m in reversed(messages) if isinstance(m, ResultMessage)), None)
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    text = "".join(b.text for b in last.content if isinstance(b, TextBlock)) if last else ""
    return RunResult(
        text=text,
        messages=messages,
        usage=result.usage or Usage() if result else Usage(),
        session_id=result.session_id if result else "",
        structured_output=result.structured_output if result else None,
        result=result,
    )


def run_sync(prompt: str, options: AgentOptions | None = None) -> RunResult:
    """`run()` for synchronous code (scripts, notebooks without a running loop)."""
    return anyio.run(run, prompt, options)
