"""Permissions: modes, allow / deny / ask rules in Claude syntax, and the ``can_use_tool`` callback.

Evaluation order (the Claude Agent SDK's): hooks → deny rules → ask rules → mode → allow rules →
``can_use_tool``. A hook's ``allow`` skips the question but not the deny and ask rules. A tool marked
``requires_permission`` (Write, Edit, Bash, web tools) that nothing allows is denied with a message saying how
to allow it; ``dontAsk`` denies everything no rule or hook allowed; ``plan`` runs no tool at all.

Rules use the Claude syntax: ``"Read"`` (the whole tool), ``"Bash(git status:*)"`` (a command prefix),
``"Bash(npm run *)"`` (a command pattern), ``"Write(src/**)"`` (a path glob, relative to the run's cwd),
``"WebFetch(domain:example.com)"``, ``"mcp__srv"`` / ``"mcp__srv__*"`` (every tool of an MCP server) and
``"mcp__srv__tool"``.

Bash rules are decided on a real parse of the command (`openagent._shell`, on tree-sitter-bash): an allow
rule covers a command only when it parses completely and every simple command in it is plain words that a
rule covers (``git status && git diff`` needs both allowed; ``$(…)``, expansions, redirections other than to
``/dev/null`` are never covered). A deny or ask rule applies when any command anywhere in it matches —
inside substitutions, subshells, ``bash -c`` strings, behind ``sudo``/``env``/``xargs``, with the name
quoted or path-qualified — and to every command the parser cannot fully understand (fail closed).
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args
from urllib.parse import urlsplit

from . import _shell

__all__ = [
    "PLAN_MODE_NOTE",
    "CanUseTool",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "ToolPermissionContext",
    "apply_update",
    "check_permission",
    "denied_outright",
    "rule_matches",
]

logger = logging.getLogger("openagent.permissions")

PermissionMode: TypeAlias = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
PLAN_MODE_NOTE = (
    "Plan mode is active: no tool will run. Investigate from what you already know and answer with a plan "
    "of the steps and tool calls you would make; the user will switch modes to carry it out."
)
"""Added to the system prompt in plan mode, so the model knows why its tool calls are refused."""


@dataclass(slots=True)
class PermissionRuleValue:
    """One rule of a `PermissionUpdate`: a tool, optionally narrowed (``"npm test"`` for Bash)."""

    tool_name: str
    rule_content: str | None = None

    @property
    def rule(self) -> str:
        """The rule in Claude syntax: ``Bash(npm test)``, or ``Bash`` for the whole tool."""
        return f"{self.tool_name}({self.rule_content})" if self.rule_content else self.tool_name


@dataclass(slots=True)
class PermissionUpdate:
    """A change to the run's permissions, returned with an allow (``updated_permissions``).

    ``addRules`` / ``replaceRules`` / ``removeRules`` change the ``allow``, ``deny`` or ``ask`` rules (by
    ``behavior``); ``setMode`` changes the mode; ``addDirectories`` / ``removeDirectories`` the extra
    directories. openagent applies every update to the running session only, whatever ``destination``
    names: it never writes settings files on a callback's word.
    """

    type: Literal["addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"]
    rules: list[PermissionRuleValue] | None = None
    behavior: Literal["allow", "deny", "ask"] | None = None
    mode: PermissionMode | None = None
    directories: list[str] | None = None
    destination: Literal["userSettings", "projectSettings", "localSettings", "session"] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The wire form (camelCase), as the Claude Agent SDK writes it."""
        out: dict[str, Any] = {"type": self.type, "destination": self.destination or "session"}
        if self.rules is not None:
            out["rules"] = [
                {"toolName": r.tool_name, **({"ruleContent": r.rule_content} if r.rule_content else {})}
                for r in self.rules
            ]
        for key in ("behavior", "mode", "directories"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PermissionUpdate:
        """Read the wire form (`to_dict`'s inverse)."""
        rules = [PermissionRuleValue(r["toolName"], r.get("ruleContent")) for r in data.get("rules") or []]
        return cls(
            type=data["type"],
            rules=rules if data.get("rules") is not None else None,
            behavior=data.get("behavior"),
            mode=data.get("mode"),
            directories=data.get("directories"),
            destination=data.get("destination"),
        )


@dataclass(slots=True)
class PermissionResultAllow:
    """Allow the call, optionally with rewritten input and changes to the session's permissions."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


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
    decision_reason: str | None = None
    """Why the callback is asked (an ask rule or hook matched, or nothing allowed the call)."""
    agent_id: str | None = None
    """The subagent making the call (its ``Task`` call's id), ``None`` for the main agent."""
    blocked_path: str | None = None
    title: str | None = None
    """The question as a sentence ("Use Bash: git push"), for a permission prompt."""
    display_name: str | None = None
    description: str | None = None


CanUseTool: TypeAlias = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


def apply_update(target: Any, update: PermissionUpdate | Mapping[str, Any]) -> None:
    """Apply a `PermissionUpdate` (or its wire form) to a running conversation's rules and mode.

    ``target`` has ``allowed``, ``disallowed`` and ``ask`` rule lists and ``options.permission_mode``. A
    malformed update is logged and ignored: it never widens anything by accident.
    """
    try:
        update = update if isinstance(update, PermissionUpdate) else PermissionUpdate.from_dict(update)
    except (KeyError, TypeError, AttributeError) as exc:
        logger.warning("ignored a malformed permission update %r: %s", update, exc)
        return
    lists = {"allow": target.allowed, "deny": target.disallowed, "ask": target.ask}
    if update.type == "setMode" and update.mode in get_args(PermissionMode):
        target.options.permission_mode = update.mode
    elif update.type.endswith("Rules") and update.behavior in lists and update.rules is not None:
        rules, chosen = [r.rule for r in update.rules], lists[update.behavior]
        if update.type == "replaceRules":
            chosen.clear()
        if update.type == "removeRules":
            chosen[:] = [r for r in chosen if r not in rules]
        else:
            chosen.extend(r for r in rules if r not in chosen)
    else:
        logger.info("permission update %s is not applied by openagent", update.type)


# --- rules ------------------------------------------------------------------------------------------------


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Gitignore-style globs: ``**`` crosses directories, ``*`` and ``?`` stay within one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            ch = pattern[i]
            out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
            i += 1
    return re.compile("".join(out))


def _path_matches(specifier: str, path: str, cwd: Path | None) -> bool:
    base = cwd or Path.cwd()
    target = Path(path).expanduser()
    target = target if target.is_absolute() else base / target
    candidates = {target.as_posix()}
    try:
        candidates.add(target.resolve().relative_to(base.resolve()).as_posix())
    except ValueError:
        pass
    if specifier.startswith("//"):  # Claude syntax: an absolute path
        specifier = specifier[1:]
    elif specifier.startswith("~/"):
        specifier = str(Path(specifier).expanduser())
    else:
        specifier = specifier.removeprefix("./").lstrip("/")
    regex = _glob_regex(specifier)
    return any(regex.fullmatch(c) or regex.fullmatch(c.rstrip("/") + "/") for c in candidates)


def _command_matches(specifier: str, command: str) -> bool:
    if specifier.endswith(":*"):
        prefix = specifier[:-2]
        return command == prefix or command.startswith(prefix + " ")
    if "*" in specifier:
        return re.fullmatch(".*".join(map(re.escape, specifier.split("*"))), command, re.DOTALL) is not None
    return command == specifier


def _specifier_matches(specifier: str, tool_input: Mapping[str, Any], cwd: Path | None) -> bool:
    """``Bash(git status:*)`` is a command prefix; ``Write(src/**)`` a path glob; otherwise exact."""
    if isinstance(command := tool_input.get("command"), str):
        return _shell.allows(command, [specifier])
    if isinstance(url := tool_input.get("url"), str):
        if specifier.startswith("domain:"):
            host, wanted = (urlsplit(url).hostname or "").lower(), specifier[7:].lower()
            return host == wanted or host.endswith("." + wanted)
        return _command_matches(specifier, url)
    path = tool_input.get("file_path") or tool_input.get("path") or tool_input.get("notebook_path")
    if isinstance(path, str):
        return _path_matches(specifier, path, cwd)
    subject = next((v for v in tool_input.values() if isinstance(v, str)), None)  # e.g. WebSearch(query)
    return subject is not None and _command_matches(specifier, subject)


def rule_matches(
    rule: str, tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | Path | None = None
) -> bool:
    """Whether a rule in Claude syntax (``Read``, ``Bash(git status:*)``, ``mcp__srv``) covers the call."""
    rule = rule.strip()
    name, paren, rest = rule.partition("(")
    if not paren:
        if rule.startswith("mcp__") and rule.count("__") == 1 or rule.endswith("__*"):
            return tool_name.startswith(rule.removesuffix("*").removesuffix("__") + "__")
        return rule in (tool_name, "*")
    if name != tool_name or not rest.endswith(")"):
        return False
    specifier = rest[:-1]
    return specifier in ("", "*") or _specifier_matches(specifier, tool_input, _path(cwd))


def denied_outright(tool_name: str, disallowed: Sequence[str]) -> bool:
    """Whether a bare rule (``"Bash"``, ``"mcp__srv"``) in ``disallowed`` hides the tool from the model."""
    return any("(" not in r and rule_matches(r, tool_name, {}) for r in disallowed)


def _path(cwd: str | Path | None) -> Path | None:
    return None if cwd is None else Path(cwd)


def _bash_specifier(rule: str) -> str | None:
    """A rule's Bash specifier: ``""`` for the whole tool, ``None`` when it is not a Bash rule."""
    rule = rule.strip()
    if rule in ("Bash", "*"):
        return ""
    name, paren, rest = rule.partition("(")
    return rest[:-1] if name == "Bash" and paren and rest.endswith(")") else None


def _allowed_by(
    rules: Sequence[str], tool_name: str, tool_input: Mapping[str, Any], cwd: Path | None
) -> bool:
    """An allow rule covers a Bash command only when every simple command in it is plain and covered."""
    command = tool_input.get("command")
    if tool_name != "Bash" or not isinstance(command, str):
        return any(rule_matches(r, tool_name, tool_input, cwd=cwd) for r in rules)
    specifiers = [s for s in map(_bash_specifier, rules) if s is not None]
    if "" in specifiers or "*" in specifiers:
        return True
    return bool(specifiers) and _shell.allows(command, specifiers)


def _denied_by(
    rules: Sequence[str], tool_name: str, tool_input: Mapping[str, Any], cwd: Path | None
) -> str | None:
    """The first rule matching the call (for Bash: any command in it, or any rule if it is not understood)."""
    command = tool_input.get("command")
    if tool_name != "Bash" or not isinstance(command, str):
        return next((r for r in rules if rule_matches(r, tool_name, tool_input, cwd=cwd)), None)
    for rule in rules:
        specifier = _bash_specifier(rule)
        if specifier is not None and _shell.may_match(specifier, command):
            return rule
    return None


def _denial(tool_name: str, tool_input: Mapping[str, Any], rule: str) -> str:
    note = _bash_note(tool_name, tool_input, denied=True)
    return f"{tool_name} is denied by the rule {rule!r} in disallowed_tools{note}"


def _bash_note(tool_name: str, tool_input: Mapping[str, Any], *, denied: bool) -> str:
    """Why a Bash command met a rule the way it did, for the message the model sees."""
    command = tool_input.get("command")
    if tool_name != "Bash" or not isinstance(command, str):
        return ""
    analysis = _shell.analyze(command)
    if denied and analysis.unknown:
        return f" (the command cannot be fully checked: {analysis.unknown}; every Bash deny rule applies)"
    if not denied and analysis.not_plain:
        return f": no allow rule covers a command when {analysis.not_plain}"
    return ""


# --- the decision -----------------------------------------------------------------------------------------


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
    cwd: str | Path | None = None,
    on_ask: Callable[[str], Awaitable[object]] | None = None,
    sandboxed: bool = False,
) -> PermissionResult:
    """Decide whether one tool call may run: hooks → deny rules → ask rules → mode → allow rules → callback.

    Args:
        tool_name: The tool the model called.
        tool_input: Its arguments (after any hook rewrote them).
        requires_permission: The tool changes things (Write, Edit, Bash …) and must be allowed.
        mode: The permission mode.
        allowed: Rules that allow without asking.
        disallowed: Rules that deny, in every mode.
        ask: Rules that always go to ``can_use_tool`` (denied when there is none, or in ``dontAsk``).
        hook_decision: The combined ``permissionDecision`` of the PreToolUse hooks.
        hook_reason: Their ``permissionDecisionReason``.
        can_use_tool: The user's callback for whatever the rules and mode leave open.
        context: Passed to ``can_use_tool``.
        cwd: The run's working directory, against which relative path rules are matched.
        on_ask: Awaited with a message just before ``can_use_tool`` is asked (fires ``Notification``).
        sandboxed: The call runs in a working OS sandbox that may run it unasked (allowed like a rule).
    """
    where = _path(cwd)
    if hook_decision == "deny":
        return PermissionResultDeny(message=hook_reason or f"{tool_name} was denied by a hook")
    if rule := _denied_by(disallowed, tool_name, tool_input, where):
        return PermissionResultDeny(message=_denial(tool_name, tool_input, rule))
    if mode == "plan":
        return PermissionResultDeny(message=f"{tool_name} was not run: plan mode is active. {PLAN_MODE_NOTE}")
    ask_rule = _denied_by(ask, tool_name, tool_input, where)
    if hook_decision == "ask" or ask_rule:
        why = (
            f"the ask rule {ask_rule!r} matched"
            if ask_rule
            else (hook_reason or "a hook asked for confirmation")
        )
        return await _ask(tool_name, tool_input, mode, can_use_tool, context, why, on_ask)
    if hook_decision == "allow" or mode == "bypassPermissions":
        return PermissionResultAllow()
    if mode == "acceptEdits" and tool_name in EDIT_TOOLS:
        return PermissionResultAllow()
    if sandboxed or _allowed_by(allowed, tool_name, tool_input, where):
        return PermissionResultAllow()
    if not requires_permission and mode != "dontAsk":
        return PermissionResultAllow()
    why = f"no rule allows {tool_name}{_bash_note(tool_name, tool_input, denied=False)}"
    return await _ask(tool_name, tool_input, mode, can_use_tool, context, why, on_ask)


async def _ask(
    tool_name: str,
    tool_input: dict[str, Any],
    mode: PermissionMode,
    can_use_tool: CanUseTool | None,
    context: ToolPermissionContext | None,
    why: str,
    on_ask: Callable[[str], Awaitable[object]] | None,
) -> PermissionResult:
    if mode == "dontAsk":
        return PermissionResultDeny(
            message=f"{tool_name} was denied: permission_mode='dontAsk' runs only tools that allowed_tools "
            f"allows ({why}); add a rule such as allowed_tools=[{tool_name!r}]"
        )
    if can_use_tool is None:
        return PermissionResultDeny(
            message=f"{tool_name} needs permission ({why}): allow it with allowed_tools=[{tool_name!r}], a "
            "can_use_tool callback, or permission_mode='acceptEdits' / 'bypassPermissions'"
        )
    context = context or ToolPermissionContext()
    context.decision_reason = context.decision_reason or why
    if on_ask is not None:
        await on_ask(f"openagent needs your permission to use {tool_name}")
    try:
        answer: Any = can_use_tool(tool_name, tool_input, context)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:  # a broken callback must fail closed, and say so
        logger.warning("can_use_tool raised %s: %s", type(exc).__name__, exc, exc_info=True)
        return PermissionResultDeny(
            message=f"{tool_name} was denied: can_use_tool raised {type(exc).__name__}: {exc}"
        )
    return _as_result(tool_name, answer)


def _as_result(tool_name: str, answer: Any) -> PermissionResult:
    """Accept the result classes or their dict form (``{"behavior": "allow", "updatedInput": {...}}``)."""
    if isinstance(answer, PermissionResultAllow | PermissionResultDeny):
        return answer
    if isinstance(answer, Mapping) and answer.get("behavior") == "allow":
        updated = answer.get("updatedInput", answer.get("updated_input"))
        return PermissionResultAllow(updated_input=dict(updated) if isinstance(updated, Mapping) else None)
    if isinstance(answer, Mapping) and answer.get("behavior") == "deny":
        return PermissionResultDeny(
            message=str(answer.get("message", "")), interrupt=bool(answer.get("interrupt"))
        )
    logger.warning("can_use_tool returned %r, not a PermissionResult: denying", answer)
    return PermissionResultDeny(
        message=f"{tool_name} was denied: can_use_tool returned {answer!r}, not PermissionResultAllow/Deny"
    )
