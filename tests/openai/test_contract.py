"""The shared provider contract suite, run over cassettes recorded from a real llama.cpp server.

Re-record against a live server (``--record-mode=rewrite``, see RECORDING below)::

    OPENAGENT_RECORD_PROVIDER=llamacpp OPENAGENT_RECORD_BASE_URL=http://127.0.0.1:8080/v1 \\
    OPENAGENT_RECORD_API_KEY=secret nox -s record

The server must require ``OPENAGENT_RECORD_API_KEY`` (llama-server ``--api-key``), so that ``test_errors``
records a real 401. Cassettes marked ``constructed: true`` were built from the provider's documented
examples because the recorded model cannot show the behaviour; a recording replaces them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from openagent._contract import ProviderContract
from openagent.errors import AuthenticationError
from openagent_openai import PROFILES, ChatCompletionsProvider

pytestmark = pytest.mark.vcr

PROVIDER = os.environ.get("OPENAGENT_RECORD_PROVIDER", "llamacpp")
BASE_URL = os.environ.get("OPENAGENT_RECORD_BASE_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("OPENAGENT_RECORD_API_KEY", "recorded-key")
MODEL = os.environ.get("OPENAGENT_RECORD_MODEL", "qwen3-0.6b")


class TestChatCompletions(ProviderContract):
    model = MODEL
    supports_parallel_tool_calls = True
    supports_reasoning = True
    expected_error = AuthenticationError

    @pytest.fixture
    async def provider(self) -> AsyncIterator[ChatCompletionsProvider]:
        provider = ChatCompletionsProvider(MODEL, profile=PROFILES[PROVIDER], base_url=BASE_URL, api_key=API_KEY)
        yield provider
        await provider.aclose()

    @pytest.fixture
    async def failing_provider(self) -> AsyncIterator[ChatCompletionsProvider]:
        provider = ChatCompletionsProvider(MODEL, profile=PROFILES[PROVIDER], base_url=BASE_URL, api_key="wrong")
        yield provider
        await provider.aclose()
