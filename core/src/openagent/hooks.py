"""Run-time hooks with the Claude Agent SDK's semantics: ``{event: [HookMatcher(matcher, hooks)]}``.

A callback is ``async (input_data, tool_use_id, context) -> dict``. The loop calls `run_hooks` at each event
and acts on the combined `HookOutcome`. Callbacks run one after another in registration order; a hook that
raises, times out or returns something other than a dict is logged and skipped, unless its matcher says
``on_error="block"`` (ignored for ``Stop``/``SubagentStop``, where blocking means "keep going").

Every input carries ``hook_event_name``, ``session_id``, ``cwd``, ``transcript_path`` and
``permission_mode``, plus per event:

==================== ===========================================================================
PreToolUse           ``tool_name``, ``tool_input``, ``tool_use_id``
PostToolUse          ``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``
PostToolUseFailure   ``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``, ``error``
UserPromptSubmit     ``prompt``
Stop / SubagentStop  ``stop_hook_active``, ``last_assistant_message`` (SubagentStop: ``agent_id``,
                     ``agent_type``, ``agent_transcript_path``)
SubagentStart        ``agent_id``, ``agent_type``
PreCompact           ``trigger`` (``manual`` / ``auto``), ``custom_instructions``
SessionStart         ``source`` (``startup`` / ``resume``)
SessionEnd           ``reason``
Notification         ``message``, ``notification_type``, ``title``
PreModelRequest      ``request`` (the `ModelRequest` about to be sent)
PostModelResponse    ``response`` (the `AssistantMessage` received)
==================== ===========================================================================

Outputs honoured: ``continue_``/``continue`` + ``stopReason``, ``decision: "block"`` + ``reason``,
``systemMessage``, and in ``hookSpecificOutput``: ``permissionDecision`` (allow / deny / ask),
``permissionDecisionReason``, ``updatedInput``, ``additionalContext``, ``updatedToolOutput``, and for model
I/O ``updatedRequest`` (a `ModelRequest`) / ``updatedResponse`` (an `AssistantMessage`).
"""

from __future__ import annotations

import inspect
import logging
import re
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, get_args

import anyio

from .errors import ConfigError

__all__ = [
    "HOOK_EVENTS",
    "HookCallback",
    "HookContext",
    "HookEvent",
    "HookMatcher",
    "HookOutcome",
    "merge_hooks",
    "observe_hooks",
    "run_hooks",
]

logger = logging.getLogger("openagent.hooks")

HookEvent: TypeAlias = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PreModelRequest",
    "PostModelResponse",
]
HOOK_EVENTS: frozenset[str] = frozenset(get_args(HookEvent))
"""Every event name a hook can be registered for."""

_STOP_EVENTS = frozenset({"Stop", "SubagentStop"})


@dataclass(slots=True)
class HookContext:
    """Passed to every callback; ``signal`` is reserved for cancellation (as in the Claude Agent SDK)."""

    signal: Any = None


HookCallback: TypeAlias = Callable[[dict[str, Any], str | None, HookContext], Awaitable[Mapping[str, Any]]]


@dataclass(slots=True)
class HookMatcher:
    """Callbacks for one event, limited to tool names matching ``matcher`` (a regex; ``None`` = all).

    Raises:
        ConfigError: When ``matcher`` is not a valid regular expression.
    """

    matcher: str | None = None
    """A regex matched against the whole tool name (``"Write|Edit"``, ``"mcp__.*"``); ``None``: all."""
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = 60.0
    """Seconds each callback may take; ``None`` means no limit."""
    on_error: Literal["skip", "block"] = "skip"
    """What a callback that raises or times out does: logged and skipped, or blocks the action."""
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._pattern = None  # set here too: a subclass's generated __init__ leaves the slot empty
        if self.matcher in (None, "", "*"):
            return
        try:
            self._pattern = re.compile(self.matcher)
        except re.error as exc:
            raise ConfigError(f"HookMatcher(matcher={self.matcher!r}) is not a valid regex: {exc}") from None

    def matches(self, target: str | None) -> bool:
        """Whether this matcher applies to ``target`` (a tool name, or None for events without one)."""
        if self._pattern is None or target is None:
            return True
        return self._pattern.fullmatch(target) is not None


