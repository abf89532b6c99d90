"""Everything a plugin author needs, in one module: ``from openagent.plugin import …``.

Agents are written against `openagent`; plugins against this module (and `openagent` for the message and
tool types both kinds of code share). Every other module of the package is private.

- Registering: `hookimpl`, the typed ``Register…`` arguments of the hooks, `lazy` (register by
  reference, imported on first use), `resolve` (what an option
  names: a provider, a tool, a session store, a retry policy), `registry` and `list_plugins`.
- Providers: `ModelRequest`, `ToolSpec`, the events a stream yields (`ModelEvent`: `TextDelta`,
  `ThinkingDelta`, `ToolCallStart`, `ToolCallDelta`, `RawContent`, `Usage`, `Stop`), `Provider`,
  `ProviderProfile` (an endpoint) and `ModelProfile` (a model), the errors to raise and `error_for_status`,
  the server-sent-events decoder (`SSEDecoder`, `aiter_sse`, `json_data`), and the provider contract suite
  (`ProviderContract`, imported lazily: it needs pytest).
- Session stores: the `SessionStore` protocol, `SessionKey`, `SessionListEntry`, `check_key`,
  `check_session_id`, `encode_entries`, `require_asyncio`, `project_key_for`, and the store contract suite
  (`SessionStoreContract`, lazily).
- Secrets and trust: `mask_url`, `mask_secret` (for what a plugin prints or logs), `project_digest` (what a
  user approves when trusting a project's settings) and `untrusted_settings` (what trust would apply).
- Tools: `Toolset` (tools behind a connection, made per run), `SdkMcpServer`, `create_sdk_mcp_server`,
  `PathPolicy` (the run's path and web rules, asked again where a tool opens a path) and `glob_regex`;
  `McpServers` (what an MCP toolset implements so `Client` can report and control its servers) with its
  status shapes `McpServerStatus` and `McpStatusResponse`; `spawn` (a background task that outlives no
  event loop: closing a connection from a task that cannot wait). For a tool that confines what it runs
  (the Bash sandbox): `SandboxSettings` and `SandboxNetworkConfig` (the option's shape), `rule_matches`
  (whether a permission rule covers a call), `PROTECTED_DIRS` and `PROTECTED_FILES` (places writes need a
  rule for).
- Steps, for engines that run an agent step by step (durable workflows): `Runtime` (`prepare_runtime`,
  `open_runtime`), `RunState`, the outcomes (`Finish`, `RunTools`, `FollowUp`, `Pause`), and the steps:
  `submit`, `prepare_request`, `model_turn`, `turn_cost`, `count_turn`, `decide`, `tool_call`,
  `tool_results`, `after_tools`, `turn_limit`, `result_message`; and what an engine needs around them:
  `hook_input` (what every hook input holds), `run_hooks` (one event's hooks, and what they said),
  `restore_session` (where a run resumes), `entry_for` (a message as a session entry), `compact` (the
  history, compacted), `reported_window` (the context window the model's server reports),
  `child_runtime` (a subagent's runtime, as the ``Task`` tool would make it), `parse_message` (a message
  from its JSON data).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContextWindowExceededError,
    OpenAgentError,
    PluginError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    SessionError,
    StreamError,
    ToolError,
    error_for_status,
    mask_secret,
    mask_url,
)
from ._lazy import Lazy, lazy
from ._mcp import McpServers, McpServerStatus, McpStatusResponse
from ._models import (
    ModelEvent,
    ModelProfile,
    ModelProfileSource,
    ModelRequest,
    Provider,
    ProviderFactory,
    ProviderProfile,
    RawContent,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolSpec,
    split_model,
)
from ._options import SandboxNetworkConfig, SandboxSettings
from ._permissions import PathPolicy, PermissionMode, glob_regex, rule_matches
from ._policy import PROTECTED_DIRS, PROTECTED_FILES
from ._sessions import (
    SessionKey,
    SessionListEntry,
    SessionStore,
    check_key,
    check_session_id,
    encode_entries,
    entry_for,
    project_key_for,
    require_asyncio,
)
from ._sse import ServerSentEvent, SSEDecoder, aiter_sse, json_data
from ._tasks import spawn
from ._tools import SdkMcpServer, Toolset, create_sdk_mcp_server
from ._types import RawBlock, Usage, parse_message

if TYPE_CHECKING:  # imported on first use: the registry needs pluggy, the steps the whole loop
    from ._agents import child_runtime
    from ._compaction import compact, reported_window
    from ._contract import ProviderContract
    from ._hooks import run_hooks
    from ._hookspecs import (
        RegisterHook,
        RegisterModelProfiles,
        RegisterProvider,
        RegisterRetryPolicy,
        RegisterSessionStore,
        RegisterSkill,
        RegisterTools,
        RegisterToolset,
        hookimpl,
    )
    from ._plugins import PluginInfo, Registry, list_plugins, registry, resolve
    from ._runtime import Runtime, open_runtime
    from ._runtime import prepare as prepare_runtime
    from ._settings import project_digest, untrusted_settings
    from ._steps import (
        Finish,
        FollowUp,
        Outcome,
        Pause,
        RunState,
        RunTools,
        after_tools,
        count_turn,
        decide,
        hook_input,
        model_turn,
        new_state,
        prepare_request,
        result_message,
        submit,
        tool_results,
        turn_cost,
        turn_limit,
    )
    from ._store_contract import SessionStoreContract
    from ._toolcall import ToolCallResult, ToolEnv, tool_call
    from ._transcripts import restore as restore_session

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ContextWindowExceededError",
    "Finish",
    "FollowUp",
    "Lazy",
    "McpServerStatus",
    "McpServers",
    "McpStatusResponse",
    "ModelEvent",
    "ModelProfile",
    "ModelProfileSource",
    "ModelRequest",
    "OpenAgentError",
    "Outcome",
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "PathPolicy",
    "Pause",
    "PermissionMode",
    "PluginError",
    "PluginInfo",
    "Provider",
    "ProviderConnectionError",
    "ProviderContract",
    "ProviderError",
    "ProviderFactory",
    "ProviderProfile",
    "ProviderTimeoutError",
    "RateLimitError",
    "RawBlock",
    "RawContent",
    "RegisterHook",
    "RegisterModelProfiles",
    "RegisterProvider",
    "RegisterRetryPolicy",
    "RegisterSessionStore",
    "RegisterSkill",
    "RegisterTools",
    "RegisterToolset",
    "Registry",
    "RunState",
    "RunTools",
    "Runtime",
    "SSEDecoder",
    "SandboxNetworkConfig",
    "SandboxSettings",
    "SdkMcpServer",
    "ServerError",
    "ServerSentEvent",
    "SessionError",
    "SessionKey",
    "SessionListEntry",
    "SessionStore",
    "SessionStoreContract",
    "Stop",
    "StreamError",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallResult",
    "ToolCallStart",
    "ToolEnv",
    "ToolError",
    "ToolSpec",
    "Toolset",
    "Usage",
    "after_tools",
    "aiter_sse",
    "check_key",
    "check_session_id",
    "child_runtime",
    "compact",
    "count_turn",
    "create_sdk_mcp_server",
    "decide",
    "encode_entries",
    "entry_for",
    "error_for_status",
    "glob_regex",
    "hook_input",
    "hookimpl",
    "json_data",
    "lazy",
    "list_plugins",
    "mask_secret",
    "mask_url",
    "model_turn",
    "new_state",
    "open_runtime",
    "parse_message",
    "prepare_request",
    "prepare_runtime",
    "project_digest",
    "project_key_for",
    "registry",
    "reported_window",
    "require_asyncio",
    "resolve",
    "restore_session",
    "result_message",
    "rule_matches",
    "run_hooks",
    "spawn",
    "split_model",
    "submit",
    "tool_call",
    "tool_results",
    "turn_cost",
    "turn_limit",
    "untrusted_settings",
]

_LAZY = {
    "ProviderContract": "._contract",
    "SessionStoreContract": "._store_contract",
    **dict.fromkeys(
        [
            "RegisterHook",
            "RegisterModelProfiles",
            "RegisterProvider",
            "RegisterRetryPolicy",
            "RegisterSessionStore",
            "RegisterSkill",
            "RegisterTools",
            "RegisterToolset",
            "hookimpl",
        ],
        "._hookspecs",
    ),  # fmt: skip
    **dict.fromkeys(["PluginInfo", "Registry", "list_plugins", "registry", "resolve"], "._plugins"),
    **dict.fromkeys(["Runtime", "open_runtime"], "._runtime"),
    "project_digest": "._settings",
    "untrusted_settings": "._settings",
    **dict.fromkeys(
        [
            "Finish",
            "FollowUp",
            "Outcome",
            "Pause",
            "RunState",
            "RunTools",
            "after_tools",
            "count_turn",
            "decide",
            "hook_input",
            "model_turn",
            "new_state",
            "prepare_request",
            "result_message",
            "submit",
            "tool_results",
            "turn_cost",
            "turn_limit",
        ],
        "._steps",
    ),  # fmt: skip
    **dict.fromkeys(["ToolCallResult", "ToolEnv", "tool_call"], "._toolcall"),
    "child_runtime": "._agents",
    "run_hooks": "._hooks",
    "compact": "._compaction",
    "reported_window": "._compaction",
}


def __getattr__(name: str) -> Any:
    """The names that import pluggy, pytest or the loop, on first use (a provider plugin needs none)."""
    import importlib

    if name == "prepare_runtime":
        return importlib.import_module("._runtime", __package__).prepare
    if name == "restore_session":
        return importlib.import_module("._transcripts", __package__).restore
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __package__), name)
    raise AttributeError(f"module 'openagent.plugin' has no attribute {name!r}")
