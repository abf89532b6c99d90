"""Permissions: modes, ``allowed_tools`` / ``disallowed_tools`` rules, and the ``can_use_tool`` callback.

Evaluation order (the Claude Agent SDK's): hooks → deny rules → ask rules → mode → allow rules →
``can_use_tool``. A tool marked ``requires_permission`` (Write, Edit, Bash, web tools) that nothing allows
is denied with a message saying how to allow it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "CanUseTool",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "ToolPermissionContext",
    "check_permission",
    "rule_matches",
]

PermissionMode: TypeAlias = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


@dataclass(slots=True)
class PermissionResultAllow:
    """Allow the call, optionally with rewritten input."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[Any] | None = None


@dataclass(slots=True)
class PermissionResultDeny:
    """Deny the call; the model sees ``message``. ``interrupt=True`` also ends the turn."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult: TypeAlias = PermissionResultAllow | PermissionResultDeny


@dataclass(slots=True)
class ToolPermissionContext:
    """What ``can_use_tool`` gets besides the tool name and input."""

    signal: Any = None
    suggestions: list[Any] = field(default_factory=list)
    tool_use_id: str | None = None


CanUseTool: TypeAlias = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


def _specifier_matches(specifier: str, tool_input: dict[str, Any]) -> bool:
    """``Bash(git status:*)`` is a command prefix; ``Write(src/**)`` a path glob; otherwise exact."""
    subject = tool_input.get("command") or tool_input.get("file_path") or tool_input.get("path")
    subject = tool_input.get("url", "") if subject is None else subject
    if not isinstance(subject, str):
        return False
    if specifier.endswith(":*"):
        return subject.startswith(specifier[:-2])
    if any(ch in specifier for ch in "*?["):
        return fnmatch.fnmatchcase(subject, specifier) or fnmatch.fnmatchcase(subject, specifier.rstrip("/*") + "*")
    return subject == specifier


def rule_matches(rule: str, tool_name: str, tool_input: dict[str, Any]) -> bool:
    """Whether a rule in Claude syntax (``Read``, ``Bash(git status:*)``, ``mcp__srv``) covers the call."""
    rule = rule.strip()
    name, paren, rest = rule.partition("(")
    if not paren:
        return rule == tool_name or (rule.startswith("mcp__") and tool_name.startswith(rule + "__"))
    return name == tool_name and rest.endswith(")") and _specifier_matches(rest[:-1], tool_input)


async def check_permission(
    tool_name: str,
    tool_input: dict[str, Any],
    *,
    requires_permission: bool,
    mode: PermissionMode = "default",
    allowed: Sequence[str] = (),
    disallowed: Sequence[str] = (),
    ask: Sequence[str] = (),
    hook_decision: Literal["allow", "deny", "ask"] | None = None,
    hook_reason: str | None = None,
    can_use_tool: CanUseTool | None = None,
    context: ToolPermissionContext | None = None,
) -> PermissionResult:
    """Decide whether one tool call may run, in the documented order."""
    if hook_decision == "deny":
        return PermissionResultDeny(message=hook_reason or f"{tool_name} was denied by a hook")
    if hook_decision == "allow":
        return PermissionResultAllow()
    if any(rule_matches(r, tool_name, tool_input) for r in disallowed):
        return PermissionResultDeny(message=f"{tool_name} is denied by the disallowed_tools rules")
    must_ask = hook_decision == "ask" or any(rule_matches(r, tool_name, tool_input) for r in ask)
    if not must_ask:
        if mode == "plan":
            return PermissionResultDeny(message=f"plan mode: {tool_name} was not run; describe the plan instead")
        if mode == "bypassPermissions" or (mode == "acceptEdits" and tool_name in EDIT_TOOLS):
            return PermissionResultAllow()
        if any(rule_matches(r, tool_name, tool_input) for r in allowed):
            return PermissionResultAllow()
        if not requires_permission:
            return PermissionResultAllow()
    if can_use_tool is not None and mode != "dontAsk":
        return await can_use_tool(tool_name, tool_input, context or ToolPermissionContext())
    return PermissionResultDeny(
        message=f"{tool_name} needs permission: allow it with allowed_tools=[{tool_name!r}], a can_use_tool "
        "callback, or permission_mode='acceptEdits' / 'bypassPermissions'"
    )
