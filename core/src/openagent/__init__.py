"""openagent: the Claude Agent SDK's programming model (query, Client, tools, hooks, sessions), any model.

This namespace is for writing agents; `openagent.plugin` is for writing plugins; `openagent.testing`,
`openagent.sync` and `openagent.compat.claude` are public too. Every other module is private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._agents import AgentDefinition, as_tool
from ._client import Client
from ._compaction import Compaction
from ._errors import ConfigError, OpenAgentError, ProviderError, SessionError, ToolError
from ._hooks import HookContext, HookMatcher
from ._models import ModelProfile
from ._options import AgentOptions
from ._permissions import (
    PermissionMode,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)
from ._prices import register_price
from ._query import RunResult, query, run, run_sync
from ._retry import NoRetry, RetryPolicy, StaminaRetry
from ._sessions import JSONLSessionStore, MemorySessionStore, SessionStore
from ._tools import Tool, ToolContext, tool
from ._transcripts import delete_session, fork_session, get_session_messages, list_sessions
from ._types import (
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
    ToolUseError,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:  # for type checkers; at run time it is imported on first use (it needs pluggy)
    from ._hookspecs import hookimpl

__all__ = [
    "AgentDefinition",
    "AgentOptions",
    "AssistantMessage",
    "Client",
    "Compaction",
    "ConfigError",
    "ContentBlock",
    "HookContext",
    "HookMatcher",
    "JSONLSessionStore",
    "MemorySessionStore",
    "Message",
    "ModelProfile",
    "NoRetry",
    "OpenAgentError",
    "PermissionMode",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionUpdate",
    "ProviderError",
    "ResultMessage",
    "RetryPolicy",
    "RunResult",
    "SessionError",
    "SessionStore",
    "StaminaRetry",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseError",
    "Usage",
    "UserMessage",
    "as_tool",
    "delete_session",
    "fork_session",
    "get_session_messages",
    "hookimpl",  # provided lazily by __getattr__
    "list_sessions",
    "query",
    "register_price",
    "run",
    "run_sync",
    "tool",
]


def __getattr__(name: str) -> Any:
    if name == "hookimpl":  # imports pluggy: only plugins need it, when they load
        from ._hookspecs import hookimpl

        return hookimpl
    if name == "__version__":  # read lazily: importlib.metadata is slow to import
        from importlib.metadata import version

        return version("openagent")
    raise AttributeError(f"module 'openagent' has no attribute {name!r}")