@dataclass(slots=True)
class HookOutcome:
    """What the callbacks of one event decided, combined (a deny beats an ask beats an allow)."""

    continue_: bool = True
    stop_reason: str | None = None
    block_reason: str | None = None
    """Set when a callback answered ``decision: "block"`` (or failed with ``on_error="block"``)."""
    system_messages: list[str] = field(default_factory=list)
    """``systemMessage`` texts, for the user (logged, and shown by the loop)."""
    permission_decision: Literal["allow", "deny", "ask"] | None = None
    permission_decision_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: list[str] = field(default_factory=list)
    updated_output: Any = None
    has_updated_output: bool = False
    updated_request: Any = None
    """A replacement `ModelRequest` (PreModelRequest)."""
    updated_response: Any = None
    """A replacement `AssistantMessage` (PostModelResponse)."""
    updated_permissions: list[Any] = field(default_factory=list)
    """Permission changes an allowing PreToolUse hook asked for (``updatedPermissions``)."""

    @property
    def is_blocked(self) -> bool:
        """A callback blocked the action (or asked to stop)."""
        return self.block_reason is not None or not self.continue_

    def absorb(self, output: Mapping[str, Any]) -> None:
        """Fold one callback's output dict into the outcome."""
        if output.get("continue_", output.get("continue", True)) is False:
            self.continue_ = False
            self.stop_reason = output.get("stopReason") or self.stop_reason
        if output.get("decision") == "block":
            self.block_reason = output.get("reason") or "blocked by a hook"
        if message := output.get("systemMessage"):
            self.system_messages.append(str(message))
        if context := output.get("additionalContext"):
            self.additional_context.append(str(context))
        specific = output.get("hookSpecificOutput") or {}
        decision = specific.get("permissionDecision")
        if decision is None and output.get("decision") == "approve":  # the deprecated PreToolUse form
            decision = "allow"
        rank = {None: 0, "allow": 1, "ask": 2, "deny": 3}
        if decision in ("allow", "ask", "deny") and rank[decision] >= rank[self.permission_decision]:
            self.permission_decision = decision
            reason = specific.get("permissionDecisionReason") or output.get("reason")
            self.permission_decision_reason = reason or self.permission_decision_reason
        if isinstance(specific.get("updatedInput"), Mapping):
            self.updated_input = dict(specific["updatedInput"])
        if context := specific.get("additionalContext"):
            self.additional_context.append(str(context))
        self._replacements(specific)

    def _replacements(self, specific: Mapping[str, Any]) -> None:
        """What a callback replaces: the tool output, the model request or response, the permissions."""
        if "updatedToolOutput" in specific:
            self.updated_output = specific["updatedToolOutput"]
            self.has_updated_output = True
        if specific.get("updatedRequest") is not None:
            self.updated_request = specific["updatedRequest"]
        if specific.get("updatedResponse") is not None:
            self.updated_response = specific["updatedResponse"]
        if isinstance(specific.get("updatedPermissions"), list):
            self.updated_permissions += specific["updatedPermissions"]


def merge_hooks(*sources: Mapping[str, Sequence[HookMatcher]] | None) -> dict[str, list[HookMatcher]]:
    """Combine hook tables (plugins' first, then the options'), checking event names and entries.

    Raises:
        ConfigError: For an unknown event name (with the known ones) or an entry that is not a `HookMatcher`.
    """
    merged: dict[str, list[HookMatcher]] = {}
    for source in sources:
        for event, matchers in (source or {}).items():
            if event not in HOOK_EVENTS:
                known = ", ".join(sorted(HOOK_EVENTS))
                raise ConfigError(f"unknown hook event {event!r}; known events: {known}")
            items: Iterable[Any] = [matchers] if isinstance(matchers, HookMatcher) else matchers
            for matcher in items:
                if not isinstance(matcher, HookMatcher):
                    raise ConfigError(f"hooks[{event!r}] must hold HookMatcher objects, not {matcher!r}")
                merged.setdefault(event, []).append(matcher)
    return merged


