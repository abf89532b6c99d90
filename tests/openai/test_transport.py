"""The request as sent through the ``openai`` client's own HTTP client, and what the provider does with the
body: compressed bodies, the rest of a body after a stream error, and API keys a server echoes back.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from openai_replay import sse

from openagent._errors import AuthenticationError, ProviderError, StreamError
from openagent._models import ModelRequest, Stop, TextDelta
from openagent._types import UserMessage
from openagent_openai import PROFILES, ChatCompletionsProvider
from openagent_openai._chat import ChatStream

pytestmark = pytest.mark.anyio
KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
REQUEST = ModelRequest("test-model", [UserMessage(content="hi")])
TEXT = {"choices": [{"index": 0, "delta": {"content": "x"}}]}
STOP = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def provider(
    answer: Any, *, api_key: str = KEY, base_url: str = "http://models.test/v1"
) -> tuple[ChatCompletionsProvider, list[httpx2.Request]]:
    sent: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return answer(request)  # type: ignore[no-any-return]

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return (
        ChatCompletionsProvider(
            "test-model", profile=PROFILES["openai"], base_url=base_url, api_key=api_key, http_client=client
        ),
        sent,
    )


def stream_of(*parts: bytes, status: int = 200, **headers: str) -> Any:
    def answer(request: httpx2.Request) -> httpx2.Response:
        async def body() -> AsyncIterator[bytes]:
            for part in parts:
                yield part

        return httpx2.Response(
            status, headers={"content-type": "text/event-stream", **headers}, content=body()
        )

    return answer


async def events_of(p: ChatCompletionsProvider, request: ModelRequest = REQUEST) -> list[Any]:
    try:
        return [event async for event in p.stream(request)]
    finally:
        await p.aclose()


async def test_the_request_carries_the_clients_headers_and_the_body(anyio_backend: str) -> None:
    p, sent = provider(stream_of(sse(TEXT, STOP)))
    events = await events_of(p, ModelRequest("test-model", [UserMessage(content="hi")], timeout=7))
    assert events == [TextDelta("x"), Stop("end_turn", "stop")]
    (request,) = sent
    assert request.method == "POST"
    assert str(request.url) == "http://models.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["user-agent"].startswith("AsyncOpenAI/Python")
    assert request.headers["x-stainless-lang"] == "python"  # the client's default headers are all sent
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.extensions["timeout"]["read"] == 7
    body = json.loads(request.content)
    assert body["model"] == "test-model" and body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": "hi"}]


async def test_a_base_url_with_a_trailing_slash_gives_one_slash(anyio_backend: str) -> None:
    p, sent = provider(stream_of(sse(TEXT, STOP)), base_url="http://models.test/api/v1/")
    await events_of(p)
    assert str(sent[0].url) == "http://models.test/api/v1/chat/completions"


async def test_a_gzip_compressed_event_stream_is_decoded(anyio_backend: str) -> None:
    body = gzip.compress(sse(TEXT, TEXT, STOP))
    p, _ = provider(stream_of(body[:10], body[10:], **{"content-encoding": "gzip"}))
    assert await events_of(p) == [TextDelta("x"), TextDelta("x"), Stop("end_turn", "stop")]


async def test_the_rest_of_the_body_is_read_after_a_stream_error(anyio_backend: str) -> None:
    """Read to its end, the HTTP library's generators all finish instead of being left to the collector."""
    read: list[bytes] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        async def body() -> AsyncIterator[bytes]:
            for part in (sse(TEXT, done=False), b"data: {not json\n\n", sse(TEXT, TEXT, STOP)):
                read.append(part)
                yield part

        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    p, _ = provider(answer)
    with pytest.raises(StreamError) as caught:
        await events_of(p)
    assert caught.value.body == "{not json"
    assert len(read) == 3, "the body after the bad line was not read"


async def test_a_key_echoed_in_a_401_is_redacted(anyio_backend: str) -> None:
    message = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(401, json=message)

    p, _ = provider(answer)
    with pytest.raises(AuthenticationError) as caught:
        await events_of(p)
    error = caught.value
    assert error.status_code == 401
    assert error.message == "Incorrect API key provided: [redacted]."
    assert KEY not in f"{error}\n{error!r}\n{error.body}\n{error.__cause__!r}"
    assert "invalid_api_key" in (error.body or ""), "the rest of the body is kept"


async def test_a_key_echoed_inside_a_200_stream_is_redacted(anyio_backend: str) -> None:
    echo = {"error": {"message": f"key {KEY} is over its quota"}}
    p, _ = provider(stream_of(sse(TEXT, echo)))
    with pytest.raises(StreamError) as caught:
        await events_of(p)
    assert KEY not in f"{caught.value}\n{caught.value.body}"
    assert "[redacted] is over its quota" in str(caught.value)


async def test_a_key_echoed_in_a_named_error_event_is_redacted(anyio_backend: str) -> None:
    p, _ = provider(stream_of(sse(TEXT, done=False), f"event: error\ndata: bad key {KEY}\n\n".encode()))
    with pytest.raises(StreamError) as caught:
        await events_of(p)
    assert KEY not in f"{caught.value}\n{caught.value.body}"
    assert caught.value.body == "bad key [redacted]"


async def test_a_short_placeholder_key_is_not_scrubbed_from_messages(anyio_backend: str) -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(400, json={"error": {"message": "model local-model not found"}})

    p, _ = provider(answer, api_key="local")
    with pytest.raises(ProviderError) as caught:
        await events_of(p)
    assert caught.value.message == "model local-model not found"


@pytest.mark.parametrize(
    "data",
    ['{"choices": []} x', '{"choices": []}{}', '{"choices": [', "nul", '"unterminated', "{'single': 1}"],
)
def test_a_payload_that_is_not_exactly_one_json_value_is_a_stream_error(data: str) -> None:
    with pytest.raises(StreamError) as caught:
        ChatStream("p").feed(data)
    assert caught.value.body == data


@pytest.mark.parametrize("data", [' {"choices": []}', '{"choices": []} ', '\t{"choices": []}\r\n'])
def test_whitespace_around_a_payload_is_allowed(data: str) -> None:
    assert ChatStream("p").feed(data) == []


def test_a_payload_that_is_not_an_object_is_a_stream_error() -> None:
    with pytest.raises(StreamError, match="not a JSON object"):
        ChatStream("p").feed("[1, 2]")
