"""Messages, content blocks, stream events and usage, named as in the Claude Agent SDK.

Every type is a pydantic v2 model tagged by a ``type`` field, so any message or block round-trips through
JSON (``Message`` / ``ContentBlock`` are discriminated unions; `parse_message` rebuilds one from a dict).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "HookEventMessage",
    "Message",
    "RawBlock",
    "ResultMessage",
    "ResultSubtype",
    "StreamEvent",
    "SystemMessage",
    "TaskNotificationMessage",
    "TaskStartedMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseError",
    "Usage",
    "UserMessage",
    "parse_message",
    "system_message",
]


class _Model(BaseModel):
    # defer_build: schemas are built on first use, not at import (keeps `import openagent` fast)
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Usage(_Model):
    """Token counts, as the Anthropic API names them; ``a + b`` adds field by field."""

    input_tokens: int = 0
    """Prompt tokens, excluding cache reads and writes where the provider separates them."""
    output_tokens: int = 0
    """Generated tokens, including reasoning tokens."""
    cache_creation_input_tokens: int = 0
    """Prompt tokens written to the provider's prompt cache."""
    cache_read_input_tokens: int = 0
    """Prompt tokens served from the provider's prompt cache."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def merge(self, later: Usage) -> Usage:
        """Combine two reports of the same request's running totals: the larger count wins per field."""
        return Usage(
            input_tokens=max(self.input_tokens, later.input_tokens),
            output_tokens=max(self.output_tokens, later.output_tokens),
            cache_creation_input_tokens=max(
                self.cache_creation_input_tokens, later.cache_creation_input_tokens
            ),
            cache_read_input_tokens=max(self.cache_read_input_tokens, later.cache_read_input_tokens),
        )

    def __getitem__(self, key: str) -> int:
        """``usage["input_tokens"]``, as code written for the Claude Agent SDK's usage dicts reads it."""
        if key not in type(self).model_fields:
            raise KeyError(key)
        return int(getattr(self, key))

    @property
    def total_tokens(self) -> int:
        """All tokens counted, prompt (cached or not) and output."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )


# --- content blocks ---------------------------------------------------------------------------------------


class TextBlock(_Model):
    """Text the model wrote."""

    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Model):
    """The model's reasoning; `signature` is replayed verbatim where the provider requires it."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class ToolUseBlock(_Model):
    """A tool call with arguments that parsed to a JSON object."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(_Model):
    """The answer to a `ToolUseBlock`, sent back to the model in a `UserMessage`."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None
    structured_content: Any = None
    """A tool's machine-readable result (MCP ``structuredContent``), for hooks and callers; never sent."""


class ToolUseError(_Model):
    """A tool call the model garbled (arguments that are not a JSON object, no name …).

    It stays visible in the transcript with the raw data, is answered with an error result so the model can
    try again, and is never executed or sent back as if it were valid.
    """

    type: Literal["tool_use_error"] = "tool_use_error"
    id: str
    """The call's id (generated when the model sent none), so the error result can answer it."""
    name: str
    """The tool name as the model wrote it (may be empty)."""
    error: str
    """What is wrong, phrased for the model."""
    raw_data: str
    """The raw argument text exactly as received."""


class RawBlock(_Model):
    """A provider-specific block kept verbatim, replayed only to the wire format that produced it
    (Anthropic's ``redacted_thinking``, ``server_tool_use``, ``web_search_tool_result`` …).
    """  # noqa: D205

    type: Literal["raw"] = "raw"
    provider: str
    """The wire format that produced it (``anthropic``)."""
    data: dict[str, Any]
    """The block exactly as the provider sent it."""


ContentBlock: TypeAlias = Annotated[
    TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ToolUseError | RawBlock,
    Field(discriminator="type"),
]
"""Any content block, discriminated by ``type``."""


# --- messages ---------------------------------------------------------------------------------------------

ResultSubtype: TypeAlias = Literal[
    "success",
    "error_max_turns",
    "error_during_execution",
    "error_max_budget_usd",
    "error_max_structured_output_retries",
]


class SystemMessage(_Model):
    """Out-of-band information; ``subtype="init"`` opens every run with session id, model, tools and cwd."""

    type: Literal["system"] = "system"
    subtype: str
    data: dict[str, Any] = Field(default_factory=dict)


class UserMessage(_Model):
    """A user turn: the prompt, or the tool results the loop sends back."""

    type: Literal["user"] = "user"
    content: str | list[ContentBlock]
    parent_tool_use_id: str | None = None
    uuid: str | None = None


class AssistantMessage(_Model):
    """One complete model turn."""

    type: Literal["assistant"] = "assistant"
    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    """``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence``, … normalised across providers."""
    uuid: str | None = None
    """The id of this message in the session (``resume_session_at`` and forks cut a session at one)."""


