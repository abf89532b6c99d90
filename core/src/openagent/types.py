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
    "Message",
    "RawBlock",
    "ResultMessage",
    "ResultSubtype",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseError",
    "Usage",
    "UserMessage",
    "parse_message",
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


class StreamEvent(_Model):
    """A partial delta (only with ``include_partial_messages=True``), shaped as an Anthropic stream event."""

    type: Literal["stream_event"] = "stream_event"
    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


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
    if isinstance(data, dict):
        return _adapter.validate_python(data)
    return _adapter.validate_json(data)
