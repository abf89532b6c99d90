"""The shared provider contract suite on the Responses wire, and what only this wire has, over cassettes.

test_text, test_usage and test_errors are recorded from llama.cpp's own server (``/v1/responses``, the
``xllamacpp`` wheel with SmolLM2-135M-Instruct), started with ``api_keys = ["secret"]`` so that test_errors
records a real 401::

    OPENAGENT_RECORD_BASE_URL=http://127.0.0.1:8080/v1 OPENAGENT_RECORD_API_KEY=secret \\
    OPENAGENT_RECORD_MODEL=smollm2-135m-instruct \\
    pytest tests/openai/test_contract_responses.py --record-mode=rewrite -k "text or usage or errors"

The other cassettes are OpenAI exchanges constructed from OpenAI's documented events (their first line
says ``constructed: true`` and where the example is; see responses_constructed.py): no server that runs here
makes reliable tool calls, reasons, or has hosted tools. ``OPENAI_API_KEY=… pytest
tests/openai/test_contract_responses.py --record-mode=rewrite -k "not text and not usage and not errors"``
records them from OpenAI instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from openai_constructed import constructing, mock_client
from responses_constructed import ANSWERS, ENCRYPTED

from openagent._contract import collect
from openagent.errors import AuthenticationError, ServerError, StreamError
from openagent.testing import ProviderContract
from openagent_openai import PROFILES, ResponsesProvider, web_search

pytestmark = pytest.mark.vcr

RECORDED = {"test_text", "test_usage", "test_errors"}
"""Recorded from the local server; the rest are OpenAI exchanges."""
BASE_URL = os.environ.get("OPENAGENT_RECORD_BASE_URL", "http://127.0.0.1:8080/v1")
API_KEY = os.environ.get("OPENAGENT_RECORD_API_KEY", "recorded-key")
MODEL = os.environ.get("OPENAGENT_RECORD_MODEL", "smollm2-135m-instruct")
OPENAI_MODEL = "gpt-5-mini"
OPENAI_KEY = os.environ.get("OPENAI_API_KEY", "recorded-key")
CONSTRUCT = os.environ.get("OPENAGENT_CONSTRUCT", "")
PLACE = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "additionalProperties": False,
}


class TestResponses(ProviderContract):
    model = MODEL
    supports_parallel_tool_calls = True
    supports_reasoning = True
    expected_error = AuthenticationError

    def _provider(self, request: pytest.FixtureRequest, wrong_key: bool = False) -> ResponsesProvider:
        name = request.node.originalname
        if name in RECORDED:
            profile, url, key = PROFILES["openai-responses"], BASE_URL, API_KEY
        else:
            profile, url, key = PROFILES["openai"], "https://api.openai.com/v1", OPENAI_KEY
            request.instance.model = OPENAI_MODEL  # what `self.request` asks for
        client: Any = mock_client(name, ANSWERS) if constructing(name, CONSTRUCT, ANSWERS) else None
        return ResponsesProvider(
            request.instance.model,
            profile=profile,
            base_url=url,
            api_key="wrong-key" if wrong_key else key,
            http_client=client,
        )

    @pytest.fixture
    def vcr_config(self, vcr_config: dict[str, Any], request: pytest.FixtureRequest) -> dict[str, Any]:
        """An OpenAI exchange is replayed, never re-recorded, unless there is a key to record it with (or it
        is being constructed): ``nox -s record`` against a local server leaves those cassettes as they are.
        """
        name = request.node.originalname
        if name in RECORDED or constructing(name, CONSTRUCT, ANSWERS) or "OPENAI_API_KEY" in os.environ:
            return vcr_config
        return {**vcr_config, "record_mode": "none"}

    @pytest.fixture
    async def provider(self, request: pytest.FixtureRequest) -> AsyncIterator[ResponsesProvider]:
        provider = self._provider(request)
        yield provider
        await provider.aclose()

    @pytest.fixture
    async def failing_provider(self, request: pytest.FixtureRequest) -> AsyncIterator[ResponsesProvider]:
        provider = self._provider(request, wrong_key=True)
        yield provider
        await provider.aclose()

    @pytest.mark.anyio
    async def test_tool_round_trip(self, provider: ResponsesProvider, vcr: Any) -> None:
        """The shared round trip; the second request carries the reasoning item and the call it led to."""
        await ProviderContract.test_tool_round_trip(self, provider)
        first, second = (json.loads(r.body) for r in vcr.requests)
        assert first["store"] is False and first["include"] == ["reasoning.encrypted_content"]
        reasoning, call, output = second["input"][1:]
        assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"] == ENCRYPTED
        assert (
            call["type"] == "function_call" and call["id"] == "fc_68a1"
        )  # its id pairs it with the reasoning
        assert output == {"type": "function_call_output", "call_id": call["call_id"], "output": "5555"}

    @pytest.mark.anyio
    async def test_structured_output(self, provider: ResponsesProvider, vcr: Any) -> None:
        """``output_format`` goes out as a strict ``text.format``; the answer is the JSON it asked for."""
        request = self.request("Where was Ada Lovelace born? Give the city and the country.")
        request.output_format = {"type": "json_schema", "name": "place", "schema": PLACE}
        turn = await collect(provider, request)
        assert json.loads(turn.text) == {"city": "London", "country": "United Kingdom"}
        assert turn.stop is not None and turn.stop.reason == "end_turn"
        sent = json.loads(vcr.requests[0].body)["text"]["format"]
        assert sent == {"type": "json_schema", "name": "place", "schema": PLACE, "strict": True}

    @pytest.mark.anyio
    async def test_hosted_web_search(self, provider: ResponsesProvider) -> None:
        """OpenAI searched: the call comes back as a block, never as a tool call to run here."""
        request = self.request("What was a positive news story from today?")
        request.extra_body = {"tools": [web_search()]}
        turn = await collect(provider, request)
        assert not turn.calls and turn.stop is not None and turn.stop.reason == "end_turn"
        kinds = [r.data["type"] for r in turn.raw]
        assert kinds == ["web_search_call", "message"]
        assert turn.raw[0].data["action"]["query"] and turn.raw[0].data["status"] == "completed"
        citations = turn.raw[1].data["content"][0]["annotations"]
        assert citations[0]["type"] == "url_citation" and citations[0]["url"].startswith("https://")
        assert turn.text.startswith("As of today")

    @pytest.mark.anyio
    async def test_error_event(self, provider: ResponsesProvider) -> None:
        """An ``error`` event inside the 200 stream is a typed error with the server's code and message."""
        with pytest.raises(StreamError) as caught:
            await collect(provider, self.request(PROMPT_SHORT))
        assert type(caught.value) is StreamError and caught.value.status_code is None
        assert "ERR_SOMETHING: Something went wrong" in caught.value.message

    @pytest.mark.anyio
    async def test_failed_response(self, provider: ResponsesProvider) -> None:
        """``response.failed`` with ``server_error``: a `ServerError` (retryable before any output)."""
        with pytest.raises(ServerError) as caught:
            await collect(provider, self.request(PROMPT_SHORT))
        assert caught.value.is_retryable and caught.value.provider == "openai"
        assert "The model failed to generate a response." in caught.value.message

    @pytest.mark.anyio
    async def test_incomplete_response(self, provider: ResponsesProvider) -> None:
        """A response cut at ``max_output_tokens`` ends with a ``max_tokens`` stop and what was written."""
        request = self.request("Count from 1 to 50.")
        request.max_tokens = 16
        turn = await collect(provider, request)
        assert turn.stop is not None and (turn.stop.reason, turn.stop.raw) == (
            "max_tokens",
            "max_output_tokens",
        )
        assert turn.text == "1, 2, 3, 4, 5, 6, 7, 8, 9"
        assert turn.usage is not None and turn.usage.output_tokens == 16


PROMPT_SHORT = "Reply with the single word: hello"
