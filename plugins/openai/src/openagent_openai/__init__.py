"""OpenAI's two wire formats for openagent — chat completions and the Responses API — and the providers that
speak them.

``openai`` (the Responses API; chat completions for the models only it serves), ``openai-chat``,
``ollama``, ``lmstudio``, ``llamacpp``, ``vllm``, ``openrouter``, ``openai-compatible`` (any ``base_url``,
chat completions) and ``openai-responses`` (any ``base_url``, Responses): one `OpenAIProfile` each over two
adapters, `ChatCompletionsProvider` and `ResponsesProvider`. `web_search`, `file_search`,
`code_interpreter` and `mcp` make the Responses API's hosted tools.
"""  # noqa: D205

from __future__ import annotations

from functools import partial
from typing import Any

from openagent.hookspecs import hookimpl

from ._hosted import code_interpreter, file_search, mcp, web_search
from ._profiles import PROFILES, OpenAIProfile
from ._provider import ChatCompletionsProvider, ResponsesProvider, make_provider

__all__ = [
    "PROFILES",
    "ChatCompletionsProvider",
    "OpenAIProfile",
    "ResponsesProvider",
    "code_interpreter",
    "file_search",
    "make_provider",
    "mcp",
    "register_providers",
    "web_search",
]


@hookimpl
def register_providers(register: Any) -> None:
    """Register one provider per profile: ``ollama:qwen3``, ``openai:gpt-5``, ``openai-chat:gpt-4.1``."""
    for name, profile in PROFILES.items():
        register(name, partial(make_provider, profile=profile))
