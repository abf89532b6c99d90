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
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, get_args
from urllib.parse import urlsplit

from . import _shell
from ._policy import (
    READ_RULES,
    WRITE_RULES,
    Access,
    glob_regex,
    path_forms,
    path_matches,
    protected_part,
    split_rule,
)

__all__ = [
    "PLAN_MODE_NOTE", "CanUseTool", "PathPolicy", "PermissionMode", "PermissionResult",
    "PermissionResultAllow", "PermissionResultDeny", "PermissionRuleValue", "PermissionState",
    "PermissionUpdate", "ToolPermissionContext", "apply_update", "check_permission", "denied_outright",
    "glob_regex", "rule_matches",
]  # fmt: skip

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


class PermissionState(Protocol):
    """The rules and mode a run has in force (`RunState`), changed only through its own methods."""

    allowed: list[str]
    disallowed: list[str]
    ask: list[str]
    permission_mode: str

    def set_permission_mode(self, mode: str) -> None:
        """Change the mode."""

    def set_rules(self, behavior: Literal["allow", "deny", "ask"], rules: list[str]) -> None:
        """Replace the rules of one behaviour."""


def apply_update(target: PermissionState, update: PermissionUpdate | Mapping[str, Any]) -> None:
    """Apply a `PermissionUpdate` (or its wire form) to a running conversation's rules and mode.

    A malformed update is logged and ignored: it never widens anything by accident.
    """
    try:
        update = update if isinstance(update, PermissionUpdate) else PermissionUpdate.from_dict(update)
    except (KeyError, TypeError, AttributeError) as exc:
        logger.warning("ignored a malformed permission update %r: %s", update, exc)
        return
    lists = {"allow": target.allowed, "deny": target.disallowed, "ask": target.ask}
    if update.type == "setMode" and update.mode in get_args(PermissionMode):
        target.set_permission_mode(str(update.mode))
    elif update.type.endswith("Rules") and update.behavior in lists and update.rules is not None:
        rules = [r.rule for r in update.rules]
        chosen = [] if update.type == "replaceRules" else list(lists[update.behavior])
        if update.type == "removeRules":
            chosen = [r for r in chosen if r not in rules]
        else:
            chosen += [r for r in rules if r not in chosen]
        target.set_rules(update.behavior, chosen)
    else:
        logger.info("permission update %s is not applied by openagent", update.type)


# --- rules ------------------------------------------------------------------------------------------------


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
        return path_matches(specifier, path_forms(path, cwd or Path.cwd())[1])
    subject = next((v for v in tool_input.values() if isinstance(v, str)), None)  # e.g. WebSearch(query)
    return subject is not None and _command_matches(specifier, subject)


def rule_matches(
    rule: str, tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | Path | None = None
) -> bool:
    """Whether a rule in Claude syntax (``Read``, ``Bash(git status:*)``, ``mcp__srv``) covers the call."""
    name, specifier = split_rule(rule)
    if specifier is None:
        if name.startswith("mcp__") and name.count("__") == 1 or name.endswith("__*"):
            return tool_name.startswith(name.removesuffix("*").removesuffix("__") + "__")
        return name in (tool_name, "*")
    if name != tool_name:
        return False
    return specifier in ("", "*") or _specifier_matches(specifier, tool_input, _path(cwd))


def denied_outright(tool_name: str, disallowed: Sequence[str]) -> bool:
    """Whether a bare rule (``"Bash"``, ``"mcp__srv"``) in ``disallowed`` hides the tool from the model."""
    return any("(" not in r and rule_matches(r, tool_name, {}) for r in disallowed)


def _path(cwd: str | Path | None) -> Path | None:
    return None if cwd is None else Path(cwd)


def _bash_specifier(rule: str) -> str | None:
    """A rule's Bash specifier: ``""`` for the whole tool, ``None`` when it is not a Bash rule."""
    name, specifier = split_rule(rule)
    if name in ("Bash", "*") and specifier is None:
        return ""
    return specifier if name == "Bash" else None


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


# --- paths, whatever the tool ---------------------------------------------------------------------------


def _family(access: Access, purpose: Literal["deny", "allow"]) -> frozenset[str]:
    """Rule names that govern an access: reads by ``Read``, writes by ``Edit``/``Write``; an edit reads
    too, so a read deny rule covers it (Edit's "not found" would otherwise reveal the text).
    """  # noqa: D205
    if access == "read":
        return READ_RULES
    return READ_RULES | WRITE_RULES if access == "edit" and purpose == "deny" else WRITE_RULES


