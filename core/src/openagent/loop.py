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
from dataclasses import dataclass, field
from typing import Any

import anyio

from ._structured import OutputSchema
from ._toolcall import run_tool_call
from ._turn import TurnBuilder
from .compaction import compact
from .errors import ConfigError, ContextWindowExceededError, OpenAgentError, ProviderError, StreamError
from .hooks import merge_hooks, run_hooks
from .models import (
    ModelEvent,
    ModelRequest,
    resolve_provider,
    warn_if_tools_unsupported,
)
from .options import AgentOptions
from .permissions import PLAN_MODE_NOTE, denied_outright
from .plugins import registry
from .retry import resolve_retry
from .sessions import SessionKey, SessionStore, entry_for, open_store, restore
from .settings import ProjectSettings, load_settings
from .tools import Tool, coerce_tool, open_toolsets
from .types import (
    AssistantMessage,
    Message,
    ResultMessage,
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
)

__all__ = ["Conversation"]

logger = logging.getLogger("openagent.loop")


@dataclass(slots=True)
class _Stats:
    """Totals of one prompt's run."""

    api: float = 0.0
    turns: int = 0
    repairs: int = 0
    stop_hook_active: bool = False
    structured: Any = None
    usage: Usage = field(default_factory=Usage)


def _user_message(prompt: str | UserMessage | Mapping[str, Any]) -> UserMessage:
    if isinstance(prompt, UserMessage):
        return prompt
    if isinstance(prompt, str):
        return UserMessage(content=prompt)
    message = prompt.get("message", prompt)  # Claude's streaming input: {"type": "user", "message": {...}}
    return UserMessage(content=message["content"], parent_tool_use_id=prompt.get("parent_tool_use_id"))


