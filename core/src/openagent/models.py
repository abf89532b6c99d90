"""The provider interface: what the loop sends a model endpoint, and the events it gets back.

A provider turns one `ModelRequest` into an async stream of normalised `ModelEvent`s. The loop never sees a
vendor's wire format: a wire-format adapter (in a plugin) parses bytes into these events, and a
`ProviderProfile` describes one endpoint on that wire format.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from .errors import ConfigError
from .types import AssistantMessage, TextBlock, Usage, UserMessage

if TYPE_CHECKING:
    from .options import AgentOptions

__all__ = [
    "ModelEvent",
    "ModelRequest",
    "Provider",
    "ProviderFactory",
    "ProviderProfile",
    "RawContent",
    "Stop",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallStart",
    "ToolSpec",
    "Usage",
    "resolve_provider",
    "warn_if_tools_unsupported",
    "split_model",
]


# --- events a provider yields ------------------------------------------------------------------------------
# Plain slotted dataclasses, not pydantic models: one is made per streamed chunk, on the hot path.


@dataclass(slots=True, frozen=True)
class TextDelta:
    """A piece of answer text, incremental (never the whole text so far)."""

    text: str


@dataclass(slots=True, frozen=True)
class ThinkingDelta:
    """A piece of reasoning text, and/or a piece of its signature."""

    thinking: str = ""
    signature: str = ""


@dataclass(slots=True, frozen=True)
class ToolCallStart:
    """A tool call begins. ``index`` identifies the call among this turn's calls; ``id`` is never empty."""

    index: int
    id: str
    name: str


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A fragment of the JSON text of the arguments of the call at ``index``."""

    index: int
    arguments: str


@dataclass(slots=True, frozen=True)
class Stop:
    """The turn ended. ``reason`` is normalised (``end_turn``, ``tool_use``, ``max_tokens``,
    ``stop_sequence``, ``refusal``); ``raw`` keeps the vendor's own value.
    """  # noqa: D205

    reason: str
    raw: str | None = None


@dataclass(slots=True, frozen=True)
class RawContent:
    """A whole provider-specific block to keep verbatim (becomes a `RawBlock` in the turn's content)."""

    provider: str
    data: dict[str, Any]


ModelEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta | RawContent | Usage | Stop
"""What `Provider.stream` yields. A `Usage` carries running totals for the request (later ones supersede
earlier ones field by field, see `Usage.merge`). The stream ends after `Stop`; a stream that ends without
one is treated as a truncated response."""


# --- the request -------------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """A tool as a model sees it: name, description and JSON schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    """Everything one model call needs, in core types."""

    model: str
    """The model name within its provider (``qwen3:8b`` for ``ollama:qwen3:8b``)."""
    messages: list[UserMessage | AssistantMessage]
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    tool_choice: str | dict[str, Any] | None = None
    """``"auto"``, ``"none"``, ``"required"``/``"any"``, or ``{"type": "tool", "name": ...}``."""
    parallel_tool_calls: bool | None = None
    output_format: dict[str, Any] | None = None
    """``{"type": "json_schema", "schema": {...}}`` when structured output is asked for."""
    extra_body: dict[str, Any] | None = None
    """Merged verbatim into the request body by the wire format."""
    timeout: float | None = None
    metadata: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None
    """``{"type": "enabled", "budget_tokens": N}``, ``{"type": "adaptive"}`` or ``{"type": "disabled"}``;
    a wire format maps it to its endpoint's reasoning parameter."""
    effort: str | None = None
    """Reasoning effort: ``low``, ``medium``, ``high``, ``xhigh`` or ``max`` (mapped per endpoint)."""
    betas: list[str] | None = None
    """Anthropic beta features (the ``anthropic-beta`` header); other wire formats ignore them."""
    user: str | None = None
    """The end user's id, where the API has a field for it."""

    def last_user_text(self) -> str:
        """The text of the most recent user message (empty when there is none)."""
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                if isinstance(message.content, str):
                    return message.content
                return "".join(b.text for b in message.content if isinstance(b, TextBlock))
        return ""


# --- providers ---------------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True, kw_only=True)
class ProviderProfile:
    """Capabilities and defaults of one endpoint. Wire formats subclass it to add their quirks."""

    name: str
    base_url: str | None = None
    api_key_env: str | None = None
    """The vendor's standard environment variable for the key (``OPENAI_API_KEY``)."""
    requires_api_key: bool = True
    """False for local servers: a placeholder key is sent when none is configured."""
    local: bool = False
    """The endpoint runs on the user's own machine or network: its turns cost ``0.0``."""
    supports_tools: bool = True
    supports_parallel_tool_calls: bool = True
    supports_json_schema: bool = False
    """Whether the endpoint enforces a JSON schema on the answer natively."""
    tool_call_protocol: Literal["native", "text"] = "native"
    """``text``: tools are described in the prompt and calls parsed from ``<tool_call>`` tags."""
    context_window: int | None = None


@runtime_checkable
class Provider(Protocol):
    """A model endpoint: turns a request into a stream of events.

    Implementations raise `openagent.errors.ProviderError` subclasses for every failure (HTTP errors,
    malformed streams); the loop applies the retry policy and never sees vendor exceptions.
    """

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send ``request`` and yield its events as they arrive."""
        ...


ProviderFactory: TypeAlias = Callable[..., Provider]
"""``factory(model, *, base_url=None, api_key=None) -> Provider``, registered under a provider name."""


def split_model(model: str) -> tuple[str, str]:
    """Split ``"provider:model"`` on the first colon: ``"ollama:qwen3:8b"`` → ``("ollama", "qwen3:8b")``."""
    provider, sep, name = model.partition(":")
    if not sep or not provider:
        raise ConfigError(
            f"model {model!r} must be 'provider:model', e.g. 'ollama:qwen3' or 'openai:gpt-4.1-mini'"
        )
    return provider.strip().lower(), name


def resolve_provider(options: AgentOptions) -> tuple[Provider, str]:
    """The provider instance for the options' model, and the model name to send."""
    model = options.resolved_model()
    if not isinstance(model, str):
        return model, str(getattr(model, "model", type(model).__name__))
    from .plugins import registry

    name, model_name = split_model(model)
    factory = registry().provider_factory(name)
    return factory(model_name, base_url=options.base_url, api_key=options.api_key), model_name


_WARNED: set[str] = set()


def warn_if_tools_unsupported(provider: Provider, model: str, has_tools: bool) -> None:
    """Warn once per model when tools were given to an endpoint that its profile says cannot call them."""
    profile = getattr(provider, "profile", None)
    if not has_tools or profile is None or profile.supports_tools or profile.tool_call_protocol == "text":
        return
    if model not in _WARNED:
        _WARNED.add(model)
        warnings.warn(
            f"{profile.name}:{model} cannot call tools natively, so the tools given will not be used; "
            "use a profile with tool_call_protocol='text' (tool calls parsed from <tool_call> tags) instead",
            stacklevel=4,
        )
