"""The steps of a run, each callable on its own with serialisable inputs and outputs.

A run is: prepare a request (`prepare_request`: run state → `ModelRequest`), a model turn (`model_turn`:
`ModelRequest` → `AssistantMessage`, usage included), a decision (`decide`: the turn → an `Outcome`), and for
`RunTools` the tool calls (`openagent._toolcall.tool_call`: one `ToolUseBlock` → one `ToolResultBlock`), then
`after_tools`, and so on until the outcome is `Finish` or `Pause`; `result_message` builds the closing
`ResultMessage`. The loop (`openagent._loop`) drives these steps in process, streaming; a workflow engine can
run the model turn and each tool call as activities and keep the decisions in the workflow.

`RunState` is everything a conversation changes as it runs, in one object that only its owner writes.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import anyio

from ._errors import OpenAgentError, ProviderError
from ._hooks import run_hooks
from ._models import ModelEvent, ModelRequest, Provider
from ._permissions import PLAN_MODE_NOTE, denied_outright
from ._prices import cost_of
from ._turn import TurnBuilder
from ._types import (
    AssistantMessage,
    Message,
    ResultMessage,
    ResultSubtype,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    Usage,
    UserMessage,
    json_adapter,
)

if TYPE_CHECKING:
    from ._retry import RetryPolicy
    from ._runtime import Runtime
    from ._sessions import SessionKey
    from ._toolcall import ToolCallResult

__all__ = [
    "Finish",
    "FollowUp",
    "Outcome",
    "Pause",
    "RunState",
    "RunTools",
    "after_tools",
    "count_turn",
    "decide",
    "final_text",
    "hook_input",
    "model_turn",
    "new_state",
    "open_stream",
    "prepare_request",
    "result_message",
    "submit",
    "tool_results",
    "turn_cost",
    "turn_limit",
    "user_message",
]


# --- the state a run changes ------------------------------------------------------------------------------


@dataclass
class RunState:
    """What a conversation changes as it runs: history, totals, pending client-side calls, session position.

    One object, written only through its own methods and the steps in this module; JSON round-trips
    (`to_json` / `from_json`), so a workflow can hold it.
    """

    session_id: str
    permission_mode: str = "default"
    """The mode for the next tool calls (`Client.set_permission_mode` changes it; the options stay)."""
    history: list[UserMessage | AssistantMessage] = field(default_factory=list)
    """What the model sees next turn."""
    usage: Usage = field(default_factory=Usage)
    """Tokens used by the whole conversation."""
    total_cost_usd: float | None = None
    pending: dict[str, ToolUseBlock] = field(default_factory=dict)
    """Client-side calls waiting for `Client.add_tool_result`, by call id."""
    answers: list[ToolResultBlock] = field(default_factory=list)
    """Answers to pending calls received so far."""
    session_key: dict[str, str] | None = None
    """Where the transcript is written (a `SessionKey`); ``None`` in memory only."""
    session_context: list[str] = field(default_factory=list)
    """SessionStart hooks' additional context, added to the next prompt."""
    allowed: list[str] = field(default_factory=list)
    """Permission rules in force that allow (the options', the project's, and updates since)."""
    disallowed: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    model_usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Tokens and cost per model, for the whole conversation (the Claude Agent SDK's keys)."""
    last_usage: Usage | None = None
    """The last turn's usage, as the endpoint reported it."""
    denials: list[dict[str, Any]] = field(default_factory=list)
    """The tool calls refused during the prompt in flight."""
    turns: int = 0
    """Model turns of the prompt in flight (this and the fields below restart with each prompt)."""
    api_seconds: float = 0.0
    repairs: int = 0
    """Answers sent back because they did not match ``output_format``."""
    stop_hook_active: bool = False
    prompt_usage: Usage = field(default_factory=Usage)
    structured: Any = None
    """The validated structured answer, once there is one."""

    def begin_prompt(self) -> None:
        """Restart the per-prompt totals."""
        self.turns, self.api_seconds, self.repairs = 0, 0.0, 0
        self.stop_hook_active, self.structured = False, None
        self.prompt_usage, self.denials = Usage(), []

    def set_rules(self, behavior: Literal["allow", "deny", "ask"], rules: list[str]) -> None:
        """Replace the permission rules of one behaviour (a permission update)."""
        if behavior == "allow":
            self.allowed = list(rules)
        elif behavior == "deny":
            self.disallowed = list(rules)
        else:
            self.ask = list(rules)

    def refused(self, denials: list[dict[str, Any]]) -> None:
        """Tool calls the permission check refused."""
        self.denials += denials

    def remember(self, message: UserMessage | AssistantMessage) -> None:
        """Add a message to the history the model sees next turn."""
        self.history.append(message)

    def use_history(self, history: list[UserMessage | AssistantMessage]) -> None:
        """Replace the history (after compaction, or when a session is resumed)."""
        self.history = history

    def start_session(self, key: SessionKey | None, history: list[UserMessage | AssistantMessage]) -> None:
        """Begin where the session store says: its key (the session id with it) and rebuilt history."""
        if key is not None:
            self.session_key = {name: str(value) for name, value in key.items()}
            self.session_id = key["session_id"]
        self.history = history

    def keep_session_context(self, context: list[str]) -> None:
        """SessionStart hooks' context, for the next prompt."""
        self.session_context = list(context)

    def take_session_context(self) -> list[str]:
        """The SessionStart context not yet sent (once)."""
        context, self.session_context = self.session_context, []
        return context

    def await_answers(self, calls: list[ToolUseBlock]) -> None:
        """Client-side calls the caller must answer before the run goes on."""
        self.pending.update((call.id, call) for call in calls)

    def set_permission_mode(self, mode: str) -> None:
        """The mode for the following tool calls."""
        self.permission_mode = mode

    def add_seconds(self, seconds: float) -> None:
        """Time spent waiting on the model."""
        self.api_seconds += seconds

    def account(self, model: str, usage: Usage | None, cost: float | None) -> None:
        """Count one model turn, its tokens and what they cost."""
        self.turns += 1
        if usage is None:
            return
        self.last_usage = usage
        self.prompt_usage += usage
        self.usage += usage
        entry = self.model_usage.setdefault(model, {})
        for key, value in (
            ("inputTokens", usage.input_tokens),
            ("outputTokens", usage.output_tokens),
            ("cacheReadInputTokens", usage.cache_read_input_tokens),
            ("cacheCreationInputTokens", usage.cache_creation_input_tokens),
        ):
            entry[key] = entry.get(key, 0) + value
        entry["costUSD"] = entry.get("costUSD", 0.0) + (cost or 0.0)
        if cost is not None:
            self.total_cost_usd = (self.total_cost_usd or 0.0) + cost

    def answer(self, tool_use_id: str, block: ToolResultBlock) -> UserMessage | None:
        """Record the answer to a pending client-side call; the message to send once all are answered."""
        del self.pending[tool_use_id]
        self.answers.append(block)
        if self.pending:
            return None
        answers, self.answers = self.answers, []
        return UserMessage(content=list(answers))

    def to_json(self) -> dict[str, Any]:
        """The state as JSON data."""
        return json_adapter(RunState).dump_python(self, mode="json")  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunState:
        """Rebuild a state from `to_json`'s data."""
        return json_adapter(RunState).validate_python(dict(data))


# --- outcomes ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finish:
    """The run ends: with this `ResultMessage` subtype, result text and stop reason."""

    subtype: ResultSubtype
    result: str
    stop_reason: str | None = None
    """``None``: the last assistant message's."""
    structured: Any = None


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run these calls (in order of the turn) and send their results back; ``pending`` are client-side."""

    calls: list[ToolUseBlock | ToolUseError]
    pending: list[ToolUseBlock] = field(default_factory=list)
    """Calls of tools without a handler: the caller answers them (`Client.add_tool_result`)."""


@dataclass(frozen=True, slots=True)
class FollowUp:
    """Send this user message and ask the model again (the prompt, a Stop hook's reason, a schema repair)."""

    message: UserMessage


@dataclass(frozen=True, slots=True)
class Pause:
    """Stop until the caller answers the client-side calls waiting in `RunState.pending`."""

    result: str


Outcome: TypeAlias = Finish | RunTools | FollowUp | Pause
"""What `decide` (and `after_tools`, `turn_limit`) return; the loop matches on it."""


# --- the steps --------------------------------------------------------------------------------------------


def new_state(runtime: Runtime, session_id: str) -> RunState:
    """A conversation's state before its first prompt: its id, and the mode and rules its options set."""
    opts = runtime.options
    return RunState(
        session_id=session_id,
        permission_mode=opts.permission_mode,
        allowed=list(runtime.allowed),
        disallowed=list(runtime.disallowed),
        ask=list(runtime.ask),
    )


def user_message(prompt: str | UserMessage | Mapping[str, Any]) -> UserMessage:
    """A prompt as a `UserMessage` (Claude's streaming-input dicts included)."""
    if isinstance(prompt, UserMessage):
        return prompt
    if isinstance(prompt, str):
        return UserMessage(content=prompt)
    message = prompt.get("message", prompt)  # Claude's streaming input: {"type": "user", "message": {...}}
    uuid = prompt.get("uuid")
    return UserMessage(
        content=message["content"],
        parent_tool_use_id=prompt.get("parent_tool_use_id"),
        uuid=uuid if isinstance(uuid, str) else None,
    )


def final_text(message: AssistantMessage | None) -> str:
    """The text of an assistant message (empty for none)."""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock)) if message else ""