def _final_text(message: AssistantMessage | None) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock)) if message else ""


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
        self._output = OutputSchema(options.output_format) if options.output_format is not None else None
        self.settings = ProjectSettings()
        self.allowed: list[str] = list(options.allowed_tools)
        """Permission rules in force: the options' and the local settings' (likewise the next two)."""
        self.disallowed: list[str] = list(options.disallowed_tools)
        self.ask: list[str] = list(options.ask_tools)
        self.hooks = merge_hooks(registry().hooks, options.hooks)  # checks event names and entries
        """Plugins' hooks, then the options' own, by event."""
        self._session_context: list[str] = []  # SessionStart hooks' additionalContext, for the first prompt
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
        self._toolsets: list[Any] = []
        self._described: dict[str, Any] = {}

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
        if agents:  # subagents answer through the Task tool
            from .agents import task_tool

            self.tools.setdefault("Task", task_tool(agents))
        self._toolsets, tools, described = await open_toolsets(self.options)
        for found in tools:
            self.tools.setdefault(found.name, found)
        self._described.update(described)
        warn_if_tools_unsupported(self.provider, self.model, bool(self.tools))
        if not opts.persist_session:
            return
        self._store = open_store(opts.session_store)
        self._key, self.history = await restore(self._store, self.cwd, self.session_id, opts)
        self.session_id = self._key["session_id"]

    def _load_settings(self) -> None:
        """Memory files, skills, commands, agents and local permission rules (`openagent.settings`)."""
        opts = self.options
        self.settings = load_settings(opts.setting_sources, self.cwd, opts.skills)
        for found in self.settings.tools():
            self.tools.setdefault(found.name, found)
        self.allowed += self.settings.allowed_tools
        self.disallowed += self.settings.disallowed_tools
        self.ask += self.settings.ask_tools
        self._described.update(self.settings.describe())

    async def persist(self, message: Message | str, **fields: Any) -> None:
        """Append ``message`` (or a bare entry of that type) and extra entry ``fields`` to the session."""
        if self._store is not None and self._key is not None:
            await self._store.append(self._key, [{**entry_for(message, self.session_id), **fields}])

    async def aclose(self) -> None:
        """Close what the conversation opened (the default store's session lock, the provider)."""
        await run_hooks(self.hooks, "SessionEnd", self.hook_input(reason="other"))
        toolsets, self._toolsets = self._toolsets, []
        for toolset in reversed(toolsets):
            await _maybe_close(toolset)
        store, self._store = self._store, None
        if isinstance(self.options.session_store, str | None):  # we made it, we close it
            await _maybe_close(store)
        if isinstance(self.options.model, str | None):  # a provider instance belongs to the caller
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
            **self._described,
        }
        return SystemMessage(subtype="init", data=data)

    async def run(self, prompt: str | UserMessage | Mapping[str, Any]) -> AsyncGenerator[Message, None]:
        """Drive one prompt to its `ResultMessage`, yielding every message on the way."""
        opts = self.options
        first_run = not self._started
        await self.start()
        started = time.monotonic()
        self._interrupted = False
        stats = _Stats()
        init = self._init_message()
        await self.persist(init)
        yield init
        message = await self._submit(prompt, first_run)
        if isinstance(message, str):  # a UserPromptSubmit hook blocked it
            yield await self._result("error_during_execution", started, stats, message, None)
            return
        await self._record(message)

        last: AssistantMessage | None = None
        while True:
            if opts.max_turns is not None and stats.turns >= opts.max_turns:
                yield await self._result("error_max_turns", started, stats, _final_text(last), last)
                return
            turn = TurnBuilder(opts.include_partial_messages)
            began = time.monotonic()
            try:
                async with aclosing(self._stream(turn)) as partials:
                    async for event in partials:
                        yield event
            except OpenAgentError as exc:
                stats.api += time.monotonic() - began
                yield await self._result("error_during_execution", started, stats, str(exc), last)
                raise
            stats.api += (latency := time.monotonic() - began)
            last = self._assistant(turn)
            cost = self._account(turn, stats)
            last = await self._after_response(last)
            if last.content or not self._interrupted:  # the entry also keeps the turn's latency and cost
                remember = last.stop_reason != "incomplete"
                await self._record(last, remember=remember, latency_ms=int(latency * 1000), cost_usd=cost)
                yield last
            if ending := self._ending():
                text = ending[1] or _final_text(last)
                yield await self._result(ending[0], started, stats, text, last, ending[1])
                return

            calls = [b for b in last.content if isinstance(b, ToolUseBlock | ToolUseError)]
            if not calls and last.stop_reason != "pause_turn":  # a paused server tool: send the turn back
                if follow_up := await self._follow_up(last, stats):  # a Stop hook or a schema says "not yet"
                    await self._record(follow_up)
                    continue
                failed = stats.repairs > opts.max_structured_output_retries
                subtype: ResultSubtype = "error_max_structured_output_retries" if failed else "success"
                text = _final_text(last)
                yield await self._result(subtype, started, stats, text, last, structured=stats.structured)
                return
            results, stop_turn, emitted = await self._run_tools(calls)
            answer = UserMessage(content=list(results), parent_tool_use_id=self.parent_tool_use_id)
            for out in [*emitted, answer] if results else emitted:  # a subagent's messages come first
                await self._record(out, remember=out is answer)
                yield out
            if ending := self._ending(paused=bool(self.pending) or stop_turn):
                yield await self._result(ending[0], started, stats, _final_text(last), last, ending[1])
                return

    async def _record(self, message: Message, *, remember: bool = True, **fields: Any) -> None:
        """Persist a message with entry ``fields``; add it to the model's history unless ``remember``."""
        if remember:
            assert isinstance(message, UserMessage | AssistantMessage)
            self.history.append(message)
        await self.persist(message, **fields)

    async def _submit(
        self, prompt: str | UserMessage | Mapping[str, Any], first_run: bool
    ) -> UserMessage | str:
        """The prompt as it goes to the model (hooks may add context), or why a hook blocked it."""
        hooks = self.hooks
        if first_run:
            source = "resume" if self.options.resume else "startup"
            started = await run_hooks(hooks, "SessionStart", self.hook_input(source=source), target=source)
            self._session_context = started.additional_context
        message = _user_message(prompt)
        if not isinstance(message.content, str):
            return message
        text = message.content
        if self.settings.commands and text.startswith("/"):
            try:
                text = self.settings.expand(text)
            except ValueError as exc:  # an unknown command: say which ones exist
                return str(exc)
        submitted = await run_hooks(hooks, "UserPromptSubmit", self.hook_input(prompt=text))
        if submitted.is_blocked:
            return submitted.block_reason or submitted.stop_reason or "blocked by a hook"
        extra = [*self._session_context, *submitted.additional_context]
        self._session_context = []
        if extra or text != message.content:
            return UserMessage(content="\n\n".join([text, *extra]))
        return message

    def _account(self, turn: TurnBuilder, stats: _Stats) -> float | None:
        stats.turns += 1
        if turn.usage is None:
            return None
        stats.usage, self.usage = stats.usage + turn.usage, self.usage + turn.usage
        price = getattr(self.provider, "cost", None)
        cost: float | None = price(turn.usage) if callable(price) else None
        self.total_cost_usd = self.total_cost_usd if cost is None else (self.total_cost_usd or 0.0) + cost
        return cost

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

    async def _follow_up(self, last: AssistantMessage, stats: _Stats) -> UserMessage | None:
        """What to tell the model when it wants to stop but may not yet: a Stop hook's reason, or (up to
        ``max_structured_output_retries`` times) why its answer does not match ``output_format``.
        """  # noqa: D205
        hooks = self.hooks
        stop_input = self.hook_input(
            stop_hook_active=stats.stop_hook_active, last_assistant_message=_final_text(last)
        )
        stopping = await run_hooks(hooks, "Stop", stop_input)
        if stopping.block_reason and stopping.continue_:
            stats.stop_hook_active = True
            return UserMessage(content=stopping.block_reason)
        if self._output is None:
            return None
        stats.structured, problem = self._output.parse(_final_text(last))
        if problem is None:
            return None
        stats.repairs += 1
        if stats.repairs > self.options.max_structured_output_retries:
            return None
        return UserMessage(
            content=f"Your answer does not match the required JSON schema: {problem}. "
            "Reply with only the corrected JSON."
        )

    def _request(self) -> ModelRequest:
        opts = self.options
        profile = getattr(self.provider, "profile", None)
        native = self._output is not None and bool(getattr(profile, "supports_json_schema", False))
        system = self.settings.system_prompt(opts.system_prompt)
        if opts.permission_mode == "plan":  # the model is told why its tool calls will be refused
            system = "\n\n".join(filter(None, [system, PLAN_MODE_NOTE]))
        if self._output is not None and not native:
            system = "\n\n".join(filter(None, [system, self._output.instructions()]))
        return ModelRequest(
            model=self.model,
            messages=list(self.history),
            system=system,
            tools=[t.spec for t in self.tools.values() if not denied_outright(t.name, self.disallowed)],
            max_tokens=opts.max_tokens,
            temperature=opts.temperature,
            top_p=opts.top_p,
            stop=list(opts.stop) if opts.stop else None,
            tool_choice=opts.tool_choice,
            parallel_tool_calls=opts.parallel_tool_calls,
            output_format=self._output.request_format() if native and self._output else None,
            extra_body=dict(opts.extra_body) if opts.extra_body else None,
            timeout=opts.timeout,
            metadata=dict(opts.metadata) if opts.metadata else None,
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
        if turn.stop is None and not self._interrupted:
            partial_text = "".join("".join(b[1]) for b in turn.blocks)
            raise StreamError(
                "the stream ended before the turn finished (no stop reason)",
                provider=self.model,
                body=partial_text or None,
            )

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
        request = self._request()
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
            opened = await self._retry(attempt)
        if opened is None:  # interrupted before the first event
            self._interrupted = True
            return _no_events(), None
        return opened

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

    async def _result(
        self,
        subtype: ResultSubtype,
        started: float,
        stats: _Stats,
        result: str,
        last: AssistantMessage | None,
        stop_reason: str | None = None,
        *,
        structured: Any = None,
    ) -> ResultMessage:
        message = ResultMessage(
            subtype=subtype,
            duration_ms=int((time.monotonic() - started) * 1000),
            duration_api_ms=int(stats.api * 1000),
            is_error=subtype != "success",
            num_turns=stats.turns,
            session_id=self.session_id,
            total_cost_usd=self.total_cost_usd,
            usage=stats.usage,
            result=result,
            structured_output=structured,
            stop_reason=stop_reason or (last.stop_reason if last else None),
        )
        await self.persist(message)
        return message

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
