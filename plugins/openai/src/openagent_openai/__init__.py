"""The OpenAI chat-completions wire format for openagent, and the providers that speak it.

``openai``, ``ollama``, ``lmstudio``, ``llamacpp``, ``vllm``, ``openrouter`` and ``openai-compatible`` (any
``base_url``): one adapter, one `OpenAIProfile` each. Registering them imports only the profiles; the
adapter and ``httpx2`` load with the first provider made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.hookspecs import hookimpl, lazy

from ._profiles import PROFILES, OpenAIProfile

if TYPE_CHECKING:
    from ._http import aclose_connections
    from ._provider import ChatCompletionsProvider

__all__ = ["PROFILES", "ChatCompletionsProvider", "OpenAIProfile", "aclose_connections", "register_providers"]


def __getattr__(name: str) -> Any:
    if name == "ChatCompletionsProvider":  # the adapter, imported on first use
        from ._provider import ChatCompletionsProvider

        return ChatCompletionsProvider
    if name == "aclose_connections":
        from ._http import aclose_connections

        return aclose_connections
    raise AttributeError(f"module 'openagent_openai' has no attribute {name!r}")


@hookimpl
def register_providers(register: Any) -> None:
    """Register one provider per profile: ``ollama:qwen3``, ``openai:gpt-4.1-mini``."""
    for name, profile in PROFILES.items():
        register(name, lazy("openagent_openai._provider:ChatCompletionsProvider", profile=profile))