def hook_input(runtime: Runtime, state: RunState, **more: Any) -> dict[str, Any]:
    """The keys every hook input has (session, cwd, permission mode, a subagent's parent), + ``more``."""
    base = {"session_id": state.session_id, "cwd": str(runtime.cwd), "transcript_path": None}
    if runtime.parent_tool_use_id:
        base["parent_tool_use_id"] = runtime.parent_tool_use_id
    return {**base, "permission_mode": state.permission_mode, **more}


def prepare_request(runtime: Runtime, state: RunState) -> ModelRequest:
    """The request for the next model turn: the history, the system prompt, the tools the model may see."""
    opts, output = runtime.options, runtime.output
    native = output is not None and bool(runtime.profile.supports_json_schema)
    notes = [runtime.settings.system_prompt(opts.system_prompt)]
    if state.permission_mode == "plan":  # the model is told why its tool calls will be refused
        notes.append(PLAN_MODE_NOTE)
    if output is not None and not native:
        notes.append(output.instructions())
    if opts.task_budget is not None:
        left = max(opts.task_budget - state.prompt_usage.output_tokens, 0)
        notes.append(
            f"Token budget for this task: {opts.task_budget} output tokens, about {left} left. "
            "Pace your work and finish within it."
        )
    return ModelRequest(
        model=runtime.model,
        messages=list(state.history),
        system="\n\n".join(filter(None, notes)) or None,
        tools=[t.spec for t in runtime.tools.values() if not denied_outright(t.name, state.disallowed)],
        max_tokens=opts.max_tokens,
        temperature=opts.temperature,
        top_p=opts.top_p,
        stop=list(opts.stop) if opts.stop else None,
        tool_choice=opts.tool_choice,
        parallel_tool_calls=opts.parallel_tool_calls,
        output_format=output.request_format() if native and output else None,
        extra_body=dict(opts.extra_body) if opts.extra_body else None,
        timeout=opts.timeout,
        metadata=dict(opts.metadata) if opts.metadata else None,
        thinking=dict(opts.thinking) if opts.thinking else None,
        effort=opts.effort,
        betas=list(opts.betas) if opts.betas else None,
        user=opts.user,
        model_profile=runtime.profile,
    )


