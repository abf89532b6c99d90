"""The OpenAI chat-completions wire format for openagent, and the providers that speak it.

``openai``, ``ollama``, ``lmstudio``, ``llamacpp``, ``vllm``, ``openrouter`` and ``openai-compatible`` (any
``base_url``): one adapter, one `OpenAIProfile` each.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from openagent.plugin import hookimpl

from ._profiles import PROFILES, OpenAIProfile
from ._provider import ChatCompletionsProvider

__all__ = ["PROFILES", "ChatCompletionsProvider", "OpenAIProfile", "register_providers"]


@hookimpl
def register_providers(register: Any) -> None:
    """Register one provider per profile: ``ollama:qwen3``, ``openai:gpt-4.1-mini``."""
    for name, profile in PROFILES.items():
        register(name, partial(ChatCompletionsProvider, profile=profile))
