"""The provider interface: what the loop sends a model endpoint, and the events it gets back.

A provider turns one `ModelRequest` into an async stream of normalised `ModelEvent`s. The loop never sees a
vendor's wire format: a wire-format adapter (in a plugin) parses bytes into these events. Two records
describe what is on the other end, kept apart as pydantic-ai keeps them: a `ProviderProfile` says what an
*endpoint* is (base URL, auth, wire quirks), a `ModelProfile` what a *model* can do (context window, output
limit, tools, vision, reasoning, JSON schema, prices). A model's profile is layered: the endpoint's defaults,
then maintained data (plugins' ``register_model_profiles``), then what the server reports, then the run's
``AgentOptions.model_profile``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, fields
from dataclasses import replace as _replace
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ._errors import ConfigError
from ._types import AssistantMessage, TextBlock, Usage, UserMessage, json_adapter

__all__ = [
    "ModelEvent",
    "ModelProfile",
    "ModelProfileSource",
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
    model_profile: ModelProfile | None = None
    """What the model can do, as the run resolved it (every layer); ``None``: the endpoint's defaults.
    Wire formats read per-model behaviour here (text tool protocol, native JSON schema …)."""

    def to_json(self) -> dict[str, Any]:
        """The request as JSON data (a workflow engine's activity input); `from_json` rebuilds it."""
        return json_adapter(ModelRequest).dump_python(self, mode="json", exclude_none=True)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelRequest:
        """Rebuild a request from `to_json`'s data."""
        return json_adapter(ModelRequest).validate_python(dict(data))

    def capabilities(self, endpoint: ProviderProfile | None) -> ModelProfile:
        """The model's profile: the request's, else ``endpoint``'s defaults, else an empty one."""
        if self.model_profile is not None:
            return self.model_profile
        return endpoint.defaults if endpoint is not None else _EMPTY

    def last_user_text(self) -> str:
        """The text of the most recent user message (empty when there is none)."""
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                if isinstance(message.content, str):
                    return message.content
                return "".join(b.text for b in message.content if isinstance(b, TextBlock))
        return ""


# --- what is on the other end ----------------------------------------------------------------------------


@dataclass(slots=True, frozen=True, kw_only=True)
class ModelProfile:
    """What one model can do. ``None`` means "not known here": a later layer, or the default, decides."""

    context_window: int | None = None
    """Tokens the model takes in one request (prompt and output)."""
    max_output_tokens: int | None = None
    supports_tools: bool | None = None
    supports_parallel_tool_calls: bool | None = None
    supports_vision: bool | None = None
    supports_reasoning: bool | None = None
    reasoning_parameter: str | None = None
    """The request field that sets the reasoning effort or budget (``reasoning_effort``, ``thinking``)."""
    supports_json_schema: bool | None = None
    """Whether the endpoint enforces a JSON schema on the answer for this model."""
    tool_call_protocol: Literal["native", "text"] | None = None
    """``text``: tools are described in the prompt and calls parsed from ``<tool_call>`` tags."""
    input_price: float | None = None
    """USD per million uncached prompt tokens (``0.0`` for a local model: free, not unknown)."""
    output_price: float | None = None
    """USD per million generated tokens, reasoning included."""
    cache_read_price: float | None = None
    """USD per million prompt tokens read from the cache; ``None``: the input price."""
    cache_write_price: float | None = None
    """USD per million prompt tokens written to the cache; ``None``: the input price."""

    @classmethod
    def of(cls, value: ModelProfile | Mapping[str, Any] | None) -> ModelProfile:
        """A profile from a profile, a dict of its fields (unknown keys raise `ConfigError`), or ``None``."""
        if value is None:
            return _EMPTY
        if isinstance(value, ModelProfile):
            return value
        unknown = set(value) - _PROFILE_FIELDS
        if unknown:
            raise ConfigError(f"unknown model profile field(s): {', '.join(sorted(unknown))}")
        return cls(**value)

    def over(self, base: ModelProfile) -> ModelProfile:
        """``base`` with every field this profile knows (is not ``None``) put over it."""
        known = {f: v for f in _PROFILE_FIELDS if (v := getattr(self, f)) is not None}
        return _replace(base, **known) if known else base

    def cost(self, usage: Usage) -> float | None:
        """What ``usage`` cost in USD, or ``None`` when the prices are not known."""
        if self.input_price is None or self.output_price is None:
            return None
        read = self.input_price if self.cache_read_price is None else self.cache_read_price
        write = self.input_price if self.cache_write_price is None else self.cache_write_price
        return (
            usage.input_tokens * self.input_price
            + usage.output_tokens * self.output_price
            + usage.cache_read_input_tokens * read
            + usage.cache_creation_input_tokens * write
        ) / 1_000_000


_EMPTY = ModelProfile()
_PROFILE_FIELDS = frozenset(f.name for f in fields(ModelProfile))

ModelProfileSource: TypeAlias = Callable[[str, str], ModelProfile | None]
"""``source(provider_name, model) -> ModelProfile | None``: maintained model data (prices, windows) that a
plugin registers with ``register_model_profiles``; ``None`` for a model it does not know."""


@dataclass(slots=True, frozen=True, kw_only=True)
class ProviderProfile:
    """What one endpoint is: its name, default URL and auth. Wire formats subclass it to add their quirks.

    ``defaults`` is what every model behind it can do unless a model's own data says otherwise.
    """

    name: str
    base_url: str | None = None
    api_key_env: str | None = None
    """The vendor's standard environment variable for the key (``OPENAI_API_KEY``)."""
    requires_api_key: bool = True
    """False for local servers: a placeholder key is sent when none is configured."""
    local: bool = False
    """The endpoint runs on the user's own machine or network: its turns cost ``0.0``."""
    defaults: ModelProfile = _EMPTY
    """Capabilities every model on this endpoint has, unless known better per model."""


@runtime_checkable
class Provider(Protocol):
    """A model endpoint: turns a request into a stream of events.

    Implementations raise `openagent._errors.ProviderError` subclasses for every failure (HTTP errors,
    malformed streams); the loop applies the retry policy and never sees vendor exceptions. Optional, used
    when present: ``profile`` (a `ProviderProfile`), ``async model_profile() -> ModelProfile | None`` (what
    the server reports about the model, e.g. its context window; asked at most once per provider, and only
    when a run needs it) and ``async aclose()``.
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
