"""Profiles, base URL and key resolution, plugin registration, and the lazy import of the openai package."""

from __future__ import annotations

import subprocess
import sys

import pytest

import openagent_openai
from openagent.errors import ConfigError
from openagent.models import Provider
from openagent.plugins import load_plugins
from openagent_openai import PROFILES, ChatCompletionsProvider, OpenAIProfile
from openagent_openai._profiles import PLACEHOLDER_KEY

NAMES = [
    "openai",
    "openai-chat",
    "ollama",
    "lmstudio",
    "llamacpp",
    "vllm",
    "openrouter",
    "openai-compatible",
    "openai-responses",
]


def test_every_provider_is_registered_by_the_plugin() -> None:
    registry = load_plugins(extra=[("openai", openagent_openai)])
    assert registry.plugins["openai"].error is None
    assert sorted(registry.plugins["openai"].providers) == sorted(NAMES)
    provider = registry.provider_factory("ollama")("qwen3:8b", base_url=None, api_key=None)
    assert isinstance(provider, ChatCompletionsProvider) and isinstance(provider, Provider)
    assert provider.profile is PROFILES["ollama"] and provider.model == "qwen3:8b"


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("openai", "https://api.openai.com/v1"),
        ("ollama", "http://localhost:11434/v1"),
        ("lmstudio", "http://localhost:1234/v1"),
        ("llamacpp", "http://localhost:8080/v1"),
        ("vllm", "http://localhost:8000/v1"),
        ("openrouter", "https://openrouter.ai/api/v1"),
    ],
)
def test_profile_default_urls(name: str, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    assert ChatCompletionsProvider("m", profile=PROFILES[name]).base_url == url
    assert isinstance(PROFILES[name], OpenAIProfile)


def test_base_url_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vendor/v1")
    assert ChatCompletionsProvider("m", profile=PROFILES["openai"]).base_url == "http://vendor/v1"
    monkeypatch.setenv("OPENAGENT_BASE_URL", "http://ours/v1/")
    assert ChatCompletionsProvider("m", profile=PROFILES["openai"]).base_url == "http://ours/v1"
    given = ChatCompletionsProvider("m", profile=PROFILES["openai"], base_url="http://given/v1")
    assert given.base_url == "http://given/v1"


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:11500", "http://127.0.0.1:11500/v1"),
        ("http://gpu:11434/", "http://gpu:11434/v1"),
        ("https://gpu.example/v1", "https://gpu.example/v1"),
    ],
)
def test_ollama_host(host: str, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", host)
    assert ChatCompletionsProvider("m", profile=PROFILES["ollama"]).base_url == url


def test_key_order_and_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ChatCompletionsProvider("m", profile=PROFILES["llamacpp"])._api_key == PLACEHOLDER_KEY
    monkeypatch.setenv("OPENAI_API_KEY", "vendor")
    assert ChatCompletionsProvider("m", profile=PROFILES["openai"])._api_key == "vendor"
    monkeypatch.setenv("OPENAGENT_API_KEY", "ours")
    assert ChatCompletionsProvider("m", profile=PROFILES["openai"])._api_key == "ours"
    assert ChatCompletionsProvider("m", profile=PROFILES["openai"], api_key="given")._api_key == "given"


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        ChatCompletionsProvider("m", profile=PROFILES["openai"])


def test_openai_compatible_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        ChatCompletionsProvider("m", profile=PROFILES["openai-compatible"])
    assert ChatCompletionsProvider(
        "m", profile=PROFILES["openai-compatible"], base_url="http://h/v1"
    ).base_url


def test_repr_never_shows_the_key() -> None:
    provider = ChatCompletionsProvider("m", profile=PROFILES["llamacpp"], api_key="sk-secret")
    assert "sk-secret" not in repr(provider) and "llamacpp" in repr(provider)


def test_import_is_cheap_and_openai_loads_on_first_use() -> None:
    code = "import sys, openagent_openai; print('openai' in sys.modules, 'httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_request_never_imports_the_openai_package() -> None:
    code = (
        "import sys, anyio, httpx2; sys.modules['openai'] = None\n"
        "from openagent.models import ModelRequest\n"
        "from openagent.types import UserMessage\n"
        "from openagent_openai import ChatCompletionsProvider, PROFILES\n"
        'body = b\'data: {"choices": [{"index": 0, "delta": {"content": "ok"}}]}\\n\\ndata: [DONE]\\n\\n\'\n'
        "answer = lambda r: httpx2.Response(200, headers={'content-type': 'text/event-stream'}, content=body)\n"
        "client = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))\n"
        "p = ChatCompletionsProvider('m', profile=PROFILES['llamacpp'], http_client=client)\n"
        "async def main():\n"
        "    print([type(e).__name__ for e in [e async for e in p.stream(ModelRequest('m', [UserMessage(content='hi')]))]])\n"
        "    await p.aclose()\n"
        "anyio.run(main)\n"
        "print('openai' in sys.modules and sys.modules['openai'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["['TextDelta', 'Stop']", "False"]
