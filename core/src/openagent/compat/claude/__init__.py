"""The Claude Agent SDK's public names over openagent's objects: port a program by changing its imports.

``from claude_agent_sdk import query, ClaudeAgentOptions`` becomes ``from openagent.compat.claude import
…`` (and ``claude_agent_sdk.types`` becomes `openagent.compat.claude.types`); the model comes from
``$OPENAGENT_MODEL`` (and ``$OPENAGENT_BASE_URL``) unless ``model`` names one as ``"provider:model"``.
Options that only configure the Claude Code CLI process (`CLI_ONLY`) are accepted and ignored with an
`IgnoredOptionWarning`. See docs/porting.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ...errors import ConfigError, OpenAgentError, ProviderConnectionError, ProviderError, StreamError
from ...tools import Tool, create_sdk_mcp_server
from ...tools import tool as _tool
from . import types as types
from ._client import ClaudeSDKClient, ResultError, Transport, query
from ._options import CLI_ONLY, IgnoredOptionWarning, to_agent_options
from ._sessions import *  # noqa: F403 - the session functions are part of this namespace
from ._sessions import __all__ as _session_names
from .types import *  # noqa: F403 - every name of the types module is exported here too
from .types import __all__ as _type_names

__all__ = [
    *_session_names, *_type_names,
    "CLI_ONLY", "CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError", "ClaudeSDKClient",
    "ClaudeSDKError", "IgnoredOptionWarning", "ProcessError", "ResultError", "SdkMcpTool", "ToolAnnotations",
    "Transport", "create_sdk_mcp_server", "query", "to_agent_options", "tool",
    "__version__",  # noqa: F405 - read lazily, by __getattr__
]  # fmt: skip

ClaudeSDKError = OpenAgentError
CLIConnectionError = ProviderConnectionError
CLINotFoundError = ConfigError  # no CLI to find: raised when no model is configured
ProcessError = ProviderError
CLIJSONDecodeError = StreamError
T = TypeVar("T")


class SdkMcpTool(Tool, Generic[T]):
    """What ``@tool`` makes: an openagent `Tool` (``name``, ``description``, ``input_schema``, handler)."""


class ToolAnnotations:
    """MCP tool hints (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint`` …)."""

    def __init__(self, **hints: Any) -> None:
        self.__dict__.update(hints)

    def __getattr__(self, name: str) -> Any:
        return None

    def __repr__(self) -> str:
        return f"ToolAnnotations({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


def tool(
    name: str, description: str, input_schema: Any, annotations: Any = None
) -> Callable[[Callable[..., Any]], SdkMcpTool[Any]]:
    """``@tool(name, description, {"param": type})`` over ``async def handler(args) -> {"content": …}``."""
    read_only = bool(getattr(annotations, "readOnlyHint", False))
    make = _tool(name, description, input_schema, is_read_only=read_only)

    def decorate(handler: Callable[..., Any]) -> SdkMcpTool[Any]:
        made = make(handler)
        made.__class__ = SdkMcpTool
        return made  # type: ignore[return-value]

    return decorate


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read lazily: importlib.metadata is slow to import
        from importlib.metadata import version

        return version("openagent")
    raise AttributeError(f"module 'openagent.compat.claude' has no attribute {name!r}")
