"""The Claude Agent SDK's option and report shapes (`TypedDict`s and literals) for type checkers.

Options in these shapes are read by `openagent.compat.claude.to_agent_options`; reports in these shapes are
what `ClaudeSDKClient` returns (``get_context_usage()``, ``get_mcp_status()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, Required, TypeAlias, TypedDict

from ..._mcp import (
    McpServerConnectionStatus,
    McpServerInfo,
    McpServerStatus,
    McpStatusResponse,
    McpToolAnnotations,
    McpToolInfo,
)
from ..._options import SandboxNetworkConfig, SandboxSettings

if TYPE_CHECKING:
    from ..._permissions import PermissionMode

__all__ = [
    "ContextUsageCategory", "ContextUsageResponse", "EffortLevel", "FastModeDisabledReason", "FastModeState",
    "McpClaudeAIProxyServerConfig", "McpHttpServerConfig", "McpSSEServerConfig", "McpSdkServerConfig",
    "McpSdkServerConfigStatus", "McpServerConfig", "McpServerConnectionStatus", "McpServerInfo",
    "McpServerStatus", "McpServerStatusConfig", "McpStatusResponse", "McpStdioServerConfig",
    "McpToolAnnotations", "McpToolInfo", "MessageOrigin", "MessageOriginKind", "ModelUsage",
    "SandboxIgnoreViolations", "SandboxNetworkConfig", "SandboxSettings", "SdkBeta", "SdkPluginConfig",
    "SettingSource", "SystemInitData", "SystemInitMcpServer", "SystemInitPlugin", "SystemInitPluginError",
    "SystemPromptCustom", "SystemPromptFile", "SystemPromptPreset", "TaskBudget",
    "TaskNotificationOriginSubkind", "TaskNotificationStatus", "TaskUpdatedStatus", "TaskUsage",
    "ThinkingConfig", "ThinkingConfigAdaptive", "ThinkingConfigDisabled", "ThinkingConfigEnabled",
    "ThinkingDisplay", "ToolsPreset",
]  # fmt: skip

SdkBeta: TypeAlias = str
"""An ``anthropic-beta`` feature name (``"context-1m-2025-08-07"``); sent to Anthropic models only."""
SettingSource: TypeAlias = Literal["user", "project", "local"]
EffortLevel: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]
ThinkingDisplay: TypeAlias = Literal["summarized", "omitted"]


class SystemPromptPreset(TypedDict):
    """``{"type": "preset", "preset": "claude_code", "append": …}``: only ``append`` is used."""

    type: Literal["preset"]
    preset: Literal["claude_code"]
    append: NotRequired[str]
    exclude_dynamic_sections: NotRequired[bool]
    snapshot: NotRequired[bool]


class SystemPromptCustom(TypedDict):
    """``{"type": "custom", "prompt": …}``: the same as a plain string."""

    type: Literal["custom"]
    prompt: str
    snapshot: NotRequired[bool]


class SystemPromptFile(TypedDict):
    """``{"type": "file", "path": …}``: the system prompt read from a file."""

    type: Literal["file"]
    path: str


class ToolsPreset(TypedDict):
    """``{"type": "preset", "preset": "claude_code"}``: every installed tool."""

    type: Literal["preset"]
    preset: Literal["claude_code"]


class TaskBudget(TypedDict):
    """A token budget for the whole task; the model is told how much of it is left."""

    total: int


class ThinkingConfigAdaptive(TypedDict):
    """The model decides how much to think."""

    type: Literal["adaptive"]
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigEnabled(TypedDict):
    """Think with a fixed token budget."""

    type: Literal["enabled"]
    budget_tokens: int
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigDisabled(TypedDict):
    """No extended thinking."""

    type: Literal["disabled"]


ThinkingConfig: TypeAlias = ThinkingConfigAdaptive | ThinkingConfigEnabled | ThinkingConfigDisabled


class SdkPluginConfig(TypedDict):
    """A Claude Code plugin folder (its commands, agents and skills are loaded)."""

    type: Literal["local"]
    path: str


SandboxIgnoreViolations: TypeAlias = dict[str, list[str]]
"""Sandbox violations left unreported (accepted; openagent reports none)."""


# --- MCP servers --------------------------------------------------------------------------------------------


class McpStdioServerConfig(TypedDict):
    """An MCP server started as a subprocess."""

    type: NotRequired[Literal["stdio"]]
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]


class McpSSEServerConfig(TypedDict):
    """An MCP server over server-sent events."""

    type: Literal["sse"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpHttpServerConfig(TypedDict):
    """An MCP server over streamable HTTP."""

    type: Literal["http"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpSdkServerConfig(TypedDict):
    """An in-process MCP server (``create_sdk_mcp_server``)."""

    type: Literal["sdk"]
    name: str
    instance: Any


McpServerConfig: TypeAlias = (
    McpStdioServerConfig | McpSSEServerConfig | McpHttpServerConfig | McpSdkServerConfig
)


class McpSdkServerConfigStatus(TypedDict):
    """An in-process server's config as a status report shows it."""

    type: Literal["sdk"]
    name: str


