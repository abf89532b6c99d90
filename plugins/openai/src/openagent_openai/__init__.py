"""OpenAI's two wire formats for openagent — chat completions and the Responses API — and the providers that
speak them.

``openai`` (the Responses API; chat completions for the models only it serves), ``openai-chat``,
``ollama``, ``lmstudio``, ``llamacpp``, ``vllm``, ``openrouter``, ``openai-compatible`` (any ``base_url``,
chat completions) and ``openai-responses`` (any ``base_url``, Responses): one `OpenAIProfile` each over two
adapters, `ChatCompletionsProvider` and `ResponsesProvider`. `web_search`, `file_search`,
`code_interpreter` and `mcp` make the Responses API's hosted tools. Registering the providers imports only
the profiles; the adapters and ``httpx2`` load with the first provider made.
"""  # noqa: D205

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.hookspecs import hookimpl, lazy

from ._hosted import code_interpreter, file_search, mcp, web_search
from ._profiles import PROFILES, OpenAIProfile

if TYPE_CHECKING:
    from ._http import aclose_connections
    from ._provider import ChatCompletionsProvider, ResponsesProvider, make_provider

__all__ = [
    "PROFILES",
    "ChatCompletionsProvider",
    "OpenAIProfile",
    "ResponsesProvider",
    "aclose_connections",
    "code_interpreter",
    "file_search",
    "make_provider",
    "mcp",
    "register_providers",
    "web_search",
]
_ADAPTERS = frozenset({"ChatCompletionsProvider", "ResponsesProvider", "make_provider"})


def __getattr__(name: str) -> Any:
    if name in _ADAPTERS:  # the adapters, imported on first use
        from . import _provider

        return getattr(_provider, name)
    if name == "aclose_connections":
        from ._http import aclose_connections

        return aclose_connections
    raise AttributeError(f"module 'openagent_openai' has no attribute {name!r}")


@hookimpl
def register_providers(register: Any) -> None:
    """Register one provider per profile: ``ollama:qwen3``, ``openai:gpt-5``, ``openai-chat:gpt-4.1``."""
    for name, profile in PROFILES.items():
        register(name, lazy("openagent_openai._provider:make_provider", profile=profile))