def observe_hooks(
    hooks: Mapping[str, Sequence[HookMatcher]], report: Callable[[str, dict[str, Any]], None]
) -> dict[str, list[HookMatcher]]:
    """The same hooks, each callback wrapped to ``report("hook_started" | "hook_response", data)``.

    ``data`` has ``hook_id``, ``hook_name`` and ``hook_event``; a response adds ``output`` (what the callback
    returned, or its error), ``outcome`` (``success`` / ``error``) and ``exit_code`` (0 / 1).
    """
    return {
        event: [
            replace(m, hooks=[_observed(event, callback, report) for callback in m.hooks]) for m in matchers
        ]
        for event, matchers in hooks.items()
    }


def _observed(
    event: str, callback: HookCallback, report: Callable[[str, dict[str, Any]], None]
) -> HookCallback:
    async def observed(
        data: dict[str, Any], tool_use_id: str | None, context: HookContext
    ) -> Mapping[str, Any]:
        about = {
            "hook_id": uuid.uuid4().hex,
            "hook_name": getattr(callback, "__name__", "hook"),
            "hook_event": event,
        }
        report("hook_started", about)
        try:
            output: Any = callback(data, tool_use_id, context)
            if inspect.isawaitable(output):
                output = await output
        except Exception as exc:
            report(
                "hook_response",
                {**about, "output": f"{type(exc).__name__}: {exc}", "outcome": "error", "exit_code": 1},
            )
            raise
        report("hook_response", {**about, "output": output, "outcome": "success", "exit_code": 0})
        return output  # type: ignore[no-any-return]

    return observed


async def run_hooks(
    hooks: Mapping[str, Sequence[HookMatcher]] | None,
    event: HookEvent,
    input_data: dict[str, Any],
    *,
    tool_use_id: str | None = None,
    target: str | None = None,
) -> HookOutcome:
    """Run the callbacks registered for ``event`` whose matcher fits ``target``, in order.

    A later callback sees the ``tool_input`` an earlier one rewrote with ``updatedInput``.
    """
    outcome = HookOutcome()
    if not hooks:
        return outcome
    data = {"hook_event_name": event, **input_data}
    for matcher in hooks.get(event, ()):
        if not matcher.matches(target):
            continue
        for callback in matcher.hooks:
            output = await _call(matcher, callback, event, data, tool_use_id, outcome)
            if output is None:
                continue
            outcome.absorb(output)
            if outcome.updated_input is not None and "tool_input" in data:
                data["tool_input"] = outcome.updated_input
    for message in outcome.system_messages:
        logger.info("%s hook says: %s", event, message)
    return outcome


async def _call(
    matcher: HookMatcher,
    callback: HookCallback,
    event: str,
    data: dict[str, Any],
    tool_use_id: str | None,
    outcome: HookOutcome,
) -> Mapping[str, Any] | None:
    """One callback under its timeout; failures are logged and skipped, or block (``on_error="block"``)."""
    name = getattr(callback, "__name__", repr(callback))
    try:
        with anyio.fail_after(matcher.timeout):
            output: Any = callback(data, tool_use_id, HookContext())
            if inspect.isawaitable(output):
                output = await output
        if output is None or isinstance(output, Mapping):
            return output
        problem = f"returned {type(output).__name__}, not a dict"
    except TimeoutError:
        problem = f"timed out after {matcher.timeout} s"
    except Exception as exc:  # a broken hook is the user's bug, not a reason to lose the run
        problem = f"raised {type(exc).__name__}: {exc}"
    logger.warning("%s hook %s %s", event, name, problem)
    if matcher.on_error == "block" and event not in _STOP_EVENTS:
        outcome.block_reason = f"{event} hook {name} {problem}"
    return None