def _path_rule(
    rules: Sequence[str], tool_name: str, paths: Sequence[tuple[Access, str]], cwd: Path, purpose: str
) -> str | None:
    """For ``deny``/``ask``: the first rule naming any path the call touches. For ``allow``: a rule
    covering every path (all of them must be covered, by their real location).
    """  # noqa: D205
    if not paths or not rules:
        return None
    wanted: Literal["deny", "allow"] = "allow" if purpose == "allow" else "deny"
    covering: str | None = None
    for access, path in paths:
        real, every = path_forms(path, cwd)
        forms = real if wanted == "allow" else every
        found = next((r for r in rules if _names_path(r, tool_name, access, forms, wanted)), None)
        if wanted == "deny" and found:
            return found
        if wanted == "allow" and not found:
            return None
        covering = covering or found
    return covering


def _names_path(rule: str, tool_name: str, access: Access, forms: list[str], purpose: Any) -> bool:
    name, specifier = split_rule(rule)
    if specifier in (None, "", "*") or (name != tool_name and name not in _family(access, purpose)):
        return False
    return path_matches(specifier, forms)


def _rule_for(
    rules: Sequence[str],
    tool_name: str,
    tool_input: Mapping[str, Any],
    paths: Sequence[tuple[Access, str]],
    cwd: Path | None,
    purpose: Literal["deny", "ask", "allow"],
) -> str | None:
    """The rule deciding a call: for ``deny``/``ask`` the first covering the call or any of its paths; for
    ``allow`` one covering the call, or all of its paths.
    """  # noqa: D205
    base = (cwd or Path()).absolute()
    if purpose != "allow":
        return _denied_by(rules, tool_name, tool_input, cwd) or _path_rule(
            rules, tool_name, paths, base, purpose
        )
    if _allowed_by(rules, tool_name, tool_input, cwd):
        return tool_name
    return _path_rule(rules, tool_name, paths, base, "allow")


def _guarded(
    tool_name: str, paths: Sequence[tuple[Access, str]], allowed: Sequence[str], cwd: Path | None
) -> str | None:
    """Why a write needs an approval: it lands in a protected place that no allow rule names."""
    cwd = (cwd or Path()).absolute()
    for access, path in paths:
        part = protected_part(path, cwd) if access != "read" else None
        if part is None:
            continue
        real = path_forms(path, cwd)[0]
        if any(
            part.lower() in (split_rule(r)[1] or "").lower()
            and _names_path(r, tool_name, access, real, "allow")
            for r in allowed
        ):
            continue
        return (
            f"{path} is in a protected place ({part}: it configures tools that run code or holds "
            f"credentials); writing there needs an allow rule naming it, e.g. Edit({part}/**), or an approval"
        )
    return None


