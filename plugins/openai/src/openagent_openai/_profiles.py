"""The endpoints that speak OpenAI's wire formats, as data: defaults, auth, which wire, and wire quirks.

A provider is one `OpenAIProfile` over the shared adapters (`_chat` for chat completions, `_responses` for
the Responses API). Adding an OpenAI-compatible endpoint means adding a record here (or registering one from
a third-party plugin), never new parsing code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal

from openagent.errors import ConfigError
from openagent.models import ProviderProfile

__all__ = ["PROFILES", "OpenAIProfile", "resolve_api_key", "resolve_base_url"]

PLACEHOLDER_KEY = "openagent-no-key"
"""Sent to keyless local servers: the client library insists on a key, the server ignores it."""

ALL_TOOL_CHOICES = frozenset({"auto", "none", "required", "named"})
Wire = Literal["chat", "responses"]


@dataclass(slots=True, frozen=True, kw_only=True)
class OpenAIProfile(ProviderProfile):
    """One chat-completions endpoint: `ProviderProfile` plus the wire-format quirks it has."""

    base_url_env: str | None = None
    """The vendor's environment variable for the endpoint (``OPENAI_BASE_URL``, ``OLLAMA_HOST``)."""
    base_url_env_is_host: bool = False
    """The variable holds ``host[:port]`` (Ollama's ``OLLAMA_HOST``): add ``http://`` and ``/v1``."""
    reasoning_field: str | None = "reasoning_content"
    """Where a `ThinkingBlock` goes when history is replayed (``reasoning_content`` for llama.cpp, vLLM and
    DeepSeek; ``reasoning`` for Ollama and OpenRouter); ``None``: reasoning is not sent back. Both names
    are always read from the stream."""
    supports_stream_options: bool = True
    """Accepts ``stream_options: {"include_usage": true}`` (then usage comes in a last chunk whose
    ``choices`` is empty). Some servers reject the field, others report usage unasked."""
    tool_choice_forms: frozenset[str] = ALL_TOOL_CHOICES
    """The ``tool_choice`` forms accepted: ``auto``, ``none``, ``required``, ``named``. Others are left out
    of the request (the model then chooses freely) rather than have the server refuse it."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """OpenAI deprecated ``max_tokens`` (reasoning models refuse it); most local servers know only it."""
    accepts_parallel_tool_calls: bool = True
    """Accepts the ``parallel_tool_calls`` request field."""
    reasoning_param: Literal["reasoning_effort", "reasoning", "chat_template_kwargs"] | None = (
        "reasoning_effort"
    )
    """How the request's ``thinking`` / ``effort`` are sent: OpenAI's ``reasoning_effort`` (also Ollama and
    LM Studio), OpenRouter's ``reasoning`` object, or the chat template's ``enable_thinking`` switch
    (llama.cpp, vLLM); ``None``: not sent."""
    wire: Wire = "chat"
    """The wire format: ``chat`` (``POST /chat/completions``) or ``responses`` (``POST /responses``)."""
    chat_only_models: tuple[str, ...] = ()
    """Parts of model names served only by chat completions (``-search-preview``): those models use the chat
    wire whatever `wire` says."""
    reasoning_models: tuple[str, ...] = ()
    """Name prefixes of reasoning models (Responses wire): they get no sampling parameters (they refuse
    them), a reasoning summary is asked for, and with ``store: false`` their encrypted reasoning."""
    plain_models: tuple[str, ...] = ()
    """Parts of names that mark a model among `reasoning_models` as one that does not reason
    (``gpt-5-chat-latest``)."""
    store: bool | None = None
    """The Responses ``store`` field (``None``: not sent). ``False`` keeps nothing on the server: history,
    encrypted reasoning included, is sent with every request."""
    reasoning_summary: str | None = None
    """The ``reasoning.summary`` asked of reasoning models (``auto``, ``concise``, ``detailed``; ``None``:
    none). Summaries stream as thinking."""

    def wire_for(self, model: str) -> Wire:
        """The wire format ``model`` is reached with on this endpoint."""
        if self.wire == "responses" and any(part in model for part in self.chat_only_models):
            return "chat"
        return self.wire

    def is_reasoning(self, model: str) -> bool:
        """Whether ``model`` is a reasoning model (by `reasoning_models`)."""
        if not self.reasoning_models or not model.startswith(self.reasoning_models):
            return False
        return not any(part in model for part in self.plain_models)


_OPENAI = OpenAIProfile(
    name="openai",
    base_url="https://api.openai.com/v1",
    api_key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    supports_json_schema=True,
    reasoning_field=None,  # chat completions never returns OpenAI's reasoning
    max_tokens_field="max_completion_tokens",
    # OpenAI recommends the Responses API for every new project, and for reasoning models it is the only wire
    # that returns their reasoning to be carried to the next turn (docs/providers.md).
    wire="responses",
    chat_only_models=("-search-preview", "-audio-preview", "gpt-audio"),
    reasoning_models=("o1", "o3", "o4", "gpt-5", "codex"),
    plain_models=("-chat",),
    store=False,  # the session holds the history: nothing is kept on OpenAI's side
    reasoning_summary="auto",
)

PROFILES: dict[str, OpenAIProfile] = {
    "openai": _OPENAI,
    "openai-chat": replace(_OPENAI, name="openai-chat", wire="chat"),
    "ollama": OpenAIProfile(
        name="ollama",
        local=True,
        base_url="http://localhost:11434/v1",
        base_url_env="OLLAMA_HOST",
        base_url_env_is_host=True,
        requires_api_key=False,
        supports_json_schema=True,
        reasoning_field="reasoning",
        tool_choice_forms=frozenset({"auto"}),  # Ollama ignores tool_choice; say so by not sending it
        accepts_parallel_tool_calls=False,
    ),
    "lmstudio": OpenAIProfile(
        name="lmstudio",
        local=True,
        base_url="http://localhost:1234/v1",
        requires_api_key=False,
        supports_json_schema=True,
        tool_choice_forms=frozenset({"auto", "none", "required"}),
        accepts_parallel_tool_calls=False,
    ),
    "llamacpp": OpenAIProfile(
        name="llamacpp",
        local=True,
        reasoning_param="chat_template_kwargs",
        base_url="http://localhost:8080/v1",
        requires_api_key=False,
        supports_json_schema=True,
        tool_choice_forms=frozenset({"auto", "none", "required"}),
    ),
    "vllm": OpenAIProfile(
        name="vllm",
        local=True,
        reasoning_param="chat_template_kwargs",
        base_url="http://localhost:8000/v1",
        requires_api_key=False,
        supports_json_schema=True,
    ),
    "openrouter": OpenAIProfile(
        name="openrouter",
        reasoning_param="reasoning",
        base_url="https://openrouter.ai/api/v1",
        api_key_env="OPENROUTER_API_KEY",
        supports_json_schema=True,
        reasoning_field="reasoning",
    ),
    "openai-compatible": OpenAIProfile(
        name="openai-compatible",
        requires_api_key=False,
        supports_stream_options=False,  # the conservative choice for an unknown server
        tool_choice_forms=frozenset({"auto", "none", "required"}),
        accepts_parallel_tool_calls=False,
    ),
    # Any server that speaks /v1/responses (vLLM, llama.cpp, LM Studio, Ollama …): give `base_url`.
    "openai-responses": OpenAIProfile(
        name="openai-responses",
        requires_api_key=False,
        wire="responses",
        tool_choice_forms=frozenset({"auto", "none", "required"}),
    ),
}


def resolve_base_url(profile: OpenAIProfile, explicit: str | None) -> str:
    """Explicit argument, then ``OPENAGENT_BASE_URL``, then the vendor's variable, then the default."""
    url = explicit or os.environ.get("OPENAGENT_BASE_URL")
    if not url and profile.base_url_env and (value := os.environ.get(profile.base_url_env)):
        url = value
        if profile.base_url_env_is_host:
            url = url if "://" in url else f"http://{url}"
            url = url.rstrip("/") + ("" if url.rstrip("/").endswith("/v1") else "/v1")
    url = url or profile.base_url
    if not url:
        raise ConfigError(f"provider {profile.name!r} needs a base_url (or OPENAGENT_BASE_URL)")
    return url.rstrip("/")


def resolve_api_key(profile: OpenAIProfile, explicit: str | None) -> str:
    """Explicit argument, then ``OPENAGENT_API_KEY``, then the vendor's variable; a placeholder when the
    endpoint needs none.
    """  # noqa: D205
    key = explicit or os.environ.get("OPENAGENT_API_KEY")
    if not key and profile.api_key_env:
        key = os.environ.get(profile.api_key_env)
    if key:
        return key
    if not profile.requires_api_key:
        return PLACEHOLDER_KEY
    where = f"set {profile.api_key_env} or " if profile.api_key_env else ""
    raise ConfigError(f"provider {profile.name!r} needs an API key: {where}pass api_key=... ")
