"""`ClaudeAgentOptions`, the SDK's `AgentDefinition`, and `to_agent_options`: the one mapping onto openagent.

Every field keeps the SDK's name and default. The ones that only mean something to the Claude Code CLI
process (`CLI_ONLY`) are accepted and ignored with an `IgnoredOptionWarning`; everything else maps onto an
`openagent.AgentOptions` field (docs/porting.md has the table).
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._hooks import HookMatcher
from ..._options import AgentOptions
from ..._permissions import PermissionResultDeny, ToolPermissionContext, rule_matches

__all__ = ["CLI_ONLY", "AgentDefinition", "ClaudeAgentOptions", "IgnoredOptionWarning", "to_agent_options"]

logger = logging.getLogger("openagent.compat")

CLI_ONLY = ("cli_path", "extra_args", "max_buffer_size", "plugins", "resume_drops_turn", "client_app")
"""Fields that configure the Claude Code CLI process itself: accepted, ignored, warned about."""
NOT_YET = ("permission_prompt_tool_name",)
"""Fields openagent will honour but does not yet (permission prompts through an MCP tool): accepted,
ignored, warned about."""
ALL_SOURCES = ("user", "project", "local")


class IgnoredOptionWarning(UserWarning):
    """A `ClaudeAgentOptions` field that only the Claude Code CLI understands was set; it has no effect."""


@dataclass
class AgentDefinition:
    """A subagent, with the SDK's (camelCase) fields; ``model`` aliases mean "the parent's model"."""

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None
    model: str | None = None
    skills: list[str] | None = None
    memory: str | None = None
    mcpServers: list[Any] | None = None
    initialPrompt: str | None = None
    maxTurns: int | None = None
    background: bool | None = None
    effort: Any = None
    permissionMode: str | None = None


