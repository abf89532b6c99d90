"""The shared provider contract suite, run over cassettes recorded from a real llama.cpp server.

Re-record against a live server that requires ``OPENAGENT_RECORD_API_KEY`` (llama-server ``--api-key``), so
that ``test_errors`` records a real 401::

    OPENAGENT_RECORD_PROVIDER=llamacpp OPENAGENT_RECORD_BASE_URL=http://127.0.0.1:8080/v1 \\
    OPENAGENT_RECORD_API_KEY=secret OPENAGENT_RECORD_MODEL=smollm2 nox -s record

Cassettes whose first line says ``constructed: true`` were built from a provider's documented example
(see openai_constructed.py) because the recorded model cannot show the behaviour; a recording replaces them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from openai_constructed import constructing, mock_client

from openagent._errors import AuthenticationError
from openagent.testing import ProviderContract
from openagent_openai import PROFILES, ChatCompletionsProvider

pytestmark = pytest.mark.vcr

PROVIDER = os.environ.get("OPENAGENT_RECORD_PROVIDER", "llamacpp")
BASE_URL = os.environ.get("OPENAGENT_RECORD_BASE_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("OPENAGENT_RECORD_API_KEY", "recorded-key")
MODEL = os.environ.get("OPENAGENT_RECORD_MODEL", "smollm2-135m-instruct")
CONSTRUCT = os.environ.get("OPENAGENT_CONSTRUCT", "")


class TestChatCompletions(ProviderContract):
    model = MODEL
    supports_parallel_tool_calls = True
    supports_reasoning = True
    expected_error = AuthenticationError

    def _provider(self, request: pytest.FixtureRequest, api_key: str) -> ChatCompletionsProvider:
        name = request.node.originalname
        client: Any = mock_client(name) if constructing(name, CONSTRUCT) else None
        return ChatCompletionsProvider(
            MODEL, profile=PROFILES[PROVIDER], base_url=BASE_URL, api_key=api_key, http_client=client
        )

    @pytest.fixture
    async def provider(self, request: pytest.FixtureRequest) -> AsyncIterator[ChatCompletionsProvider]:
        provider = self._provider(request, API_KEY)
        yield provider
        await provider.aclose()

    @pytest.fixture
    async def failing_provider(
        self, request: pytest.FixtureRequest
    ) -> AsyncIterator[ChatCompletionsProvider]:
        provider = self._provider(request, "wrong-key")
        yield provider
        await provider.aclose()