@dataclass(frozen=True, slots=True)
class PathPolicy:
    """The rules a tool asks again at the moment it opens a file or follows a redirect.

    The permission decision is taken on the arguments; a tool checks the path it actually opens (after
    symlinks) with `denied`, drops what search results may not show with `readable`, and asks
    `redirect_refused` for each redirect hop of a web request.
    """

    cwd: Path
    allowed: Sequence[str] = ()
    disallowed: Sequence[str] = ()
    ask: Sequence[str] = ()
    mode: str = "default"

    @classmethod
    def of(cls, context: Any) -> PathPolicy:
        """The policy a `ToolContext` carries, or one made from its options (a tool called directly)."""
        found = getattr(context, "policy", None)
        if isinstance(found, PathPolicy):
            return found
        options = getattr(context, "options", None)
        return cls(
            Path(os.path.abspath(getattr(context, "cwd", None) or ".")),
            allowed=tuple(getattr(options, "allowed_tools", ()) or ()),
            disallowed=tuple(getattr(options, "disallowed_tools", ()) or ()),
            ask=tuple(getattr(options, "ask_tools", ()) or ()),
            mode=getattr(options, "permission_mode", "default") or "default",
        )

    def denied(self, tool_name: str, path: str | os.PathLike[str], access: Access) -> str | None:
        """The deny rule covering this access of ``path``, if any."""
        return _path_rule(self.disallowed, tool_name, [(access, os.fspath(path))], self.cwd, "deny")

    def readable(self, tool_name: str, path: str | os.PathLike[str]) -> bool:
        """Whether a search may show this file: no deny or ask rule covers reading it (nobody can be
        asked about each file of a search).
        """  # noqa: D205
        paths: list[tuple[Access, str]] = [("read", os.fspath(path))]
        return not any(_path_rule(r, tool_name, paths, self.cwd, "deny") for r in (self.disallowed, self.ask))

    def names_host(self, tool_name: str, url: str) -> bool:
        """Whether an allow rule names this URL's host (``WebFetch(domain:localhost)``), as a private or
        loopback address must be named to be fetched.
        """  # noqa: D205
        host = (urlsplit(url).hostname or "").lower()
        return bool(host) and any(
            (spec := split_rule(r))[0] == tool_name and (spec[1] or "").startswith("domain:")
            and rule_matches(r, tool_name, {"url": url})
            for r in self.allowed
        )  # fmt: skip

    def redirect_refused(self, tool_name: str, url: str, first: str) -> str | None:
        """Why a redirect hop to ``url`` may not be followed: a deny or ask rule covers it, or it leaves
        the first URL's host and no rule or mode allows the new one (nobody can be asked mid-request).
        """  # noqa: D205
        call = {"url": url}
        if rule := _denied_by(self.disallowed, tool_name, call, self.cwd):
            return f"the rule {rule!r} in disallowed_tools covers it"
        if rule := _denied_by(self.ask, tool_name, call, self.cwd):
            return f"the ask rule {rule!r} covers it and nobody can be asked during a redirect"
        same = urlsplit(url).hostname == urlsplit(first).hostname
        if same or self.mode == "bypassPermissions" or _allowed_by(self.allowed, tool_name, call, self.cwd):
            return None
        return f"no rule allows {tool_name} on its host; call {tool_name} on that URL to ask for it"


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
    paths: Sequence[tuple[Access, str]] = (),
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
        on_ask: Awaited with a message just before ``can_use_tool`` is asked (the Notification hook).
        paths: What the call reads and writes (`Tool.paths`): ``Read``/``Edit`` rules apply whatever the
            tool; a write to a protected place needs a rule naming it or an approval, even in acceptEdits.
        sandboxed: The call runs in a working OS sandbox that may run it unasked (allowed like a rule).
    """
    where = _path(cwd)
    if refused := _refused(tool_name, tool_input, paths, where, disallowed, mode, hook_decision, hook_reason):
        return refused
    ask_rule = _rule_for(ask, tool_name, tool_input, paths, where, "ask")
    if hook_decision == "ask" or ask_rule:
        why = f"the ask rule {ask_rule!r} matched" if ask_rule else hook_reason or "a hook asked for it"
        return await _ask(tool_name, tool_input, mode, can_use_tool, context, why, on_ask)
    if hook_decision == "allow" or mode == "bypassPermissions":
        return PermissionResultAllow()
    if guard := _guarded(tool_name, paths, allowed, where):
        if can_use_tool is None or mode == "dontAsk":  # nobody to ask: say what would allow it
            return PermissionResultDeny(message=f"{tool_name} was denied: {guard}")
        return await _ask(tool_name, tool_input, mode, can_use_tool, context, guard, on_ask)
    if mode == "acceptEdits" and tool_name in EDIT_TOOLS:
        return PermissionResultAllow()
    if sandboxed or _rule_for(allowed, tool_name, tool_input, paths, where, "allow"):
        return PermissionResultAllow()
    if not requires_permission and mode != "dontAsk":
        return PermissionResultAllow()
    why = f"no rule allows {tool_name}{_bash_note(tool_name, tool_input, denied=False)}"
    return await _ask(tool_name, tool_input, mode, can_use_tool, context, why, on_ask)


def _refused(
    tool_name: str,
    tool_input: dict[str, Any],
    paths: Sequence[tuple[Access, str]],
    where: Path | None,
    disallowed: Sequence[str],
    mode: PermissionMode,
    hook_decision: str | None,
    hook_reason: str | None,
) -> PermissionResultDeny | None:
    """A denial that nothing can overturn: a hook's, a deny rule's, or plan mode's."""
    if hook_decision == "deny":
        return PermissionResultDeny(message=hook_reason or f"{tool_name} was denied by a hook")
    if rule := _rule_for(disallowed, tool_name, tool_input, paths, where, "deny"):
        return PermissionResultDeny(message=_denial(tool_name, tool_input, rule))
    if mode == "plan":
        return PermissionResultDeny(message=f"{tool_name} was not run: plan mode is active. {PLAN_MODE_NOTE}")
    return None


def _modes_allowing(tool_name: str) -> str:
    return "'acceptEdits' / 'bypassPermissions'" if tool_name in EDIT_TOOLS else "'bypassPermissions'"


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
            f"can_use_tool callback, or permission_mode={_modes_allowing(tool_name)}"
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
