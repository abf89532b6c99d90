"""The Claude Agent SDK's public names over openagent's objects: port a program by changing its imports.

``from claude_agent_sdk import query, ClaudeAgentOptions`` becomes ``from openagent.compat.claude import
…``; the model comes from ``$OPENAGENT_MODEL`` (and ``$OPENAGENT_BASE_URL``) unless ``model`` names one as
``"provider:model"``. Options that only make sense with the Claude Code CLI (``cli_path``, ``settings``,
``extra_args``, ``betas``, ``plugins`` …, see `IGNORED`) are accepted and ignored with an
`IgnoredOptionWarning`. See docs/porting.md.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import AsyncIterable, Callable, Mapping
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import Any

from ..client import Client
from ..errors import ConfigError, OpenAgentError, ProviderConnectionError, ProviderError, StreamError
from ..hooks import HookContext, HookMatcher
from ..options import AgentOptions
from ..permissions import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext, rule_matches
from ..query import query as _query
from ..tools import Tool, create_sdk_mcp_server
from ..tools import tool as _tool
from ..types import (
    AssistantMessage,
    ContentBlock,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = [
    "IGNORED", "AgentDefinition", "AssistantMessage", "CLIConnectionError", "CLIJSONDecodeError",
    "CLINotFoundError", "ClaudeAgentOptions", "ClaudeSDKClient", "ClaudeSDKError", "ContentBlock",
    "HookContext", "HookMatcher", "IgnoredOptionWarning", "Message", "PermissionResultAllow",
    "PermissionResultDeny", "ProcessError", "ResultMessage", "StreamEvent", "SystemMessage", "TextBlock",
    "ThinkingBlock", "ToolPermissionContext", "ToolResultBlock", "ToolUseBlock", "UserMessage",
    "create_sdk_mcp_server", "query", "tool",
]  # fmt: skip

ClaudeSDKError = OpenAgentError
CLIConnectionError = ProviderConnectionError
CLINotFoundError = ConfigError  # no CLI to find: raised when no model is configured
ProcessError = ProviderError
CLIJSONDecodeError = StreamError


class IgnoredOptionWarning(UserWarning):
    """A `ClaudeAgentOptions` field that only the Claude Code CLI understands was set; it has no effect."""


_MAPPED: dict[str, Any] = {
    "tools": None, "allowed_tools": (), "system_prompt": None, "mcp_servers": None, "permission_mode": None,
    "continue_conversation": False, "resume": None, "session_id": None, "max_turns": None,
    "max_budget_usd": None, "disallowed_tools": (), "model": None, "cwd": None, "add_dirs": (), "env": None,
    "can_use_tool": None, "hooks": None, "include_partial_messages": False, "fork_session": False,
    "agents": None, "output_format": None, "session_store": None, "sandbox": None,
}  # fmt: skip
IGNORED = (
    "strict_mcp_config", "fallback_model", "betas", "permission_prompt_tool_name", "cli_path", "settings",
    "extra_args", "max_buffer_size", "debug_stderr", "stderr", "user", "include_hook_events",
    "forward_subagent_text", "verbatim_prompts", "resume_session_at", "resume_drops_turn", "setting_sources",
    "skills", "plugins", "max_thinking_tokens", "thinking", "effort", "enable_file_checkpointing",
    "session_store_flush", "load_timeout_ms", "task_budget", "client_app",
)  # fmt: skip
"""Fields accepted for source compatibility that have no effect without the Claude Code CLI."""

ClaudeAgentOptions = make_dataclass(
    "ClaudeAgentOptions",
    [(name, Any, field(default=default)) for name, default in _MAPPED.items()]
    + [(name, Any, field(default=None)) for name in IGNORED],
    kw_only=True,
    namespace={
        "__doc__": "The Claude Agent SDK's options; `to_agent_options` turns them into `AgentOptions`."
    },
)

_NO_TRANSPORT = "custom transports drive the Claude Code CLI; openagent talks to models directly"
_ASK_FREE = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite", "Task"})
"""Tools the Claude Code CLI runs without asking ``can_use_tool`` (read-only, or delegation)."""


@dataclass
class AgentDefinition:
    """A subagent, with the Claude Agent SDK's (camelCase) fields; ``model`` aliases mean "inherit"."""

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None
    model: str | None = None
    maxTurns: int | None = None
    skills: list[str] | None = None
    """This and the fields below are accepted and have no effect."""
    memory: str | None = None
    mcpServers: list[Any] | None = None
    initialPrompt: str | None = None
    background: bool | None = None
    effort: Any = None
    permissionMode: str | None = None


