"""HTTP and transport failures become the core's typed errors, with status, provider and the message."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from openai_replay import Replay

from openagent._errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from openagent._models import ModelRequest
from openagent._types import UserMessage
from openagent_openai import PROFILES, ChatCompletionsProvider

pytestmark = pytest.mark.anyio
REQUEST = ModelRequest("test-model", [UserMessage(content="hi")])


async def drain(provider: ChatCompletionsProvider, request: ModelRequest = REQUEST) -> list[Any]:
    return [event async for event in provider.stream(request)]


def _json(payload: Any) -> bytes:
    return json.dumps(payload).encode()


STATUS = [
    pytest.param(
        401,
        {},
        _json({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
        AuthenticationError,
        "Incorrect API key provided",
        None,
        id="401-openai",
    ),
    pytest.param(
        429,
        {"retry-after-ms": "1500"},
        _json({"error": {"message": "Rate limit reached"}}),
        RateLimitError,
        "Rate limit reached",
        1.5,
        id="429-retry-after-ms",
    ),
    pytest.param(
        429,
        {"retry-after": "7"},
        _json({"error": "slow down"}),
        RateLimitError,
        "slow down",
        7.0,
        id="429-retry-after-seconds-error-as-string",
    ),
    pytest.param(
        503,
        {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"},
        b"Service Unavailable",
        ServerError,
        "Service Unavailable",
        0.0,
        id="503-retry-after-date-in-the-past-plain-body",
    ),
    pytest.param(
        500,
        {},
        _json({"detail": "CUDA out of memory"}),
        ServerError,
        "CUDA out of memory",
        None,
        id="500-vllm-detail",
    ),
    pytest.param(
        404,
        {},
        _json({"error": {"message": "model 'qwen9' not found"}}),
        BadRequestError,
        "not found",
        None,
        id="404-ollama-unknown-model",
    ),
    pytest.param(
        400,
        {},
        _json(
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            }
        ),
        ContextWindowExceededError,
        "exceeds the available context",
        None,
        id="400-llamacpp-context-size",
    ),
    pytest.param(
        400,
        {},
        _json(
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens.",
                    "code": "context_length_exceeded",
                }
            }
        ),
        ContextWindowExceededError,
        "maximum context length",
        None,
        id="400-openai-context-length",
    ),
    pytest.param(
        400,
        {},
        b"<html>Bad Request</html>",
        BadRequestError,
        "<html>Bad Request</html>",
        None,
        id="400-html-body",
    ),
]


@pytest.mark.parametrize(("status", "headers", "body", "error", "message", "retry_after"), STATUS)
async def test_http_status_errors(
    replay: Replay,
    status: int,
    headers: dict[str, str],
    body: bytes,
    error: type[ProviderError],
    message: str,
    retry_after: float | None,
) -> None:
    provider = replay.provider(body, status=status, headers={"content-type": "application/json", **headers})
    with pytest.raises(error) as caught:
        await drain(provider)
    assert type(caught.value) is error
    assert caught.value.status_code == status and caught.value.provider == "llamacpp"
    assert message in caught.value.message
    assert caught.value.body == body.decode()
    assert caught.value.retry_after == retry_after
    assert len(replay.requests) == 1, "the openai client must not retry on its own"


async def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = ChatCompletionsProvider(
        "m", profile=PROFILES["llamacpp"], base_url=f"http://127.0.0.1:{port}/v1"
    )
    with pytest.raises(ProviderConnectionError, match="cannot reach") as caught:
        await drain(provider)
    assert caught.value.is_retryable and caught.value.provider == "llamacpp"
    await provider.aclose()


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback port that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


async def test_no_answer_in_time_is_a_timeout(silent_server: int) -> None:
    provider = ChatCompletionsProvider(
        "m", profile=PROFILES["vllm"], base_url=f"http://127.0.0.1:{silent_server}/v1"
    )
    with pytest.raises(ProviderTimeoutError) as caught:
        await drain(provider, ModelRequest("m", [UserMessage(content="hi")], timeout=0.2))
    assert caught.value.is_retryable and caught.value.provider == "vllm"
    await provider.aclose()


async def test_connection_broken_mid_stream(replay: Replay) -> None:
    async def stream() -> Any:
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}\n\n'
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body")

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    events: list[Any] = []
    with pytest.raises(ProviderConnectionError, match="broke"):
        async for event in replay.provider(handler=handler).stream(REQUEST):
            events.append(event)
    assert len(events) == 1  # what arrived before the break was handed on; the loop decides what to do


async def test_consumer_stopping_early_closes_cleanly(replay: Replay) -> None:
    body = b"".join(b'data: {"choices": [{"index": 0, "delta": {"content": "x"}}]}\n\n' for _ in range(50))
    provider = replay.provider(body)
    stream = provider.stream(REQUEST)
    assert (await stream.__anext__()).text == "x"
    await stream.aclose()
    await provider.aclose()