@dataclass
class ClaudeAgentOptions:
    """The SDK's options, field for field; `to_agent_options` turns them into `AgentOptions`."""

    tools: Any = None
    allowed_tools: list[str] = field(default_factory=list)
    system_prompt: Any = None
    mcp_servers: Any = field(default_factory=dict)
    strict_mcp_config: bool = False
    permission_mode: Any = None
    continue_conversation: bool = False
    resume: str | None = None
    session_id: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    fallback_model: str | None = None
    betas: list[str] = field(default_factory=list)
    permission_prompt_tool_name: str | None = None
    cwd: str | Path | None = None
    cli_path: str | Path | None = None
    settings: str | None = None
    add_dirs: list[str | Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    extra_args: dict[str, str | None] = field(default_factory=dict)
    max_buffer_size: int | None = None
    debug_stderr: Any = None
    stderr: Callable[[str], None] | None = None
    can_use_tool: Any = None
    hooks: Any = None
    user: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False
    verbatim_prompts: bool = False
    fork_session: bool = False
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    agents: Any = None
    setting_sources: list[str] | None = None
    skills: Any = None
    sandbox: Any = None
    plugins: list[Any] = field(default_factory=list)
    max_thinking_tokens: int | None = None
    thinking: Any = None
    effort: str | None = None
    output_format: dict[str, Any] | None = None
    enable_file_checkpointing: bool = False
    session_store: Any = None
    session_store_flush: str = "batched"
    load_timeout_ms: int = 60_000
    task_budget: Any = None
    client_app: str | None = None


_ASK_FREE = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite", "Task", "Skill"})
"""Tools the Claude Code CLI runs without asking ``can_use_tool`` (read-only, or delegation)."""


def _system_prompt(value: Any) -> str | None:
    if not isinstance(value, Mapping):
        return value  # type: ignore[no-any-return]
    if value.get("type") == "file":
        return Path(value["path"]).read_text()
    return value.get("prompt") or value.get("append")  # the claude_code preset: only the appended text


def _model(value: str | None) -> str | None:
    """``provider:model`` is kept; a Claude model name yields to ``$OPENAGENT_MODEL``, else Anthropic's."""
    if value is None or ":" in value or os.environ.get("OPENAGENT_MODEL"):
        return value if value and ":" in value else None
    return f"anthropic:{value}"


def _ask_hook(can_use_tool: Any, options: ClaudeAgentOptions) -> Any:
    """Claude asks ``can_use_tool`` for every tool no rule or mode allows; openagent only for guarded ones."""

    async def ask(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        name, tool_input = data["tool_name"], data.get("tool_input") or {}
        mode = options.permission_mode or "default"
        if name in _ASK_FREE or mode in ("bypassPermissions", "plan", "dontAsk"):
            return {}
        if mode == "acceptEdits" and name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
            return {}
        rules = [*options.allowed_tools, *options.disallowed_tools]
        if any(rule_matches(rule, name, tool_input, cwd=options.cwd) for rule in rules):
            return {}
        context = ToolPermissionContext(tool_use_id=tool_use_id, agent_id=data.get("parent_tool_use_id"))
        decision = await can_use_tool(name, tool_input, context)
        if isinstance(decision, PermissionResultDeny):
            out = {"permissionDecision": "deny", "permissionDecisionReason": decision.message or "denied"}
            return {"hookSpecificOutput": out, **({"continue_": False} if decision.interrupt else {})}
        allow: dict[str, Any] = {"permissionDecision": "allow"}
        if decision.updated_input is not None:
            allow["updatedInput"] = decision.updated_input
        if getattr(decision, "updated_permissions", None):
            allow["updatedPermissions"] = list(decision.updated_permissions)
        return {"hookSpecificOutput": allow}

    return ask


def _tools(value: Any) -> list[Any]:
    """``None`` (Claude's default) and the ``claude_code`` preset: every installed tool; else those named."""
    from ..._plugins import registry

    installed = registry().tools
    if value is None or isinstance(value, Mapping):
        return list(installed.values())
    missing = [name for name in value if isinstance(name, str) and name not in installed]
    if missing:
        logger.warning("tools not installed (pip install 'openagent[tools]'): %s", ", ".join(missing))
    return [item for item in value if not isinstance(item, str) or item in installed]


def _read_settings(value: str | None, cwd: Any) -> dict[str, Any]:
    """The ``settings`` option: inline JSON or the path of a JSON file (relative to ``cwd``)."""
    if not value:
        return {}
    text = value.strip()
    if not text.startswith("{"):
        path = Path(text).expanduser()
        path = path if path.is_absolute() else Path(cwd or ".") / path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"settings file {path} cannot be read: {exc}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"settings is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError("settings must be a JSON object")
    return data


def _mcp_servers(value: Any) -> Mapping[str, Any] | None:
    """A dict of servers, or a JSON string / path of an MCP config file (``{"mcpServers": {...}}``)."""
    if isinstance(value, str | Path):
        text = str(value).strip()
        data = json.loads(text if text.startswith("{") else Path(text).read_text(encoding="utf-8"))
        value = data.get("mcpServers", data) if isinstance(data, dict) else None
    return value or None


def _thinking(options: ClaudeAgentOptions, env: Mapping[str, str]) -> Mapping[str, Any] | None:
    """``thinking`` wins; the deprecated ``max_thinking_tokens`` (or ``$MAX_THINKING_TOKENS``) is a budget."""
    if options.thinking is not None:
        return options.thinking  # type: ignore[no-any-return]
    budget = options.max_thinking_tokens
    if budget is None and str(env.get("MAX_THINKING_TOKENS", "")).isdigit():
        budget = int(env["MAX_THINKING_TOKENS"])
    if budget is None:
        return None
    return {"type": "disabled"} if budget == 0 else {"type": "enabled", "budget_tokens": budget}


def _warn_cli_only(options: ClaudeAgentOptions) -> None:
    for name in (*CLI_ONLY, *NOT_YET):
        if getattr(options, name) not in (None, False, [], {}, ()):
            warnings.warn(f"ClaudeAgentOptions.{name} has no effect in openagent", IgnoredOptionWarning, 3)
    if options.permission_mode == "auto":
        warnings.warn(
            "permission_mode='auto' (Claude's model classifier) is 'default' in openagent",
            IgnoredOptionWarning,
            3,
        )
    if options.permission_prompt_tool_name and options.can_use_tool is not None:
        raise ValueError("can_use_tool cannot be used with permission_prompt_tool_name; use one or the other")


def _hooks(options: ClaudeAgentOptions) -> dict[str, list[HookMatcher]] | None:
    hooks = {event: list(matchers) for event, matchers in (options.hooks or {}).items()}
    if options.can_use_tool is not None:
        ask = _ask_hook(options.can_use_tool, options)
        hooks.setdefault("PreToolUse", []).insert(0, HookMatcher(hooks=[ask], timeout=None))
    return hooks or None


def _permissions(options: ClaudeAgentOptions, settings: Mapping[str, Any]) -> dict[str, Any]:
    rules = settings.get("permissions") or {}
    mode = options.permission_mode or rules.get("defaultMode") or "default"
    return {
        "allowed_tools": [*options.allowed_tools, *rules.get("allow", [])],
        "disallowed_tools": [*options.disallowed_tools, *rules.get("deny", [])],
        "ask_tools": list(rules.get("ask", [])),
        "permission_mode": "default" if mode == "auto" else mode,
        "add_dirs": [*options.add_dirs, *rules.get("additionalDirectories", [])],
    }


def _sessions(options: ClaudeAgentOptions) -> dict[str, Any]:
    return {
        "continue_conversation": options.continue_conversation,
        "resume": options.resume,
        "session_id": options.session_id,
        "fork_session": options.fork_session,
        "resume_session_at": options.resume_session_at,
        "session_store": options.session_store,
        "session_load_timeout": max(options.load_timeout_ms, 0) / 1000,
    }


def to_agent_options(options: Any = None) -> AgentOptions:
    """`AgentOptions` from `ClaudeAgentOptions` (``None`` is ``ClaudeAgentOptions()``)."""
    if isinstance(options, AgentOptions):
        return options
    options = options if options is not None else ClaudeAgentOptions()
    _warn_cli_only(options)
    settings = _read_settings(options.settings, options.cwd)
    env = {**(settings.get("env") or {}), **(options.env or {})}
    sources = ALL_SOURCES if options.setting_sources is None else tuple(options.setting_sources)
    skills = options.skills
    return AgentOptions(
        model=_model(options.model or settings.get("model") or env.get("ANTHROPIC_MODEL")),
        fallback_model=_model(options.fallback_model),
        system_prompt=_system_prompt(options.system_prompt),
        tools=_tools(options.tools),
        max_turns=options.max_turns,
        max_budget_usd=options.max_budget_usd,
        hooks=_hooks(options),
        include_partial_messages=options.include_partial_messages,
        include_hook_events=options.include_hook_events,
        forward_subagent_text=options.forward_subagent_text,
        cwd=options.cwd,
        env=env,
        mcp_servers=_mcp_servers(options.mcp_servers),
        agents=options.agents or None,
        output_format=options.output_format,
        setting_sources=sources if skills is None or "project" in sources else (*sources, "project"),
        skills="all" if skills is None else skills,
        trust_project=options.setting_sources is not None,  # Claude's implicit default is not an opt-in
        thinking=_thinking(options, env),
        effort=options.effort,
        betas=list(options.betas),
        user=options.user,
        task_budget=(options.task_budget or {}).get("total"),
        enable_file_checkpointing=options.enable_file_checkpointing,
        sandbox=options.sandbox if options.sandbox is not None else settings.get("sandbox"),
        **_permissions(options, settings),
        **_sessions(options),
    )
