"""The shared provider contract suite over the anthropic provider's cassettes.

The cassettes in cassettes/anthropic/test_contract/ are Anthropic API exchanges constructed from the
documented stream format (their metadata says so) until ``ANTHROPIC_API_KEY=… nox -s record`` re-records
them against the real API; network is blocked when they play.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openagent._contract import ProviderContract
from openagent._errors import AuthenticationError
from openagent_anthropic import MessagesProvider


@pytest.mark.vcr
@pytest.mark.usefixtures("played")
class TestAnthropicContract(ProviderContract):
    model = "claude-sonnet-4-6"
    expected_error = AuthenticationError
    # Thinking needs temperature unset and the thinking blocks replayed with tool calls, which the shared
    # tool round trip does not do: reasoning is covered in test_constructed.py.
    supports_reasoning = False

    @pytest.fixture
    async def provider(self, anyio_backend: str, anthropic_key: str) -> AsyncIterator[MessagesProvider]:
        provider = MessagesProvider(self.model, api_key=anthropic_key)
        yield provider
        await provider.aclose()

    @pytest.fixture
    async def failing_provider(
        self, anyio_backend: str, anthropic_key: str
    ) -> AsyncIterator[MessagesProvider]:
        provider = MessagesProvider(self.model, api_key="sk-ant-invalid")
        yield provider
        await provider.aclose()
