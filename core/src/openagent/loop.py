"""The agent loop: model turn → tool calls → tool results → model turn … → result.

This is the one place where turns, streaming, tool execution, hooks, permissions, retries and session
persistence meet. `Conversation` holds the state that outlives one prompt (history, session, usage);
`Conversation.run` drives one prompt to its `ResultMessage`. Read `Conversation.run` top to bottom.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import Any

import anyio

from ._checkpoints import FileCheckpoints
from ._prices import cost_of
from ._prompt import submit
from ._request import build_request
from ._result import RunStats, add_model_usage, final_text, result_message
from ._structured import OutputSchema
from ._toolcall import run_tool_call
from ._turn import TurnBuilder
from .compaction import compact
from .errors import ConfigError, ContextWindowExceededError, OpenAgentError, ProviderError, StreamError
from .hooks import merge_hooks, observe_hooks, run_hooks
from .models import (
    ModelEvent,
    ModelRequest,
    resolve_provider,
    warn_if_tools_unsupported,
)
from .options import AgentOptions
from .plugins import registry
from .retry import resolve_retry
from .sessions import SessionKey, SessionStore, entry_for, open_store, restore
from .settings import ProjectSettings, load_settings
from .tools import Tool, coerce_tool, describe_toolsets, open_toolsets
from .types import (
    AssistantMessage,
    Message,
    ResultSubtype,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    Usage,
    UserMessage,
    system_message,
)

__all__ = ["Conversation"]

logger = logging.getLogger("openagent.loop")


class Conversation:
    """A conversation with a model: history, session and totals that outlive one prompt.

    `query()` runs one and closes it; `Client` keeps one open across prompts.
    """

    def __init__(
        self, options: AgentOptions, *, parent_tool_use_id: str | None = None, depth: int = 0
    ) -> None:
        self.options = options
        self.parent_tool_use_id = parent_tool_use_id
        """Set on a subagent's conversation: the Task call it answers; stamped on every message."""
        self.depth = depth
        self.history: list[UserMessage | AssistantMessage] = []
        self.usage = Usage()
        self.total_cost_usd: float | None = None
        self.session_id: str = options.session_id or str(uuid.uuid4())
        self.cwd = options.resolved_cwd()
        self.provider, self.model = resolve_provider(options)
        self.tools: dict[str, Tool] = {t.name: t for t in map(coerce_tool, options.tools)}
        self.output = OutputSchema(options.output_format) if options.output_format is not None else None
        """The schema a structured answer must match (``output_format``)."""
        self._spent = 0  # output tokens of the prompt being run (``task_budget``)
        self._fell_back = False
        self.denials: list[dict[str, Any]] = []
        """The tool calls refused during the prompt being run."""
        self.model_usage: dict[str, dict[str, Any]] = {}
        """Tokens and cost per model, for the whole conversation."""
        self.tasks: dict[str, Conversation] = {}
        """Subagents running now, by task id (their ``Task`` call's id)."""
        self.checkpoints = FileCheckpoints() if options.enable_file_checkpointing else None
        self.hook_events: list[SystemMessage] | None = [] if options.include_hook_events else None
        """`HookEventMessage`s not yet yielded (``include_hook_events``)."""
        self._owns_provider = isinstance(options.model, str | None)
        self.settings = ProjectSettings()
        self.allowed: list[str] = list(options.allowed_tools)
        """Permission rules in force: the options' and the local settings' (likewise the next two)."""
        self.disallowed: list[str] = list(options.disallowed_tools)
        self.ask: list[str] = list(options.ask_tools)
        self.hooks = merge_hooks(registry().hooks, options.hooks)  # checks event names and entries
        """Plugins' hooks, then the options' own, by event."""
        if self.hook_events is not None:
            self.hooks = observe_hooks(self.hooks, self._hook_event)
        self.session_context: list[str] = []  # SessionStart hooks' additionalContext, for the first prompt
        self.listeners: list[tuple[Any, Callable[[Message], Any]]] = []
        """``(filter, callback)`` pairs called with every message (`Client.on`, ``on_message``)."""
        if options.on_message is not None:
            self.listeners.append((None, options.on_message))
        self._retry = resolve_retry(options.retry)
        self._store: SessionStore | None = None
        self._key: SessionKey | None = None
        self._started = False
        self._interrupted = False
        self._scope: anyio.CancelScope | None = None
        self.pending: dict[str, ToolUseBlock] = {}  # client-side calls awaiting add_tool_result
        self._answers: list[ToolResultBlock] = []
        self.toolsets: list[Any] = []  # what plugins opened for this conversation (MCP servers …)
        self.described: dict[str, Any] = {}
        """What the init message adds (MCP servers, memory files, skills, commands …)."""
        self.agents: list[str] = []
        """The subagents the ``Task`` tool can run."""
        self.last_usage: Usage | None = None
        """The last turn's usage, as the endpoint reported it."""

    # -- sessions --

    async def start(self) -> None:
        """Open the session store and rebuild history when resuming (idempotent)."""
        if self._started:
            return
        self._started = True
        opts = self.options
        if opts.setting_sources:
            self._load_settings()
        agents = {**self.settings.agents, **(opts.agents or {})}  # code wins over files
        self.agents = list(agents)
        if agents:  # subagents answer through the Task tool
            from .agents import task_tool

            self.tools.setdefault("Task", task_tool(agents))
        self.toolsets = await open_toolsets(self.options, self.tools)
        warn_if_tools_unsupported(self.provider, self.model, bool(self.tools))
        if not opts.persist_session:
            return
        self._store = open_store(opts.session_store)
        self._key, self.history = await restore(self._store, self.cwd, self.session_id, opts)
        self.session_id = self._key["session_id"]

    def _load_settings(self) -> None:
        """Memory files, skills, commands, agents and local permission rules (`openagent.settings`)."""
        opts = self.options
        self.settings = load_settings(
            opts.setting_sources, self.cwd, opts.skills, trust_project=opts.trust_project
        )
        self.options = self.settings.apply(opts)  # a trusted project's mode, add_dirs, env, MCP servers
        for found in self.settings.tools():
            self.tools.setdefault(found.name, found)
        self.allowed += self.settings.allowed_tools
        self.disallowed += self.settings.disallowed_tools
        self.ask += self.settings.ask_tools
        self.described.update(self.settings.describe())

    async def persist(self, message: Message, **fields: Any) -> None:
        """Append ``message`` (and extra entry ``fields``) to the session, when there is one."""
        if self._store is not None and self._key is not None:
            await self._store.append(self._key, [{**entry_for(message, self.session_id), **fields}])

    async def aclose(self) -> None:
        """Close what the conversation opened (the default store's session lock, the provider)."""
        await run_hooks(self.hooks, "SessionEnd", self.hook_input(reason="other"))
        toolsets, self.toolsets = self.toolsets, []
        for toolset in reversed(toolsets):
            await _maybe_close(toolset)
        store, self._store = self._store, None
        if isinstance(self.options.session_store, str | None):  # we made it, we close it
            await _maybe_close(store)
        if self._owns_provider:  # a provider instance belongs to the caller
            await _maybe_close(self.provider)

    # -- control from other tasks --

    def interrupt(self) -> None:
        """Stop the turn in flight as soon as possible (within one streamed chunk)."""
        self._interrupted = True
        if self._scope is not None:
            self._scope.cancel()

    def add_tool_result(
        self, tool_use_id: str, content: Any, *, is_error: bool = False
    ) -> UserMessage | None:
        """Answer a client-side tool call; returns the message to send once every pending call is answered."""
        if tool_use_id not in self.pending:
            raise ConfigError(f"no client-side tool call {tool_use_id!r} is waiting for a result")
        del self.pending[tool_use_id]
        text = content if isinstance(content, str | list) or content is None else json.dumps(content)
        self._answers.append(
            ToolResultBlock(tool_use_id=tool_use_id, content=text, is_error=is_error or None)
        )
        if self.pending:
            return None
        answers, self._answers = self._answers, []
        return UserMessage(content=list(answers))

    # -- one prompt --

    def hook_input(self, **more: Any) -> dict[str, Any]:
        """The keys every hook input has (session, cwd, permission mode, a subagent's parent), + ``more``."""
        base = {"session_id": self.session_id, "cwd": str(self.cwd), "transcript_path": None}
        if self.parent_tool_use_id:
            base["parent_tool_use_id"] = self.parent_tool_use_id
        return {**base, "permission_mode": self.options.permission_mode, **more}

    def _init_message(self) -> SystemMessage:
        data = {
            "session_id": self.session_id,
            "model": self.model,
            "tools": list(self.tools),
            "cwd": str(self.cwd),
            "permission_mode": self.options.permission_mode,
            "mcp_servers": [],
            **self.described,
            **describe_toolsets(self.toolsets),  # live: a server may have connected or failed since
        }
        return SystemMessage(subtype="init", data=data)

    async def run(self, prompt: str | UserMessage | Mapping[str, Any]) -> AsyncGenerator[Message, None]:
        """Drive one prompt to its `ResultMessage`, yielding every message on the way."""
        opts = self.options
        first_run = not self._started
        await self.start()
        started = time.monotonic()
        self._interrupted = False
        stats = RunStats()
        self._spent = 0
        init = self._init_message()
        await self.persist(init)
        yield init
        message = await submit(self, prompt, first_run)
        if isinstance(message, str):  # a UserPromptSubmit hook blocked it
            yield await result_message(self, "error_during_execution", started, stats, message, None)
            return
        await self._record(message)

        last: AssistantMessage | None = None
        while True:
            if opts.max_turns is not None and stats.turns >= opts.max_turns:
                yield await result_message(self, "error_max_turns", started, stats, final_text(last), last)
                return
            turn = TurnBuilder(opts.include_partial_messages, self.model)
            began = time.monotonic()
            try:
                async with aclosing(self._stream(turn)) as partials:
                    async for event in partials:
                        yield event
            except OpenAgentError as exc:
                stats.api += time.monotonic() - began
                yield await result_message(self, "error_during_execution", started, stats, str(exc), last)
                raise
            stats.api += time.monotonic() - began
            last = self._assistant(turn)
            self._account(turn, stats)
            last = await self._after_response(last)
            if last.content or not self._interrupted:
                await self._record(last, remember=last.stop_reason != "incomplete")
                yield last
            if ending := self._ending():
                text = ending[1] or final_text(last)
                yield await result_message(self, ending[0], started, stats, text, last, ending[1])
                return

            calls = [b for b in last.content if isinstance(b, ToolUseBlock | ToolUseError)]
            if not calls and last.stop_reason != "pause_turn":  # a paused server tool: send the turn back
                if follow_up := await self._follow_up(last, stats):  # a Stop hook or a schema says "not yet"
                    await self._record(follow_up)
                    continue
                failed = stats.repairs > opts.max_structured_output_retries
                subtype: ResultSubtype = "error_max_structured_output_retries" if failed else "success"
                text = final_text(last)
                yield await result_message(
                    self, subtype, started, stats, text, last, structured=stats.structured
                )
                return
            results, stop_turn, emitted = await self._run_tools(calls)
            answer = UserMessage(content=list(results), parent_tool_use_id=self.parent_tool_use_id)
            for out in [*emitted, answer] if results else emitted:  # a subagent's messages come first
                await self._record(out, remember=out is answer)
                yield out
            if ending := self._ending(paused=bool(self.pending) or stop_turn):
                yield await result_message(self, ending[0], started, stats, final_text(last), last, ending[1])
                return

    def _hook_event(self, subtype: str, data: dict[str, Any]) -> None:
        assert self.hook_events is not None
        data = {**data, "session_id": self.session_id, "uuid": uuid.uuid4().hex}
        self.hook_events.append(system_message(subtype, data))

    async def _record(self, message: Message, *, remember: bool = True) -> None:
        """Persist a message, and add it to the history the model sees next unless ``remember`` is off."""
        if isinstance(message, UserMessage | AssistantMessage):
            message.uuid = message.uuid or uuid.uuid4().hex
            if self.checkpoints is not None and isinstance(message, UserMessage):
                self.checkpoints.mark(message.uuid)
        if remember:
            assert isinstance(message, UserMessage | AssistantMessage)
            self.history.append(message)
        await self.persist(message)

    def _account(self, turn: TurnBuilder, stats: RunStats) -> None:
        stats.turns += 1
        if turn.usage is not None:
            self.last_usage = turn.usage
            stats.usage += turn.usage
            self._spent = stats.usage.output_tokens
            self.usage += turn.usage
            cost = cost_of(self.provider, self.model, turn.usage)
            add_model_usage(self.model_usage.setdefault(self.model, {}), turn.usage, cost)
            if cost is not None:
                self.total_cost_usd = (self.total_cost_usd or 0.0) + cost

    def _ending(self, paused: bool = False) -> tuple[ResultSubtype, str | None] | None:
        """Why the run ends here whatever the model wants: an interrupt, the budget, or (``paused``)
        tool calls the caller must answer or a denial that ended the turn.
        """  # noqa: D205
        if self._interrupted:
            return "error_during_execution", "interrupted"
        if paused:
            return "success", "tool_use"
        budget = self.options.max_budget_usd
        if budget is not None and (self.total_cost_usd or 0.0) >= budget:
            return "error_max_budget_usd", None
        return None

    async def _follow_up(self, last: AssistantMessage, stats: RunStats) -> UserMessage | None:
        """What to tell the model when it wants to stop but may not yet: a Stop hook's reason, or (up to
        ``max_structured_output_retries`` times) why its answer does not match ``output_format``.
        """  # noqa: D205
        hooks = self.hooks
        stop_input = self.hook_input(
            stop_hook_active=stats.stop_hook_active, last_assistant_message=final_text(last)
        )
        stopping = await run_hooks(hooks, "Stop", stop_input)
        if stopping.block_reason and stopping.continue_:
            stats.stop_hook_active = True
            return UserMessage(content=stopping.block_reason)
        if self.output is None:
            return None
        stats.structured, problem = self.output.parse(final_text(last))
        if problem is None:
            return None
        stats.repairs += 1
        if stats.repairs > self.options.max_structured_output_retries:
            return None
        return UserMessage(
            content=f"Your answer does not match the required JSON schema: {problem}. "
            "Reply with only the corrected JSON."
        )

    def _cancel_scope(self) -> anyio.CancelScope:
        """A scope `interrupt` can cancel; never held across a ``yield``."""
        self._scope = anyio.CancelScope()
        if self._interrupted:
            self._scope.cancel()
        return self._scope

    async def _stream(self, turn: TurnBuilder) -> AsyncGenerator[Message, None]:
        """Stream a model turn into ``turn``, yielding partial `StreamEvent`s and compaction boundaries."""
        stream: AsyncIterator[ModelEvent] | None = None
        try:
            boundaries, stream, first = await self._begin()
            for boundary in boundaries:
                yield boundary
            if first is not None:
                for partial in self._partial(turn.feed(first)):
                    yield partial
            if not turn.partial:
                with self._cancel_scope():  # no yield inside: the fast path
                    async for event in stream:
                        turn.feed(event)
            while turn.partial and (next_event := await self._next(stream)) is not None:
                for partial in self._partial(turn.feed(next_event)):
                    yield partial
        except OpenAgentError:
            raise
        except Exception as exc:  # a third-party provider leaking a vendor error: type it, keep the cause
            raise ProviderError(f"{type(exc).__name__}: {exc}", provider=self.model) from exc
        finally:
            self._scope = None
            if stream is not None:
                with anyio.CancelScope(shield=True):
                    await _maybe_close(stream)
        for partial in self._finish(turn):
            yield partial

    def _finish(self, turn: TurnBuilder) -> list[StreamEvent]:
        """The events that close the turn's message (`StreamError` for a stream cut before its stop)."""
        if turn.stop is None and not self._interrupted:
            partial_text = "".join("".join(b[1]) for b in turn.blocks)
            raise StreamError(
                "the stream ended before the turn finished (no stop reason)",
                provider=self.model,
                body=partial_text or None,
            )
        return self._partial(turn.finish())  # message_delta (stop reason, usage), message_stop

    async def _next(self, stream: AsyncIterator[ModelEvent]) -> ModelEvent | None:
        """The next event, or None at the end of the stream or on an interrupt."""
        if self._interrupted:
            return None
        with self._cancel_scope():
            try:
                return await stream.__anext__()
            except StopAsyncIteration:
                return None
        return None  # cancelled by interrupt()

    async def compact(self, trigger: str, *, force: bool = False) -> SystemMessage | None:
        """Compact the history if it nears the context window, or now with ``force`` (see `compaction`)."""
        return await compact(self, trigger, force=force)

    def _partial(self, events: list[dict[str, Any]]) -> list[StreamEvent]:
        parent = self.parent_tool_use_id
        return [
            StreamEvent(uuid=uuid.uuid4().hex, session_id=self.session_id, event=e, parent_tool_use_id=parent)
            for e in events
        ]

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
        request = build_request(self, self._spent)
        provider = getattr(getattr(self.provider, "profile", None), "name", None)
        asked = await run_hooks(
            self.hooks, "PreModelRequest", self.hook_input(request=request, provider=provider)
        )
        if isinstance(asked.updated_request, ModelRequest):
            request = asked.updated_request

        async def attempt() -> tuple[AsyncIterator[ModelEvent], ModelEvent | None]:
            stream = self.provider.stream(request).__aiter__()
            try:
                return stream, await stream.__anext__()
            except StopAsyncIteration:
                return stream, None
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await _maybe_close(stream)
                raise

        opened = None
        with self._cancel_scope():
            try:
                opened = await self._retry(attempt)
            except ProviderError as exc:
                if isinstance(exc, ContextWindowExceededError) or not await self._fall_back(exc):
                    raise
                request.model = self.model
                opened = await self._retry(attempt)
        if opened is None:  # interrupted before the first event
            self._interrupted = True
            return _no_events(), None
        return opened

    async def _fall_back(self, failure: ProviderError) -> bool:
        """Switch to ``fallback_model`` for the rest of the conversation (once); whether it did."""
        fallback = self.options.fallback_model
        if fallback is None or self._fell_back:
            return False
        self._fell_back = True
        previous, owned = self.provider, self._owns_provider
        self.provider, model = resolve_provider(replace(self.options, model=fallback))
        self._owns_provider = isinstance(fallback, str)
        logger.warning("model %s failed (%s); using the fallback model %s", self.model, failure, model)
        self.model = model
        if owned:
            with anyio.CancelScope(shield=True):
                await _maybe_close(previous)
        return True

    def _assistant(self, turn: TurnBuilder) -> AssistantMessage:
        content = turn.content()
        if self._interrupted:  # never keep half a tool call: it could not be answered
            content = [b for b in content if isinstance(b, TextBlock | ThinkingBlock)]
            reason = "interrupted"
        else:
            reason = turn.stop.reason if turn.stop else "incomplete"
        return AssistantMessage(
            content=content,
            model=self.model,
            usage=turn.usage,
            stop_reason=reason,
            parent_tool_use_id=self.parent_tool_use_id,
        )

    # -- tools --

    async def _run_tools(
        self, calls: list[ToolUseBlock | ToolUseError]
    ) -> tuple[list[ToolResultBlock], bool, list[Message]]:
        """Run the turn's tool calls (concurrently unless ``parallel_tool_calls=False``), results in order."""
        results: list[ToolResultBlock | None] = [None] * len(calls)
        emitted: list[Message] = []
        stop_turn = False

        async def one(index: int, call: ToolUseBlock | ToolUseError) -> None:
            nonlocal stop_turn
            result, interrupt = await run_tool_call(self, call, emitted.append)
            results[index] = result
            stop_turn = stop_turn or interrupt

        with self._cancel_scope():
            if self.options.parallel_tool_calls is False or len(calls) == 1:
                for index, call in enumerate(calls):
                    await one(index, call)
            else:
                async with anyio.create_task_group() as group:
                    for index, call in enumerate(calls):
                        group.start_soon(one, index, call)
        self._scope = None
        answered = []
        for call, result in zip(calls, results, strict=True):
            if result is None and call.id not in self.pending:  # cut off by an interrupt
                result = ToolResultBlock(
                    tool_use_id=call.id, content="interrupted by the user", is_error=True
                )
            if result is not None:
                answered.append(result)
        return answered, stop_turn, emitted

    async def _after_response(self, response: AssistantMessage) -> AssistantMessage:
        """The PostModelResponse hooks see the turn and may replace it (``updatedResponse``)."""
        answered = await run_hooks(self.hooks, "PostModelResponse", self.hook_input(response=response))
        updated = answered.updated_response
        return updated if isinstance(updated, AssistantMessage) else response


async def _no_events() -> AsyncIterator[ModelEvent]:
    return
    yield  # pragma: no cover - makes this an (empty) async generator


async def _maybe_close(thing: Any) -> None:
    close = getattr(thing, "aclose", None)
    if close is not None:
        try:
            await close()
        except Exception as exc:  # closing must never mask the run's own outcome
            logger.debug("closing %r failed: %s", thing, exc)
