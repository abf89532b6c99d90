"""What `Client` reports about a live conversation: `server_info` and `context_usage`.

Token counts are estimates (about four characters per token, as compaction counts them): the real count
needs the model's own tokenizer, which a provider-agnostic SDK does not have. The last request's real
prompt size, when the endpoint reported one, is given beside them as ``apiUsage``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .compaction import estimate_tokens
from .tools import describe_toolsets

if TYPE_CHECKING:
    from .loop import Conversation

__all__ = ["context_usage", "server_info"]


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def server_info(conversation: Conversation) -> dict[str, Any]:
    """Model, tools, slash commands, agents, skills and MCP servers of the conversation."""
    settings = conversation.settings
    commands = [
        {"name": c.name, "description": c.description, "argumentHint": c.argument_hint or ""}
        for c in settings.commands.values()
    ]
    return {
        "model": conversation.model,
        "session_id": conversation.session_id,
        "tools": list(conversation.tools),
        "commands": commands,
        "agents": list(conversation.agents),
        "skills": list(settings.skills),
        "mcp_servers": list(describe_toolsets(conversation.toolsets).get("mcp_servers", [])),
        "output_style": "default",
        "available_output_styles": ["default"],
    }


def context_usage(conversation: Conversation) -> dict[str, Any]:
    """How full the context window is, by category, with the Claude Agent SDK's keys."""
    options = conversation.options
    settings = conversation.settings
    tools = [t.spec for t in conversation.tools.values()]
    mcp = [t for t in tools if t.name.startswith("mcp__")]
    builtin = [t for t in tools if not t.name.startswith("mcp__")]
    size = {t.name: _tokens(json.dumps([t.name, t.description, t.input_schema])) for t in tools}
    memory: list[dict[str, Any]] = [
        {"path": str(path), "type": "Project", "tokens": _tokens(text)} for path, text in settings.memory
    ]
    system = _tokens(options.system_prompt or "")
    categories = [
        ("System prompt", system, "promptBorder"),
        ("System tools", sum(size[t.name] for t in builtin), "inactive"),
        ("MCP tools", sum(size[t.name] for t in mcp), "cyan_FOR_SUBAGENTS_ONLY"),
        ("Memory files", sum(m["tokens"] for m in memory), "claude"),
        ("Messages", estimate_tokens(conversation.history) if conversation.history else 0, "purple"),
    ]
    total = sum(tokens for _, tokens, _ in categories)
    window = options.compaction.window(conversation.provider) if options.compaction else None
    window = window or getattr(getattr(conversation.provider, "profile", None), "context_window", None) or 0
    last = conversation.last_usage
    return {
        "categories": [
            {"name": name, "tokens": tokens, "color": color} for name, tokens, color in categories if tokens
        ]
        + (
            [{"name": "Free space", "tokens": max(window - total, 0), "color": "promptBorder"}]
            if window
            else []
        ),
        "totalTokens": total,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100 * total / window, 1) if window else 0.0,
        "model": conversation.model,
        "isAutoCompactEnabled": options.compaction is not None,
        "autoCompactThreshold": int(window * options.compaction.threshold)
        if window and options.compaction
        else 0,
        "memoryFiles": memory,
        "mcpTools": [
            {"name": t.name, "serverName": t.name.split("__")[1], "tokens": size[t.name]} for t in mcp
        ],
        "systemTools": [{"name": t.name, "tokens": size[t.name]} for t in builtin],
        "agents": [{"agentType": name, "source": "sdk"} for name in conversation.agents],
        "gridRows": [],
        "apiUsage": None if last is None else last.model_dump(),
    }