async def open_stream(
    provider: Provider, request: ModelRequest, retry: RetryPolicy
) -> tuple[AsyncIterator[ModelEvent], ModelEvent | None]:
    """Start the stream and wait for its first event, retrying under ``retry`` until then (never after)."""

    async def attempt() -> tuple[AsyncIterator[ModelEvent], ModelEvent | None]:
        stream = provider.stream(request).__aiter__()
        try:
            return stream, await stream.__anext__()
        except StopAsyncIteration:
            return stream, None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await close_quietly(stream)
            raise

    return await retry(attempt)


async def model_turn(
    provider: Provider,
    request: ModelRequest,
    *,
    parent_tool_use_id: str | None = None,
    retry: RetryPolicy | None = None,
) -> AssistantMessage:
    """One model turn on its own: ``request`` → the assistant message (its ``usage`` included).

    The in-process loop streams the same way (`open_stream`, then `TurnBuilder`), handing on partial events.

    Raises:
        ProviderError: The endpoint failed, or the stream ended before the turn did.
    """
    from ._retry import NoRetry

    turn = TurnBuilder(partial=False)
    stream: AsyncIterator[ModelEvent] | None = None
    try:
        stream, first = await open_stream(provider, request, retry or NoRetry())
        if first is not None:
            turn.feed(first)
            async for event in stream:
                turn.feed(event)
    except OpenAgentError:
        raise
    except Exception as exc:
        raise ProviderError(f"{type(exc).__name__}: {exc}", provider=request.model) from exc
    finally:
        if stream is not None:
            with anyio.CancelScope(shield=True):
                await close_quietly(stream)
    return turn.message(request.model, parent_tool_use_id)


