"""openagent: the Claude Agent SDK's programming model (query, Client, tools, hooks, sessions), any model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._prices import register_price
from .agents import AgentDefinition
from .client import Client
from .errors import ConfigError, OpenAgentError, ProviderError, SessionError, ToolError
from .hooks import HookContext, HookMatcher
from .options import AgentOptions
from .permissions import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext
from .query import RunResult, query, run, run_sync
from .tools import Tool, ToolContext, tool
from .types import (
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
    from .hookspecs import hookimpl

__all__ = [
    "AgentDefinition",
    "AgentOptions",
    "AssistantMessage",
    "Client",
    "ConfigError",
    "ContentBlock",
    "HookContext",
    "HookMatcher",
    "Message",
    "OpenAgentError",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "ProviderError",
    "ResultMessage",
    "RunResult",
    "SessionError",
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
    "hookimpl",  # provided lazily by __getattr__
    "query",
    "register_price",
    "run",
    "run_sync",
    "tool",
]


def __getattr__(name: str) -> Any:
    if name == "hookimpl":  # imports pluggy: only plugins need it, when they load
        from .hookspecs import hookimpl

        return hookimpl
    if name == "__version__":  # read lazily: importlib.metadata is slow to import
        from importlib.metadata import version

        return version("openagent")
    raise AttributeError(f"module 'openagent' has no attribute {name!r}")
