"""The Claude Agent SDK's typed hook inputs and outputs: the dicts openagent's hooks pass and read.

openagent's hooks (`openagent.hooks`) take and return plain dicts; these `TypedDict`s name their keys for
type checkers, as the SDK does (``async def hook(input_data: HookInput, tool_use_id, context) ->
HookJSONOutput``). Nothing here changes behaviour.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from ...hooks import HookContext

__all__ = [
    "AsyncHookJSONOutput", "BackgroundTaskSummary", "BaseHookInput", "CwdChangedHookSpecificOutput",
    "ElicitationHookSpecificOutput", "ElicitationResultHookSpecificOutput", "FileChangedHookSpecificOutput",
    "HookCallback", "HookEffort", "HookEvent", "HookInput", "HookJSONOutput", "HookSpecificOutput",
    "MessageDisplayHookSpecificOutput", "NotificationHookInput", "NotificationHookSpecificOutput",
    "PermissionDeniedHookSpecificOutput", "PermissionRequestHookInput", "PermissionRequestHookSpecificOutput",
    "PostModelSwitchHookSpecificOutput", "PostToolBatchHookSpecificOutput", "PostToolUseFailureHookInput",
    "PostToolUseFailureHookSpecificOutput", "PostToolUseHookInput", "PostToolUseHookSpecificOutput",
    "PreCompactHookInput", "PreModelSwitchHookSpecificOutput", "PreToolUseHookInput",
    "PreToolUseHookSpecificOutput", "SessionCronSummary", "SessionStartHookSpecificOutput", "StopHookInput",
    "StopHookSpecificOutput", "SubagentStartHookInput", "SubagentStartHookSpecificOutput",
    "SubagentStopHookInput", "SubagentStopHookSpecificOutput", "SyncHookJSONOutput",
    "UserPromptExpansionHookSpecificOutput", "UserPromptSubmitHookInput",
    "UserPromptSubmitHookSpecificOutput",
    "WorktreeCreateHookSpecificOutput",
]  # fmt: skip

HookEvent: TypeAlias = Literal[
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop",
    "PreCompact", "Notification", "SubagentStart", "PermissionRequest",
]  # fmt: skip


class HookEffort(TypedDict):
    """The reasoning effort in force when a hook fires."""

    level: str


class BaseHookInput(TypedDict):
    """Keys every hook input has."""

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: NotRequired[str]
    prompt_id: NotRequired[str]
    effort: NotRequired[HookEffort]


class _Subagent(TypedDict, total=False):
    agent_id: str
    agent_type: str


class PreToolUseHookInput(BaseHookInput, _Subagent):
    """``PreToolUse``: a tool is about to run."""

    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput, _Subagent):
    """``PostToolUse``: a tool ran."""

    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: Any
    tool_use_id: str
    duration_ms: NotRequired[int]


class PostToolUseFailureHookInput(BaseHookInput, _Subagent):
    """``PostToolUseFailure``: a tool ran and failed."""

    hook_event_name: Literal["PostToolUseFailure"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    error: str
    is_interrupt: NotRequired[bool]
    duration_ms: NotRequired[int]


class UserPromptSubmitHookInput(BaseHookInput):
    """``UserPromptSubmit``: a prompt is about to go to the model."""

    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class BackgroundTaskSummary(TypedDict):
    """A background task in flight, as listed on ``Stop`` inputs."""

    id: str
    type: str
    status: str
    description: str
    command: NotRequired[str]
    agent_type: NotRequired[str]
    server: NotRequired[str]
    tool: NotRequired[str]
    name: NotRequired[str]


class SessionCronSummary(TypedDict):
    """A scheduled wake-up, as listed on ``Stop`` inputs."""

    id: str
    schedule: str
    recurring: bool
    prompt: str


class StopHookInput(BaseHookInput):
    """``Stop``: the model wants to end its turn."""

    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    last_assistant_message: NotRequired[str]
    background_tasks: NotRequired[list[BackgroundTaskSummary]]
    session_crons: NotRequired[list[SessionCronSummary]]


class SubagentStopHookInput(BaseHookInput):
    """``SubagentStop``: a subagent finished."""

    hook_event_name: Literal["SubagentStop"]
    stop_hook_active: bool
    agent_id: str
    agent_transcript_path: str
    agent_type: str
    last_assistant_message: NotRequired[str]
    background_tasks: NotRequired[list[BackgroundTaskSummary]]
    session_crons: NotRequired[list[SessionCronSummary]]


class PreCompactHookInput(BaseHookInput):
    """``PreCompact``: the history is about to be compacted."""

    hook_event_name: Literal["PreCompact"]
    trigger: Literal["manual", "auto"]
    custom_instructions: str | None


class NotificationHookInput(BaseHookInput):
    """``Notification``: something the user should know (a permission prompt …)."""

    hook_event_name: Literal["Notification"]
    message: str
    title: NotRequired[str]
    notification_type: str


class SubagentStartHookInput(BaseHookInput):
    """``SubagentStart``: a subagent is starting."""

    hook_event_name: Literal["SubagentStart"]
    agent_id: str
    agent_type: str


class PermissionRequestHookInput(BaseHookInput, _Subagent):
    """``PermissionRequest``: a permission is asked for."""

    hook_event_name: Literal["PermissionRequest"]
    tool_name: str
    tool_input: dict[str, Any]
    permission_suggestions: NotRequired[list[Any]]


HookInput: TypeAlias = (
    PreToolUseHookInput | PostToolUseHookInput | PostToolUseFailureHookInput | UserPromptSubmitHookInput
    | StopHookInput | SubagentStopHookInput | PreCompactHookInput | NotificationHookInput
    | SubagentStartHookInput | PermissionRequestHookInput
)  # fmt: skip


class PreToolUseHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PreToolUse``: a permission decision, rewritten input, context."""

    hookEventName: Literal["PreToolUse"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PostToolUse``: context, or a replacement tool output."""

    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]
    updatedToolOutput: NotRequired[Any]
    updatedMCPToolOutput: NotRequired[Any]


class PostToolUseFailureHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PostToolUseFailure``."""

    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``UserPromptSubmit``: context added to the prompt."""

    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]
    sessionTitle: NotRequired[str]
    suppressOriginalPrompt: NotRequired[bool]


class UserPromptExpansionHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``UserPromptExpansion``."""

    hookEventName: Literal["UserPromptExpansion"]
    additionalContext: NotRequired[str]
    suppressOriginalPrompt: NotRequired[bool]


class SessionStartHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``SessionStart``: context for the first prompt."""

    hookEventName: Literal["SessionStart"]
    additionalContext: NotRequired[str]
    initialUserMessage: NotRequired[str]
    sessionTitle: NotRequired[str]
    watchPaths: NotRequired[list[str]]
    reloadSkills: NotRequired[bool]


class NotificationHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``Notification``."""

    hookEventName: Literal["Notification"]
    additionalContext: NotRequired[str]


class SubagentStartHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``SubagentStart``: context added to the subagent's prompt."""

    hookEventName: Literal["SubagentStart"]
    additionalContext: NotRequired[str]


class PermissionRequestHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PermissionRequest``."""

    hookEventName: Literal["PermissionRequest"]
    decision: dict[str, Any]


class PostToolBatchHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PostToolBatch``."""

    hookEventName: Literal["PostToolBatch"]
    additionalContext: NotRequired[str]


class StopHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``Stop``."""

    hookEventName: Literal["Stop"]
    additionalContext: NotRequired[str]


class SubagentStopHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``SubagentStop``."""

    hookEventName: Literal["SubagentStop"]
    additionalContext: NotRequired[str]


class PermissionDeniedHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PermissionDenied``."""

    hookEventName: Literal["PermissionDenied"]
    retry: NotRequired[bool]


class PreModelSwitchHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PreModelSwitch``."""

    hookEventName: Literal["PreModelSwitch"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask"]]
    permissionDecisionReason: NotRequired[str]


class PostModelSwitchHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``PostModelSwitch``."""

    hookEventName: Literal["PostModelSwitch"]
    additionalContext: NotRequired[str]


class ElicitationHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``Elicitation`` (an MCP server asks the user)."""

    hookEventName: Literal["Elicitation"]
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]


class ElicitationResultHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``ElicitationResult``."""

    hookEventName: Literal["ElicitationResult"]
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]


class CwdChangedHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``CwdChanged``."""

    hookEventName: Literal["CwdChanged"]
    watchPaths: NotRequired[list[str]]


class FileChangedHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``FileChanged``."""

    hookEventName: Literal["FileChanged"]
    watchPaths: NotRequired[list[str]]


class WorktreeCreateHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``WorktreeCreate``."""

    hookEventName: Literal["WorktreeCreate"]
    worktreePath: str


class MessageDisplayHookSpecificOutput(TypedDict):
    """``hookSpecificOutput`` of ``MessageDisplay``."""

    hookEventName: Literal["MessageDisplay"]
    displayContent: NotRequired[str]


HookSpecificOutput: TypeAlias = (
    PreToolUseHookSpecificOutput | PostToolUseHookSpecificOutput | PostToolUseFailureHookSpecificOutput
    | UserPromptSubmitHookSpecificOutput | SessionStartHookSpecificOutput | NotificationHookSpecificOutput
    | SubagentStartHookSpecificOutput | PermissionRequestHookSpecificOutput
    | UserPromptExpansionHookSpecificOutput | PostToolBatchHookSpecificOutput | StopHookSpecificOutput
    | SubagentStopHookSpecificOutput | PermissionDeniedHookSpecificOutput | PreModelSwitchHookSpecificOutput
    | PostModelSwitchHookSpecificOutput | ElicitationHookSpecificOutput
    | ElicitationResultHookSpecificOutput | CwdChangedHookSpecificOutput | FileChangedHookSpecificOutput
    | WorktreeCreateHookSpecificOutput | MessageDisplayHookSpecificOutput
)  # fmt: skip


class AsyncHookJSONOutput(TypedDict):
    """A hook that defers its decision (``async_``); openagent waits for every hook, so it decides nothing."""

    async_: Literal[True]
    asyncTimeout: NotRequired[int]


class SyncHookJSONOutput(TypedDict):
    """What a hook callback returns: control fields, a decision, and ``hookSpecificOutput``."""

    continue_: NotRequired[bool]
    suppressOutput: NotRequired[bool]
    stopReason: NotRequired[str]
    decision: NotRequired[Literal["block"]]
    systemMessage: NotRequired[str]
    reason: NotRequired[str]
    hookSpecificOutput: NotRequired[HookSpecificOutput]


HookJSONOutput: TypeAlias = AsyncHookJSONOutput | SyncHookJSONOutput

HookCallback: TypeAlias = Callable[[HookInput, str | None, HookContext], Awaitable[HookJSONOutput]]
