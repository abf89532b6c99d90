"""``claude_agent_sdk.types`` over openagent's objects: ``from openagent.compat.claude.types import …``.

Messages, blocks, hooks and permissions are openagent's own classes. A few Claude names describe things
only the Claude Code CLI produces (rate-limit events, conversation resets, server tool blocks, transcript
mirror errors); they are defined here so programs that mention them import and type-check, and openagent
never yields them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Required, TypeAlias, TypedDict

from ...hooks import HookContext
from ...hooks import HookMatcher as _HookMatcher
from ...permissions import (
    CanUseTool,
    PermissionMode,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
)
from ...sessions import MemorySessionStore as InMemorySessionStore
from ...sessions import SessionKey
from ...sessions import SessionListEntry as SessionStoreListEntry
from ...types import (
    AssistantMessage,
    ContentBlock,
    HookEventMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ._config_types import *  # noqa: F403 - the option and report shapes are part of this module
from ._config_types import __all__ as _config_names
from ._hook_types import *  # noqa: F403 - the typed hook inputs and outputs are part of this module
from ._hook_types import __all__ as _hook_names
from ._options import AgentDefinition, ClaudeAgentOptions

__all__ = [
    *_config_names, *_hook_names,
    "TERMINAL_TASK_STATUSES", "AgentDefinition", "AssistantMessage", "AssistantMessageError",
    "CanUseTool", "CanUseToolShadowedWarning", "ClaudeAgentOptions", "ContentBlock",
    "ConversationResetMessage",
    "DeferredToolUse", "HookContext", "HookEventMessage", "HookMatcher", "InMemorySessionStore", "Message",
    "MirrorErrorMessage", "PermissionBehavior", "PermissionMode", "PermissionResult", "PermissionResultAllow",
    "PermissionResultDeny", "PermissionRuleValue", "PermissionUpdate", "PermissionUpdateDestination",
    "RateLimitEvent", "RateLimitInfo", "RateLimitStatus", "RateLimitType", "ResultMessage",
    "SDKSessionInfo", "ServerToolName", "ServerToolResultBlock", "ServerToolUseBlock", "SessionKey",
    "SessionListSubkeysKey", "SessionMessage", "SessionStore", "SessionStoreEntry", "SessionStoreFlushMode",
    "SessionStoreListEntry", "SessionSummaryEntry", "StreamEvent", "SystemMessage", "TaskNotificationMessage",
    "TaskProgressMessage", "TaskStartedMessage", "TaskUpdatedMessage", "TextBlock", "ThinkingBlock",
    "ToolPermissionContext", "ToolResultBlock", "ToolUseBlock", "UserMessage",
]  # fmt: skip

PermissionBehavior: TypeAlias = Literal["allow", "deny", "ask"]
PermissionUpdateDestination: TypeAlias = Literal[
    "userSettings", "projectSettings", "localSettings", "session"
]
AssistantMessageError: TypeAlias = Literal[
    "authentication_failed", "billing_error", "rate_limit", "invalid_request", "server_error", "unknown"
]
TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})
"""Task statuses after which a task is over (``TaskNotificationMessage.status``)."""


@dataclass
class HookMatcher(_HookMatcher):
    """openagent's `HookMatcher` with the SDK's spelling: ``timeout=None`` means 60 s, and
    ``on_failure="block"`` makes a failing callback block the action (``"continue"`` skips it).
    """  # noqa: D205

    on_failure: Literal["continue", "block"] | None = None

    def __post_init__(self) -> None:
        if self.timeout is None:
            self.timeout = 60.0
        if self.on_failure == "block":
            self.on_error = "block"
        _HookMatcher.__post_init__(self)


class CanUseToolShadowedWarning(UserWarning):
    """``can_use_tool`` is set, but ``allowed_tools`` or the permission mode decide some calls before it."""


# --- what only the Claude Code CLI produces ----------------------------------------------------------------

ServerToolName: TypeAlias = Literal[
    "advisor", "web_search", "web_fetch", "code_execution", "bash_code_execution",
    "text_editor_code_execution", "tool_search_tool_regex", "tool_search_tool_bm25",
]  # fmt: skip


@dataclass
class ServerToolUseBlock:
    """A tool the API ran server-side (openagent keeps these as `openagent.types.RawBlock`)."""

    id: str
    name: ServerToolName
    input: dict[str, Any]


@dataclass
class ServerToolResultBlock:
    """The result of a server-side tool call (openagent keeps these as `openagent.types.RawBlock`)."""

    tool_use_id: str
    content: dict[str, Any]


class TaskProgressMessage(SystemMessage):
    """Progress of a background task (``subtype="task_progress"``; openagent reports start and end only)."""


class TaskUpdatedMessage(SystemMessage):
    """A background task's state changed (``subtype="task_updated"``; not produced by openagent)."""


class MirrorErrorMessage(SystemMessage):
    """A session-store append failed (not produced: openagent's store is the primary copy, so a failed
    append fails the run instead).
    """  # noqa: D205


RateLimitStatus: TypeAlias = Literal["allowed", "allowed_warning", "rejected"]
RateLimitType: TypeAlias = Literal["five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "overage"]


@dataclass
class RateLimitInfo:
    """A subscription's rate-limit state (Claude subscriptions only; never produced)."""

    status: RateLimitStatus
    resets_at: int | None = None
    rate_limit_type: RateLimitType | None = None
    utilization: float | None = None
    overage_status: RateLimitStatus | None = None
    overage_resets_at: int | None = None
    overage_disabled_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class RateLimitEvent:
    """A change of `RateLimitInfo` (never produced)."""

    rate_limit_info: RateLimitInfo
    uuid: str
    session_id: str


@dataclass
class ConversationResetMessage:
    """The conversation was replaced mid-connection by ``/clear`` (never produced)."""

    new_conversation_id: str
    uuid: str
    session_id: str


@dataclass
class DeferredToolUse:
    """A tool call a hook deferred (``permissionDecision: "defer"``): openagent treats defer as ask."""

    id: str
    name: str
    input: dict[str, Any]


# --- session stores -----------------------------------------------------------------------------------


class SessionStoreEntry(TypedDict, total=False):
    """One transcript entry: a JSON object with at least ``type``."""

    type: Required[str]
    uuid: str
    timestamp: str


class SessionListSubkeysKey(TypedDict):
    """The key ``list_subkeys`` takes (no ``subpath``)."""

    project_key: str
    session_id: str


class SessionSummaryEntry(TypedDict):
    """A store-maintained summary of one session."""

    session_id: str
    mtime: int
    data: dict[str, Any]


SessionStoreFlushMode: TypeAlias = Literal["batched", "eager"]


class SessionStore(Protocol):
    """The SDK's store protocol, which openagent's stores follow: ``append`` and ``load`` are required; the
    optional methods default to raising `NotImplementedError`, which openagent reads as "not supported".
    """  # noqa: D205

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Persist ``entries`` in order."""
        ...

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of ``key``, or ``None`` when it was never written."""
        ...

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The sessions of a project (optional)."""
        raise NotImplementedError

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """Summaries of the project's sessions (optional)."""
        raise NotImplementedError

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript and, without ``subpath``, its sub-transcripts (optional)."""
        raise NotImplementedError

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths under a session (optional)."""
        raise NotImplementedError


@dataclass
class SDKSessionInfo:
    """A session as ``list_sessions()`` describes it."""

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None


@dataclass
class SessionMessage:
    """A user or assistant message of a stored session; ``message`` has the API's ``role`` / ``content``."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: Any
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None
