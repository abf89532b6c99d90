"""Run-time hooks with the Claude Agent SDK's semantics: ``{event: [HookMatcher(matcher, hooks)]}``.

A callback is ``async (input_data, tool_use_id, context) -> dict``. The loop calls `run_hooks` at each event
and acts on the combined `HookOutcome`. A hook that raises or times out is logged and skipped, unless its
matcher says ``on_error="block"``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import anyio

__all__ = ["HookCallback", "HookContext", "HookEvent", "HookMatcher", "HookOutcome", "run_hooks"]

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


@dataclass(slots=True)
class HookContext:
    """Passed to every callback; ``signal`` is reserved for cancellation (as in the Claude Agent SDK)."""

    signal: Any = None


HookCallback: TypeAlias = Callable[[dict[str, Any], str | None, HookContext], Awaitable[Mapping[str, Any]]]


@dataclass(slots=True)
class HookMatcher:
    """Callbacks for one event, limited to tool names matching ``matcher`` (a regex; ``None`` = all)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = 60.0
    """Seconds each callback may take."""
    on_error: Literal["skip", "block"] = "skip"
    """What a callback that raises or times out does: logged and skipped, or blocks the action."""

    def matches(self, target: str | None) -> bool:
        """Whether this matcher applies to ``target`` (a tool name, or None for events without one)."""
        if self.matcher is None or self.matcher in ("", "*") or target is None:
            return True
        return re.fullmatch(self.matcher, target) is not None


@dataclass(slots=True)
class HookOutcome:
    """What the callbacks of one event decided, combined (a deny beats an ask beats an allow)."""

    continue_: bool = True
    stop_reason: str | None = None
    block_reason: str | None = None
    """Set when a callback answered ``decision: "block"`` (or failed with ``on_error="block"``)."""
    system_messages: list[str] = field(default_factory=list)
    permission_decision: Literal["allow", "deny", "ask"] | None = None
    permission_decision_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: list[str] = field(default_factory=list)
    updated_output: Any = None
    has_updated_output: bool = False

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
        rank = {None: 0, "allow": 1, "ask": 2, "deny": 3}
        if decision in ("allow", "ask", "deny") and rank[decision] >= rank[self.permission_decision]:
            self.permission_decision = decision
            self.permission_decision_reason = specific.get("permissionDecisionReason")
        if "updatedInput" in specific:
            self.updated_input = specific["updatedInput"]
        if context := specific.get("additionalContext"):
            self.additional_context.append(str(context))
        if "updatedToolOutput" in specific:
            self.updated_output = specific["updatedToolOutput"]
            self.has_updated_output = True


async def run_hooks(
    hooks: Mapping[str, Sequence[HookMatcher]] | None,
    event: HookEvent,
    input_data: dict[str, Any],
    *,
    tool_use_id: str | None = None,
    target: str | None = None,
) -> HookOutcome:
    """Run the callbacks registered for ``event`` whose matcher fits ``target``, in order."""
    outcome = HookOutcome()
    if not hooks:
        return outcome
    data = {"hook_event_name": event, **input_data}
    for matcher in hooks.get(event, ()):
        if not matcher.matches(target):
            continue
        for callback in matcher.hooks:
            try:
                with anyio.fail_after(matcher.timeout):
                    output = await callback(data, tool_use_id, HookContext())
            except Exception as exc:  # a broken hook is the user's bug, not a reason to lose the run
                kind = "timed out" if isinstance(exc, TimeoutError) else f"raised {type(exc).__name__}: {exc}"
                logger.warning("%s hook %r %s", event, getattr(callback, "__name__", callback), kind)
                if matcher.on_error == "block":
                    outcome.block_reason = f"{event} hook {kind}"
                continue
            if output:
                outcome.absorb(output)
    return outcome