def tool(
    name: str, description: str, input_schema: Any, annotations: Any = None
) -> Callable[[Callable[..., Any]], Tool]:
    """``@tool(name, description, {"param": type})`` over ``async def handler(args) -> {"content": …}``."""
    read_only = bool(getattr(annotations, "readOnlyHint", False))
    return _tool(name, description, input_schema, is_read_only=read_only)


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


def _ask_hook(can_use_tool: Any, options: Any) -> Any:
    """Claude asks ``can_use_tool`` for every tool no rule or mode allows; openagent only for guarded ones."""

    async def ask(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        name, tool_input = data["tool_name"], data.get("tool_input") or {}
        mode = options.permission_mode or "default"
        if name in _ASK_FREE or mode in ("bypassPermissions", "plan", "dontAsk"):
            return {}
        rules = [*options.allowed_tools, *options.disallowed_tools]
        if any(rule_matches(rule, name, tool_input) for rule in rules):
            return {}
        decision = await can_use_tool(name, tool_input, ToolPermissionContext(tool_use_id=tool_use_id))
        if isinstance(decision, PermissionResultDeny):
            out = {"permissionDecision": "deny", "permissionDecisionReason": decision.message or "denied"}
            return {"hookSpecificOutput": out, **({"continue_": False} if decision.interrupt else {})}
        allow: dict[str, Any] = {"permissionDecision": "allow"}
        if decision.updated_input is not None:
            allow["updatedInput"] = decision.updated_input
        return {"hookSpecificOutput": allow}

    return ask


def to_agent_options(options: Any = None) -> AgentOptions:
    """`AgentOptions` from `ClaudeAgentOptions` (an `AgentOptions` passes through)."""
    if options is None or isinstance(options, AgentOptions):
        return options or AgentOptions()
    for name in IGNORED:
        if getattr(options, name) not in (None, False, [], {}, ()):
            warnings.warn(f"ClaudeAgentOptions.{name} has no effect in openagent", IgnoredOptionWarning, 2)
    values = {name: getattr(options, name) for name in _MAPPED}
    tools = values.pop("tools")
    if tools is None or isinstance(tools, Mapping):  # Claude's default, or the claude_code preset: all tools
        from ..plugins import registry

        tools = list(registry().tools)
    hooks = {event: list(matchers) for event, matchers in (values["hooks"] or {}).items()}
    if values["can_use_tool"] is not None:
        hooks.setdefault("PreToolUse", []).insert(
            0, HookMatcher(hooks=[_ask_hook(values["can_use_tool"], options)])
        )
    values.update(
        tools=tools,
        hooks=hooks or None,
        model=_model(values["model"]),
        system_prompt=_system_prompt(values["system_prompt"]),
        mcp_servers=values["mcp_servers"] or None,
        permission_mode=values["permission_mode"] or "default",
        env=values["env"] or {},
    )
    return AgentOptions(**values)


def query(*, prompt: str | AsyncIterable[dict[str, Any]], options: Any = None, transport: Any = None) -> Any:
    """Claude's one-shot ``query()``: yields `SystemMessage`, `AssistantMessage` … `ResultMessage`."""
    if transport is not None:
        raise ConfigError(_NO_TRANSPORT)
    return _query(prompt=prompt, options=to_agent_options(options))


class ClaudeSDKClient(Client):
    """Claude's multi-turn client: ``query()``, ``receive_response()``, ``interrupt()`` and the rest."""

    def __init__(self, options: Any = None, transport: Any = None) -> None:
        if transport is not None:
            raise ConfigError(
                "custom transports drive the Claude Code CLI; openagent talks to models directly"
            )
        super().__init__(to_agent_options(options))

    async def query(self, prompt: Any, session_id: str = "default") -> None:
        """Queue a prompt: a string, a user-message dict, or an async iterable of them."""
        if isinstance(prompt, str | Mapping):
            return await super().query(prompt, session_id)
        async for item in prompt:
            await super().query(item, session_id)
        return None

    async def get_server_info(self) -> dict[str, Any] | None:
        """What the init message reports: model, tools, MCP servers."""
        conversation = self.conversation
        return {"model": conversation.model, "tools": list(conversation.tools), "session_id": self.session_id}
