"""The agent loop: model turn → tool calls → tool results → model turn … → result.

`Conversation` owns a run: its `Runtime` (what the options decided, resolved once) and its `RunState` (what
the run changes). `Conversation.run` drives one prompt through the steps of `openagent._steps` — prepare a
request, stream a model turn, decide, run tools — matching on each step's typed outcome, and ends in one
place, where the `ResultMessage` is built. Read `Conversation.run` top to bottom.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import Any, Literal, TypeVar, overload

import anyio

from ._checkpoints import FileCheckpoints
from ._compaction import Compaction, compact, reported_window
from ._errors import ConfigError, ContextWindowExceededError, OpenAgentError, ProviderError
from ._hooks import observe_hooks, run_hooks
from ._models import ModelEvent, ModelRequest, Provider
from ._options import AgentOptions
from ._reader import EventReader
from ._runtime import Inherited, open_runtime, prepare
from ._sessions import entry_for
from ._steps import (
    Finish,
    FollowUp,
    Outcome,
    Pause,
    RunTools,
    after_tools,
    close_quietly,
    count_turn,
    decide,
    hook_input,
    new_state,
    open_stream,
    prepare_request,
    result_message,
    submit,
    tool_results,
    turn_limit,
)
from ._toolcall import ToolCallResult, tool_call
from ._transcripts import restore
from ._turn import TurnBuilder
from ._types import (
    AssistantMessage,
    Message,
    StreamEvent,
    SystemMessage,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    Usage,
    UserMessage,
    system_message,
)

__all__ = ["Conversation", "TurnEvents"]

logger = logging.getLogger("openagent.loop")
M = TypeVar("M", bound=Message)


class Conversation:
    """A conversation with a model: history, session and totals that outlive one prompt.

    `query()` runs one and closes it; `Client` keeps one open across prompts; a subagent is one too,
    made with ``inherit`` (its parent's live tools and hooks).
    """

    def __init__(self, options: AgentOptions, *, inherit: Inherited | None = None) -> None:
        self.runtime = prepare(options, inherit)
        self.state = new_state(self.runtime, options.session_id or str(uuid.uuid4()))
        self.checkpoints = FileCheckpoints() if options.enable_file_checkpointing else None
        """Files the edit tools changed, by user message (``enable_file_checkpointing``)."""
        self.tasks: dict[str, Conversation] = {}
        """Subagents running now, by task id (their ``Task`` call's id): `Client.stop_task` stops them."""
        self.hook_events: list[SystemMessage] | None = None
        """`HookEventMessage`s not yet yielded (``include_hook_events``)."""
        if options.include_hook_events:
            self.hook_events = []
            self.runtime = replace(self.runtime, hooks=observe_hooks(self.runtime.hooks, self._hook_event))
        self._fell_back = False
        self.listeners: list[tuple[Any, Callable[[Message], Any]]] = []
        """``(filter, callback)`` pairs called with every message (`Client.on`, ``on_message``)."""
        if options.on_message is not None:
            self.listeners.append((None, options.on_message))
        self._started = False
        self._interrupted = False
        self._scope: anyio.CancelScope | None = None
        self._reader: EventReader | None = None  # the partial-messages read in flight
        self._window: int | None = None  # what the server reported, once asked
        self._asked = False
        prefix = os.urandom(8).hex()
        self._event_ids = (f"{prefix}{n:016x}" for n in itertools.count())
        """Ids for partial `StreamEvent`s: random per conversation, then counted (one is made per delta)."""

    # -- views --

    @property
    def session_id(self) -> str:
        """The session the conversation writes to."""
        return self.state.session_id

    @property
    def history(self) -> list[UserMessage | AssistantMessage]:
        """The messages the model sees next turn."""
        return self.state.history

    @property
    def usage(self) -> Usage:
        """Tokens used so far."""
        return self.state.usage

    @property
    def total_cost_usd(self) -> float | None:
        """What the conversation cost so far, when the model's prices are known."""
        return self.state.total_cost_usd

    @property
    def model(self) -> str:
        """The model name sent to the provider."""
        return self.runtime.model

    @property
    def reported_window(self) -> int | None:
        """The context window the server reported, once asked (``None`` before, or when it cannot say)."""
        return self._window

    @property
    def tools(self) -> Mapping[str, Any]:
        """The tools the model may call, by name."""
        return self.runtime.tools

    # -- sessions --

    async def start(self) -> None:
        """Open settings, toolsets and the session store, and rebuild history when resuming (idempotent)."""
        if self._started:
            return
        self._started = True
        self.runtime = runtime = await open_runtime(self.runtime)
        for behavior, rules in (
            ("allow", runtime.allowed),
            ("deny", runtime.disallowed),
            ("ask", runtime.ask),
        ):
            self.state.set_rules(behavior, list(rules))  # type: ignore[arg-type]
        self.state.set_permission_mode(runtime.options.permission_mode)  # a trusted project's may differ
        if self.runtime.store is not None:
            opts = self.runtime.options
            key, history = await restore(self.runtime.store, self.runtime.cwd, self.state.session_id, opts)
            self.state.start_session(key, history)

    async def persist(self, message: Message | str, **fields: Any) -> None:
        """Append ``message`` (or a bare entry of that type) and extra entry ``fields`` to the session."""
        store, key = self.runtime.store, self.state.session_key
        if store is not None and key is not None:
            await store.append(key, [{**entry_for(message, self.state.session_id), **fields}])  # type: ignore[arg-type]

    async def aclose(self) -> None:
        """Close what the conversation opened (toolsets, the store it made, the provider it made)."""
        runtime = self.runtime
        await run_hooks(runtime.hooks, "SessionEnd", hook_input(runtime, self.state, reason="other"))
        for toolset in reversed(runtime.toolsets):
            await close_quietly(toolset)
        if runtime.owns_store:
            await close_quietly(runtime.store)
        if runtime.owns_provider:
            await close_quietly(runtime.provider)

    def _hook_event(self, subtype: str, data: dict[str, Any]) -> None:
        assert self.hook_events is not None
        data = {**data, "session_id": self.state.session_id, "uuid": os.urandom(16).hex()}
        self.hook_events.append(system_message(subtype, data))

    def take_hook_events(self) -> list[SystemMessage]:
        """The hook events not yet handed on (once)."""
        events, self.hook_events = self.hook_events or [], [] if self.hook_events is not None else None
        return events

    def listen(self, event_type: Any, callback: Callable[[Message], Any]) -> None:
        """Call ``callback`` with every message of ``event_type`` (a class, a ``type`` tag, or ``None``)."""
        self.listeners.append((event_type, callback))

    # -- control from other tasks --

    def interrupt(self) -> None:
        """Stop the turn in flight as soon as possible (within one streamed chunk)."""
        self._interrupted = True
        if self._scope is not None:
            self._scope.cancel()
        if self._reader is not None:
            self._reader.interrupt()

    def add_tool_result(
        self, tool_use_id: str, content: Any, *, is_error: bool = False
    ) -> UserMessage | None:
        """Answer a client-side tool call; returns the message to send once every pending call is answered."""
        if tool_use_id not in self.state.pending:
            raise ConfigError(f"no client-side tool call {tool_use_id!r} is waiting for a result")
        text = content if isinstance(content, str | list) or content is None else json.dumps(content)
        return self.state.answer(
            tool_use_id, ToolResultBlock(tool_use_id=tool_use_id, content=text, is_error=is_error or None)
        )

    def set_permission_mode(self, mode: str) -> None:
        """The permission mode for the following tool calls."""
        self.state.set_permission_mode(mode)

    async def set_model(self, model: str | Provider | None) -> None:
        """Switch the model for the following turns; the history is kept. Closes a provider it made."""
        previous = self.runtime
        self.runtime = previous.with_model(model)
        self._window, self._asked = None, False
        if previous.owns_provider:
            await close_quietly(previous.provider)

    # -- one prompt --

    @overload
    def run(
        self, prompt: str | UserMessage | Mapping[str, Any], *, turn_events: Literal[False] = False
    ) -> AsyncGenerator[Message, None]: ...

    @overload
    def run(
        self, prompt: str | UserMessage | Mapping[str, Any], *, turn_events: Literal[True]
    ) -> AsyncGenerator[Message | TurnEvents, None]: ...

    async def run(
        self, prompt: str | UserMessage | Mapping[str, Any], *, turn_events: bool = False
    ) -> AsyncGenerator[Message | TurnEvents, None]:
        """Drive one prompt to its `ResultMessage`, yielding every message on the way.

        With ``turn_events``, a streamed turn's partial events come as one `TurnEvents` to iterate (as
        `MessageStream` does), rather than each through this generator and the stream's.
        """
        first_run = not self._started
        await self.start()
        state, started = self.state, time.monotonic()
        self._interrupted = False
        state.begin_prompt()
        init = self.runtime.init_message(state.session_id, state.permission_mode)
        await self.persist(init)
        yield init
        outcome: Outcome = await submit(self.runtime, state, prompt, first=first_run)
        last: AssistantMessage | None = None
        error: OpenAgentError | None = None
        while not isinstance(outcome, Finish | Pause):
            if isinstance(outcome, FollowUp):
                await self._record(outcome.message)
            elif isinstance(outcome, RunTools):
                emitted, answer, ends_turn = await self._run_tools(outcome)
                for message in [*emitted, answer] if answer else emitted:  # a subagent's messages first
                    yield await self._record(message, remember=message is answer)
                assert last is not None
                ended = after_tools(
                    self.runtime, state, last, ends_turn=ends_turn, interrupted=self._interrupted
                )
                if ended is not None:
                    outcome = ended
                    continue
            if (limit := turn_limit(self.runtime, state, last)) is not None:
                outcome = limit
                continue
            began = time.monotonic()
            turn = TurnBuilder(self.runtime.options.include_partial_messages, self.runtime.model)
            try:
                async with aclosing(self._stream(turn, turn_events)) as partials:
                    async for event in partials:
                        yield event
                response = turn.message(
                    self.runtime.model, self.runtime.parent_tool_use_id, interrupted=self._interrupted
                )
            except OpenAgentError as exc:
                state.add_seconds(time.monotonic() - began)
                outcome, error = Finish("error_during_execution", str(exc)), exc
                continue
            latency = time.monotonic() - began
            cost = count_turn(self.runtime, state, response, latency)
            last = await self._after_response(response)
            if last.content or not self._interrupted:  # the entry also keeps the turn's latency and cost
                remember = last.stop_reason != "incomplete"
                last = await self._record(
                    last, remember=remember, latency_ms=int(latency * 1000), cost_usd=cost
                )
                yield last
            outcome = await decide(self.runtime, state, last, interrupted=self._interrupted)
        result = result_message(outcome, state, started, last)
        await self.persist(result)
        yield result
        if error is not None:
            raise error

    async def _record(self, message: M, *, remember: bool = True, **fields: Any) -> M:
        """Persist a message (given a ``uuid`` when it has none) with entry ``fields``, and add it to the
        history the model sees next unless ``remember`` is off; the message as recorded.
        """  # noqa: D205
        if isinstance(message, UserMessage | AssistantMessage):
            if message.uuid is None:
                message = message.model_copy(update={"uuid": os.urandom(16).hex()})  # type: ignore[assignment]
            if self.checkpoints is not None and isinstance(message, UserMessage):
                self.checkpoints.mark(message.uuid)  # type: ignore[arg-type]
        if remember:
            assert isinstance(message, UserMessage | AssistantMessage)
            self.state.remember(message)
        await self.persist(message, **fields)
        return message

    def _cancel_scope(self) -> anyio.CancelScope:
        """A scope `interrupt` can cancel; never held across a ``yield``."""
        self._scope = anyio.CancelScope()
        if self._interrupted:
            self._scope.cancel()
        return self._scope

    async def _stream(
        self, turn: TurnBuilder, turn_events: bool
    ) -> AsyncGenerator[Message | TurnEvents, None]:
        """Stream a model turn into ``turn``, yielding compaction boundaries and partial `StreamEvent`s (those
        of the stream as one `TurnEvents` with ``turn_events``).
        """  # noqa: D205
        stream: AsyncIterator[ModelEvent] | None = None
        try:
            boundaries, stream, first = await self._begin()
            for boundary in boundaries:
                yield boundary
            if not turn.partial:
                if first is not None:
                    turn.feed(first)
                with self._cancel_scope():  # no yield inside: the fast path
                    async for each in stream:
                        turn.feed(each)
            elif not self._interrupted:  # one event at a time, each read interruptible on its own
                self._reader = reader = EventReader(stream)
                events = TurnEvents(self, turn, reader, first)
                if turn_events:
                    yield events  # the caller reads them (`TurnEvents.next`), then comes back here
                else:
                    while (partial := await events.next()) is not None:
                        yield partial
                events.raise_error()
        except OpenAgentError:
            raise
        except Exception as exc:  # a third-party provider leaking a vendor error: type it, keep the cause
            raise ProviderError(f"{type(exc).__name__}: {exc}", provider=self.runtime.model) from exc
        finally:
            self._scope = self._reader = None
            if stream is not None:
                with anyio.CancelScope(shield=True):
                    await close_quietly(stream)
        turn.check(self.runtime.model, interrupted=self._interrupted)
        for partial in self._partial(turn.finish()):  # message_delta (stop reason, usage), message_stop
            yield partial

    def _partial(self, events: list[dict[str, Any]]) -> list[StreamEvent]:
        """Stream events for the caller; built by the validator directly (one is made per streamed delta)."""
        if not events:
            return []
        session, parent = self.state.session_id, self.runtime.parent_tool_use_id
        make = StreamEvent.__pydantic_validator__.validate_python  # the model's, once built (deferred)
        ids = self._event_ids
        if parent is None:
            return [make({"uuid": next(ids), "session_id": session, "event": e}) for e in events]
        base = {"session_id": session, "parent_tool_use_id": parent}
        return [make({"uuid": next(ids), "event": e, **base}) for e in events]

    async def _begin(self) -> tuple[list[SystemMessage], AsyncIterator[ModelEvent], ModelEvent | None]:
        """Compact if the history nears the window, then open the stream; if the endpoint still says the
        context overflowed, compact for real once and try again.
        """  # noqa: D205
        boundaries = [b for b in [await self.compact("auto")] if b is not None]
        try:
            return boundaries, *await self._open()
        except ContextWindowExceededError:
            if (boundary := await self.compact("auto", force=True)) is None:
                raise
            return [*boundaries, boundary], *await self._open()

    async def _open(self) -> tuple[AsyncIterator[ModelEvent], ModelEvent | None]:
        """Start the stream and wait for its first event, retrying under the policy until then."""
        runtime = self.runtime
        request = prepare_request(runtime, self.state)
        provider = getattr(getattr(runtime.provider, "profile", None), "name", None)
        data = hook_input(runtime, self.state, request=request, provider=provider)
        asked = await run_hooks(runtime.hooks, "PreModelRequest", data)
        if isinstance(asked.updated_request, ModelRequest):
            request = asked.updated_request
        opened = None
        with self._cancel_scope():
            try:
                opened = await open_stream(runtime.provider, request, runtime.retry)
            except ProviderError as exc:
                if isinstance(exc, ContextWindowExceededError) or not await self._fall_back(exc):
                    raise
                runtime = self.runtime
                request = replace(request, model=runtime.model, model_profile=runtime.profile)
                opened = await open_stream(runtime.provider, request, runtime.retry)
        if opened is None:  # interrupted before the first event
            self._interrupted = True
            return _no_events(), None
        return opened

    async def _fall_back(self, failure: ProviderError) -> bool:
        """Switch to ``fallback_model`` for the rest of the conversation (once); whether it did."""
        previous = self.runtime
        fallback = previous.options.fallback_model
        if fallback is None or self._fell_back:
            return False
        self._fell_back = True
        self.runtime = previous.with_model(fallback)
        logger.warning(
            "model %s failed (%s); using the fallback model %s", previous.model, failure, self.runtime.model
        )
        if previous.owns_provider:
            with anyio.CancelScope(shield=True):
                await close_quietly(previous.provider)
        return True

    async def _after_response(self, response: AssistantMessage) -> AssistantMessage:
        """The PostModelResponse hooks see the turn and may replace it (``updatedResponse``)."""
        data = hook_input(self.runtime, self.state, response=response)
        answered = await run_hooks(self.runtime.hooks, "PostModelResponse", data)
        updated = answered.updated_response
        return updated if isinstance(updated, AssistantMessage) else response

    # -- compaction --

    async def compact(self, trigger: str, *, force: bool = False) -> SystemMessage | None:
        """Compact the history if it nears the context window, or now with ``force`` (see `compaction`)."""
        runtime, state = self.runtime, self.state
        policy = runtime.options.compaction
        if policy is None or not state.history:
            return None
        window = policy.window(runtime.profile) or await self._reported_window(policy)
        extra = runtime.extra_tokens() if force or window is not None else 0
        if not force and not policy.needed(state.history, window, extra):
            return None
        data = hook_input(runtime, state, trigger=trigger, custom_instructions=None)
        await run_hooks(runtime.hooks, "PreCompact", data)
        history, boundary = await compact(
            state.history, runtime.provider, policy, model=runtime.model, trigger=trigger, window=window,
            extra=extra, force=force,
        )  # fmt: skip
        state.use_history(history)
        await self.persist(boundary, history=[m.model_dump(mode="json", exclude_none=True) for m in history])
        return boundary

    async def _reported_window(self, policy: Compaction) -> int | None:
        """The window the server reports: asked once, and only when the answer could matter."""
        if self._asked or not policy.worth_asking(self.state.history):
            return self._window
        self._asked = True
        self._window = await reported_window(self.runtime.provider)
        return self._window

    # -- tools --

    async def _run_tools(self, outcome: RunTools) -> tuple[list[Message], UserMessage | None, bool]:
        """Run the turn's calls (concurrently unless ``parallel_tool_calls=False``): the messages they
        emitted, the results in call order, and whether one of them ended the turn.
        """  # noqa: D205
        runtime, state = self.runtime, self.state
        state.await_answers(outcome.pending)
        env = runtime.tool_env(
            state.session_id,
            state,
            hook_input(runtime, state),
            checkpoints=self.checkpoints,
            tasks=self.tasks,
            record=self.persist if runtime.store is not None else None,
        )
        calls = outcome.calls
        done: list[ToolCallResult | None] = [None] * len(calls)

        async def one(index: int, call: ToolUseBlock | ToolUseError) -> None:
            done[index] = await tool_call(env, call)

        with self._cancel_scope():
            if runtime.options.parallel_tool_calls is False or len(calls) == 1:
                for index, call in enumerate(calls):
                    await one(index, call)
            else:
                async with anyio.create_task_group() as group:
                    for index, call in enumerate(calls):
                        group.start_soon(one, index, call)
        self._scope = None
        return tool_results(runtime, state, calls, done)


class TurnEvents:
    """A streamed turn's partial `StreamEvent`s, read one provider event at a time by whoever iterates them.

    ``Conversation.run(prompt, turn_events=True)`` yields one per streamed turn in place of the events, so
    each event reaches the caller in one call (`next`) rather than through every generator on the way; once
    it is exhausted, the turn goes on where it was (`Conversation._stream`), and `raise_error` raises there,
    inside the turn, what a read raised. Between two provider events it stops when the conversation was
    interrupted, as the loop did; the events one provider event makes are all handed on.
    """

    __slots__ = ("_conversation", "_turn", "_reader", "_first", "_pending", "_done", "_error", "_one")

    def __init__(
        self, conversation: Conversation, turn: TurnBuilder, reader: EventReader, first: ModelEvent | None
    ) -> None:
        self._conversation = conversation
        self._turn = turn
        self._reader = reader
        self._first = first
        self._pending: list[StreamEvent] = []  # the rest of the last provider event's, reversed
        self._done = first is None
        self._error: BaseException | None = None
        self._one: Callable[[dict[str, Any]], StreamEvent] | None = None  # one event, top level
        if conversation.runtime.parent_tool_use_id is None:  # the hot path: no list, no generic build
            make = StreamEvent.__pydantic_validator__.validate_python
            session, ids = conversation.state.session_id, conversation._event_ids
            self._one = lambda e: make({"uuid": next(ids), "session_id": session, "event": e})

    async def next(self) -> StreamEvent | None:
        """The next partial event; ``None`` once the stream ended, was interrupted, or a read failed."""
        if self._pending:
            return self._pending.pop()
        if self._done:
            return None
        conversation, turn = self._conversation, self._turn
        event, self._first = self._first, None
        try:
            if event is None and not conversation._interrupted:
                event = await self._reader.next()
            while event is not None:
                if out := turn.feed(event):
                    if len(out) == 1 and (one := self._one) is not None:
                        return one(out[0])
                    events = conversation._partial(out)
                    self._pending = events[:0:-1]
                    return events[0]
                event = None if conversation._interrupted else await self._reader.next()
        except BaseException as exc:  # raised again inside the turn (`raise_error`)
            self._error = exc
        self._done = True
        return None

    def raise_error(self) -> None:
        """Raise what a read raised, if one did (once the events are exhausted)."""
        error, self._error, self._done = self._error, None, True
        if error is not None:
            raise error


async def _no_events() -> AsyncIterator[ModelEvent]:
    return
    yield  # pragma: no cover - makes this an (empty) async generator