class McpClaudeAIProxyServerConfig(TypedDict):
    """A claude.ai proxied server's config (never reported by openagent)."""

    type: Literal["claudeai-proxy"]
    url: str
    id: str


McpServerStatusConfig: TypeAlias = (
    McpStdioServerConfig | McpSSEServerConfig | McpHttpServerConfig | McpSdkServerConfigStatus
    | McpClaudeAIProxyServerConfig
)  # fmt: skip


# The status shapes live in openagent._mcp, where Client.get_mcp_status returns them (its ``config`` is typed
# as a plain dict there: these config types are the Claude SDK's names for what it holds).


# --- reports ------------------------------------------------------------------------------------------------


class ContextUsageCategory(TypedDict):
    """One part of the context window (system prompt, tools, messages …)."""

    name: str
    tokens: int
    color: str
    isDeferred: NotRequired[bool]


class ContextUsageResponse(TypedDict):
    """What ``get_context_usage()`` returns: how full the context window is, by category."""

    categories: list[ContextUsageCategory]
    totalTokens: int
    maxTokens: int
    rawMaxTokens: int
    percentage: float
    model: str
    isAutoCompactEnabled: bool
    memoryFiles: list[dict[str, Any]]
    mcpTools: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    gridRows: list[list[dict[str, Any]]]
    autoCompactThreshold: NotRequired[int]
    deferredBuiltinTools: NotRequired[list[dict[str, Any]]]
    systemTools: NotRequired[list[dict[str, Any]]]
    systemPromptSections: NotRequired[list[dict[str, Any]]]
    slashCommands: NotRequired[dict[str, Any]]
    skills: NotRequired[dict[str, Any]]
    messageBreakdown: NotRequired[dict[str, Any]]
    apiUsage: NotRequired[dict[str, Any] | None]


class ModelUsage(TypedDict):
    """Per-model tokens and cost."""

    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheCreationInputTokens: int
    webSearchRequests: int
    costUSD: float
    contextWindow: int
    maxOutputTokens: int
    canonicalModel: NotRequired[str]
    provider: NotRequired[str]


class TaskUsage(TypedDict):
    """What a background task (a subagent) used."""

    total_tokens: int
    tool_uses: int
    duration_ms: int


TaskNotificationStatus: TypeAlias = Literal["completed", "failed", "stopped"]
TaskUpdatedStatus: TypeAlias = Literal["pending", "running", "paused", "completed", "failed", "killed"]
FastModeState: TypeAlias = Literal["off", "cooldown", "on"]
FastModeDisabledReason: TypeAlias = str
MessageOriginKind: TypeAlias = Literal[
    "human", "channel", "peer", "task-notification", "coordinator", "unclassified", "observer",
    "auto-continuation", "observer-activity",
]  # fmt: skip
TaskNotificationOriginSubkind: TypeAlias = Literal["scheduled-trigger", "peer-send-message"]
MessageOrigin = TypedDict(
    "MessageOrigin",
    {
        "kind": Required[MessageOriginKind], "server": str, "from": str, "name": str, "fromSession": str,
        "senderTaskId": str, "body": str, "verifiedPeerPid": int, "subkind": TaskNotificationOriginSubkind,
    },
    total=False,
)  # fmt: skip


class SystemInitMcpServer(TypedDict):
    """An MCP server as the init message lists it."""

    name: str
    status: str
    source: NotRequired[str]


class SystemInitPlugin(TypedDict):
    """A plugin as the init message lists it."""

    name: str
    path: str
    version: NotRequired[str]


class SystemInitPluginError(TypedDict):
    """A plugin that failed to load, as the init message lists it."""

    plugin: str
    type: str
    message: str
    path: NotRequired[str]


class SystemInitData(TypedDict):
    """``SystemMessage(subtype="init").data``: the keys openagent fills are required here."""

    session_id: str
    cwd: str
    tools: list[str]
    mcp_servers: list[SystemInitMcpServer]
    model: str
    permission_mode: PermissionMode
    type: NotRequired[Literal["system"]]
    subtype: NotRequired[Literal["init"]]
    uuid: NotRequired[str]
    agents: NotRequired[list[str]]
    apiKeySource: NotRequired[str]
    betas: NotRequired[list[str]]
    claude_code_version: NotRequired[str]
    permissionMode: NotRequired[PermissionMode]
    slash_commands: NotRequired[list[str]]
    output_style: NotRequired[str]
    skills: NotRequired[list[str]]
    plugins: NotRequired[list[SystemInitPlugin]]
    plugin_errors: NotRequired[list[SystemInitPluginError]]
    capabilities: NotRequired[list[str]]