class ResultMessage(_Model):
    """The last message of every run, with its outcome, cost and usage."""

    type: Literal["result"] = "result"
    subtype: ResultSubtype
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    total_cost_usd: float | None = None
    usage: Usage | None = None
    result: str | None = None
    """The final text on success, the error text otherwise."""
    structured_output: Any = None
    stop_reason: str | None = None
    terminal_reason: str | None = None
    """Why the run ended: ``completed``, ``max_turns``, ``max_budget``, ``interrupted``, ``api_error``,
    ``hook_stopped``, ``tool_pending`` or ``structured_output_retries``."""
    permission_denials: list[dict[str, Any]] | None = None
    """The tool calls refused during the run: ``tool_name``, ``tool_use_id``, ``tool_input``."""
    model_usage: dict[str, dict[str, Any]] | None = None
    """Per model: ``inputTokens``, ``outputTokens``, cache counts and ``costUSD`` (a fallback model shows
    up as a second entry)."""
    uuid: str | None = None


class StreamEvent(_Model):
    """A partial delta (only with ``include_partial_messages=True``), shaped as an Anthropic stream event."""

    type: Literal["stream_event"] = "stream_event"
    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


class _StampedMessage(SystemMessage):
    """A system message whose ``data`` carries its ``session_id`` and ``uuid``."""

    @property
    def session_id(self) -> str | None:
        """The session the message belongs to."""
        return self.data.get("session_id")

    @property
    def uuid(self) -> str | None:
        """This message's id."""
        return self.data.get("uuid")


class HookEventMessage(_StampedMessage):
    """A hook ran (only with ``include_hook_events=True``): ``subtype`` is ``hook_started`` or
    ``hook_response``; ``data`` holds ``hook_event`` (the event name), the hook's name, and for a response
    its ``output`` and ``outcome`` (``success`` / ``error``).
    """  # noqa: D205

    @property
    def hook_event_name(self) -> str:
        """The event (``PreToolUse``, ``Stop`` …)."""
        return str(self.data.get("hook_event", ""))


class _TaskMessage(_StampedMessage):
    @property
    def task_id(self) -> str:
        """The task's id: give it to ``Client.stop_task`` to stop the task."""
        return str(self.data.get("task_id", ""))

    @property
    def tool_use_id(self) -> str | None:
        """The ``Task`` tool call that started the task."""
        return self.data.get("tool_use_id")


class TaskStartedMessage(_TaskMessage):
    """A subagent task started (``subtype="task_started"``; ``data``: ``task_id``, ``description``,
    ``tool_use_id``, ``task_type``).
    """  # noqa: D205

    @property
    def description(self) -> str:
        """What the task does."""
        return str(self.data.get("description", ""))

    @property
    def task_type(self) -> str | None:
        """The kind of task (``local_agent`` for a subagent)."""
        return self.data.get("task_type")


class TaskNotificationMessage(_TaskMessage):
    """A subagent task ended (``subtype="task_notification"``; ``data``: ``task_id``, ``status``
    (``completed``, ``failed`` or ``stopped``), ``summary``, ``usage``).
    """  # noqa: D205

    @property
    def status(self) -> str:
        """``completed``, ``failed`` or ``stopped``."""
        return str(self.data.get("status", ""))

    @property
    def summary(self) -> str:
        """The task's final text, or why it ended."""
        return str(self.data.get("summary", ""))

    @property
    def output_file(self) -> str:
        """Where the task's output was written (always empty: it is in ``summary``)."""
        return str(self.data.get("output_file", ""))

    @property
    def usage(self) -> dict[str, Any] | None:
        """``total_tokens``, ``tool_uses``, ``duration_ms``."""
        return self.data.get("usage")


_SYSTEM_KINDS: dict[str, type[SystemMessage]] = {
    "hook_started": HookEventMessage,
    "hook_response": HookEventMessage,
    "task_started": TaskStartedMessage,
    "task_notification": TaskNotificationMessage,
}
"""System subtypes that have a class of their own (same fields: only the class differs)."""


def system_message(subtype: str, data: dict[str, Any]) -> SystemMessage:
    """A `SystemMessage` of the class its ``subtype`` has (`HookEventMessage`, `TaskStartedMessage` …)."""
    return _SYSTEM_KINDS.get(subtype, SystemMessage)(subtype=subtype, data=data)


Message: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ResultMessage | StreamEvent, Field(discriminator="type")
]
"""Any message a run yields, discriminated by ``type``."""

_adapter: TypeAdapter[Message] | None = None


def parse_message(data: dict[str, Any] | str | bytes) -> Message:
    """Rebuild a message from its JSON form (a dict, or JSON text)."""
    global _adapter
    if _adapter is None:  # built on first use: schema building is the slow part of importing pydantic
        _adapter = TypeAdapter(Message)
    message = _adapter.validate_python(data) if isinstance(data, dict) else _adapter.validate_json(data)
    if type(message) is SystemMessage and message.subtype in _SYSTEM_KINDS:
        return system_message(message.subtype, message.data)
    return message