async def submit(
    runtime: Runtime, state: RunState, prompt: str | UserMessage | Mapping[str, Any], *, first: bool
) -> FollowUp | Finish:
    """The prompt as it goes to the model (a slash command expanded, hooks' context added), or why it
    does not: a hook blocked it, or it names an unknown command. ``first``: the conversation's first prompt
    (SessionStart fires).
    """  # noqa: D205
    if first:
        source = "resume" if runtime.options.resume else "startup"
        started = await run_hooks(
            runtime.hooks, "SessionStart", hook_input(runtime, state, source=source), target=source
        )
        state.keep_session_context(started.additional_context)
    message = user_message(prompt)
    if not isinstance(message.content, str):
        return FollowUp(message)
    text = message.content
    if runtime.settings.commands and text.startswith("/"):
        try:
            text = runtime.settings.expand(text)
        except ValueError as exc:  # an unknown command: say which ones exist
            return Finish("error_during_execution", str(exc))
    submitted = await run_hooks(runtime.hooks, "UserPromptSubmit", hook_input(runtime, state, prompt=text))
    if submitted.is_blocked:
        reason = submitted.block_reason or submitted.stop_reason or "blocked by a hook"
        return Finish("error_during_execution", reason)
    extra = [*state.take_session_context(), *submitted.additional_context]
    if extra or text != message.content:
        return FollowUp(UserMessage(content="\n\n".join([text, *extra]), uuid=message.uuid))
    return FollowUp(message)


def turn_cost(runtime: Runtime, response: AssistantMessage) -> float | None:
    """What a model turn cost: the model profile's prices when it has them, else
    `openagent._prices.cost_of` (registered prices, local endpoints, genai-prices); ``None``: no price.
    """  # noqa: D205
    usage = response.usage
    if usage is None:
        return None
    cost = runtime.profile.cost(usage)
    return cost if cost is not None else cost_of(runtime.provider, runtime.model, usage)


def count_turn(
    runtime: Runtime, state: RunState, response: AssistantMessage, seconds: float, cost: Any = ...
) -> float | None:
    """Count a model turn: its time, its tokens, and what they cost (``cost``, when the caller priced it
    already — a workflow prices it in the activity that ran the turn — else `turn_cost`); the turn's cost.
    """  # noqa: D205
    state.add_seconds(seconds)
    if cost is ...:
        cost = turn_cost(runtime, response)
    state.account(runtime.model, response.usage, cost)
    return cost  # type: ignore[no-any-return]


def tool_results(
    runtime: Runtime,
    state: RunState,
    calls: Sequence[ToolUseBlock | ToolUseError],
    done: Sequence[ToolCallResult | None],
) -> tuple[list[Message], UserMessage | None, bool]:
    """What a turn's tool calls hand back: the messages they emitted, the `UserMessage` with their results
    in call order (a call an interrupt cut off answered as such), and whether one of them ended the turn;
    the calls refused are noted in ``state``.
    """  # noqa: D205
    emitted = [message for result in done if result is not None for message in result.messages]
    state.refused([result.denial for result in done if result is not None and result.denial is not None])
    results = [
        result.result
        if result is not None
        else ToolResultBlock(tool_use_id=call.id, content="interrupted by the user", is_error=True)
        for call, result in zip(calls, done, strict=True)
    ]
    answer = UserMessage(content=results, parent_tool_use_id=runtime.parent_tool_use_id) if results else None
    return emitted, answer, any(result is not None and result.ends_turn for result in done)


def turn_limit(runtime: Runtime, state: RunState, last: AssistantMessage | None) -> Finish | None:
    """`Finish` when the prompt has used its ``max_turns``."""
    limit = runtime.options.max_turns
    if limit is not None and state.turns >= limit:
        return Finish("error_max_turns", final_text(last))
    return None


def _stopped(runtime: Runtime, state: RunState, interrupted: bool) -> Finish | None:
    """Why the run ends whatever the model wants: an interrupt, or the budget."""
    if interrupted:
        return Finish("error_during_execution", "interrupted", "interrupted")
    budget = runtime.options.max_budget_usd
    if budget is not None and (state.total_cost_usd or 0.0) >= budget:
        return Finish("error_max_budget_usd", "")
    return None


async def decide(runtime: Runtime, state: RunState, last: AssistantMessage, *, interrupted: bool) -> Outcome:
    """What follows a model turn: finish, run its tool calls, send a follow-up, or (never here) pause."""
    if (stopped := _stopped(runtime, state, interrupted)) is not None:
        return Finish(stopped.subtype, stopped.result or final_text(last), stopped.stop_reason)
    calls = [b for b in last.content if isinstance(b, ToolUseBlock | ToolUseError)]
    if calls or last.stop_reason == "pause_turn":  # a paused server tool: send the turn back as it is
        pending = [c for c in calls if isinstance(c, ToolUseBlock) and _client_side(runtime, c.name)]
        return RunTools([c for c in calls if c not in pending], pending)
    if follow_up := await _follow_up(runtime, state, last):  # a Stop hook or a schema says "not yet"
        return FollowUp(follow_up)
    failed = state.repairs > runtime.options.max_structured_output_retries
    subtype: ResultSubtype = "error_max_structured_output_retries" if failed else "success"
    return Finish(subtype, final_text(last), structured=state.structured)


def _client_side(runtime: Runtime, name: str) -> bool:
    found = runtime.tools.get(name)
    return found is not None and found.handler is None


async def _follow_up(runtime: Runtime, state: RunState, last: AssistantMessage) -> UserMessage | None:
    """What to tell the model when it wants to stop but may not yet: a Stop hook's reason, or (up to
    ``max_structured_output_retries`` times) why its answer does not match ``output_format``.
    """  # noqa: D205
    stop_input = hook_input(
        runtime, state, stop_hook_active=state.stop_hook_active, last_assistant_message=final_text(last)
    )
    stopping = await run_hooks(runtime.hooks, "Stop", stop_input)
    if stopping.block_reason and stopping.continue_:
        state.stop_hook_active = True
        return UserMessage(content=stopping.block_reason)
    if runtime.output is None:
        return None
    state.structured, problem = runtime.output.parse(final_text(last))
    if problem is None:
        return None
    state.repairs += 1
    if state.repairs > runtime.options.max_structured_output_retries:
        return None
    return UserMessage(
        content=f"Your answer does not match the required JSON schema: {problem}. "
        "Reply with only the corrected JSON."
    )


def after_tools(
    runtime: Runtime, state: RunState, last: AssistantMessage, *, ends_turn: bool, interrupted: bool
) -> Finish | Pause | None:
    """What follows a turn's tool results: an interrupt or the budget end the run; client-side calls
    pause it; a tool that ended the turn finishes it; else ``None``, another model turn.
    """  # noqa: D205
    text = final_text(last)
    if interrupted:
        return Finish("error_during_execution", text, "interrupted")
    if state.pending:
        return Pause(text)
    if ends_turn:
        return Finish("success", text, "tool_use")
    if (stopped := _stopped(runtime, state, False)) is not None:
        return Finish(stopped.subtype, text)
    return None


def result_message(
    outcome: Finish | Pause, state: RunState, started: float, last: AssistantMessage | None
) -> ResultMessage:
    """The `ResultMessage` that closes a prompt's run."""
    if isinstance(outcome, Pause):
        outcome = Finish("success", outcome.result, "tool_use")
    stop_reason = outcome.stop_reason
    return ResultMessage(
        subtype=outcome.subtype,
        duration_ms=int((time.monotonic() - started) * 1000),
        duration_api_ms=int(state.api_seconds * 1000),
        is_error=outcome.subtype != "success",
        num_turns=state.turns,
        session_id=state.session_id,
        total_cost_usd=state.total_cost_usd,
        usage=state.prompt_usage,
        result=outcome.result,
        structured_output=outcome.structured,
        stop_reason=stop_reason or (last.stop_reason if last else None),
        terminal_reason=_terminal_reason(outcome.subtype, stop_reason),
        permission_denials=list(state.denials),
        model_usage={model: dict(used) for model, used in state.model_usage.items()},
        uuid=os.urandom(16).hex(),
    )


_TERMINAL = {
    "error_max_turns": "max_turns",
    "error_max_budget_usd": "max_budget",
    "error_max_structured_output_retries": "structured_output_retries",
}


def _terminal_reason(subtype: str, stop_reason: str | None) -> str:
    if stop_reason in ("interrupted", "tool_use"):
        return "interrupted" if stop_reason == "interrupted" else "tool_pending"
    return _TERMINAL.get(subtype) or ("completed" if subtype == "success" else "error")


async def close_quietly(thing: Any) -> None:
    """``await thing.aclose()`` when it has one; a failure to close never masks the run's own outcome."""
    close = getattr(thing, "aclose", None)
    if close is not None:
        try:
            await close()
        except Exception as exc:
            import logging

            logging.getLogger("openagent.loop").debug("closing %r failed: %s", thing, exc)
