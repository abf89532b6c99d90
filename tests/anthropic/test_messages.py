"""The stream parser and the provider over an httpx MockTransport: one table row per quirk."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
import pytest
from anthropic_streams import PING, args, block, delta, end, sse, start, stop_block, text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openagent._errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    StreamError,
)
from openagent._models import (
    ModelRequest,
    RawContent,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from openagent._types import Usage, UserMessage
from openagent_anthropic import MessagesProvider
from openagent_anthropic._messages import parse_stream

U0 = Usage(input_tokens=25, output_tokens=1)


def raw(block_: dict[str, Any]) -> RawContent:
    return RawContent("anthropic", block_)


WEB_CALL = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}
WEB_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.com",
            "title": "Example",
            "encrypted_content": "EqgfCioI",
            "page_age": None,
        }
    ],
}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}

OK = [
    pytest.param(
        sse(
            start(),
            block(0, {"type": "text", "text": ""}),
            PING,
            text(0, "Hello"),
            text(0, "!"),
            stop_block(0),
            *end("end_turn"),
        ),
        [
            U0,
            TextDelta("Hello"),
            TextDelta("!"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("end_turn", "end_turn"),
        ],
        id="documented-text",
    ),
    pytest.param(
        sse(start(), block(0, {"type": "text", "text": "Hi"}), stop_block(0), *end("end_turn")),
        [U0, TextDelta("Hi"), Usage(input_tokens=25, output_tokens=15), Stop("end_turn", "end_turn")],
        id="llamacpp-no-ping-text-in-block-start",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "text", "text": ""}),
            text(0, "Let me check."),
            stop_block(0),
            block(1, {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}),
            args(1, ""),
            args(1, '{"city": '),
            args(1, '"Paris"}'),
            stop_block(1),
            *end("tool_use"),
        ),
        [
            U0,
            TextDelta("Let me check."),
            ToolCallStart(1, "toolu_01", "get_weather"),
            ToolCallDelta(1, '{"city": '),
            ToolCallDelta(1, '"Paris"}'),
            Usage(input_tokens=25, output_tokens=15),
            Stop("tool_use", "tool_use"),
        ],
        id="documented-tool-use-input-json-delta",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "tool_use", "id": "call_x", "name": "add"}),
            args(0, '{"a":1,'),
            args(0, '"b":2}'),
            stop_block(0),
            *end("tool_use", sequence="</tool_call>"),
        ),
        [
            U0,
            ToolCallStart(0, "call_x", "add"),
            ToolCallDelta(0, '{"a":1,'),
            ToolCallDelta(0, '"b":2}'),
            Usage(input_tokens=25, output_tokens=15),
            Stop("tool_use", "tool_use"),
        ],
        id="llamacpp-tool-use-without-input-and-stop-sequence",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "b": 2}}),
            stop_block(0),
            *end("tool_use"),
        ),
        [
            U0,
            ToolCallStart(0, "t1", "add"),
            ToolCallDelta(0, '{"a": 1, "b": 2}'),
            Usage(input_tokens=25, output_tokens=15),
            Stop("tool_use", "tool_use"),
        ],
        id="whole-input-in-block-start",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "tool_use", "id": "t1", "name": "now", "input": {}}),
            stop_block(0),
            *end("tool_use"),
        ),
        [
            U0,
            ToolCallStart(0, "t1", "now"),
            ToolCallDelta(0, "{}"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("tool_use", "tool_use"),
        ],
        id="tool-without-arguments",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "tool_use", "id": "t1", "name": "now", "input": {}}),
            stop_block(0),
            *end("end_turn"),
        ),
        [
            U0,
            ToolCallStart(0, "t1", "now"),
            ToolCallDelta(0, "{}"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("tool_use", "end_turn"),
        ],
        id="tool-calls-with-end-turn",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "thinking", "thinking": ""}),
            delta(0, type="thinking_delta", thinking="Hmm"),
            delta(0, type="signature_delta", signature="EqQBCgIYAhIM"),
            stop_block(0),
            block(1, {"type": "text", "text": ""}),
            text(1, "Yes"),
            stop_block(1),
            *end("end_turn"),
        ),
        [
            U0,
            ThinkingDelta("Hmm"),
            ThinkingDelta(signature="EqQBCgIYAhIM"),
            TextDelta("Yes"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("end_turn", "end_turn"),
        ],
        id="documented-thinking-with-signature",
    ),
    pytest.param(
        sse(
            start(),
            block(0, REDACTED),
            stop_block(0),
            block(1, {"type": "text", "text": ""}),
            text(1, "ok"),
            stop_block(1),
            *end("end_turn"),
        ),
        [
            U0,
            raw(REDACTED),
            TextDelta("ok"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("end_turn", "end_turn"),
        ],
        id="redacted-thinking-passes-through",
    ),
    pytest.param(
        sse(
            start(),
            block(0, WEB_CALL),
            args(0, '{"query": "weather'),
            args(0, ' paris"}'),
            stop_block(0),
            block(1, WEB_RESULT),
            stop_block(1),
            block(2, {"type": "text", "text": ""}),
            text(2, "Sunny"),
            delta(2, type="citations_delta", citation={"type": "web_search_result_location", "url": "u"}),
            stop_block(2),
            *end("end_turn", server_tool_use={"web_search_requests": 1}),
        ),
        [
            U0,
            raw({**WEB_CALL, "input": {"query": "weather paris"}}),
            raw(WEB_RESULT),
            TextDelta("Sunny"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("end_turn", "end_turn"),
        ],
        id="server-tool-blocks-pass-through-citations-skipped",
    ),
    pytest.param(
        sse(
            start(
                {
                    "input_tokens": 5,
                    "output_tokens": 1,
                    "cache_creation_input_tokens": 2048,
                    "cache_read_input_tokens": None,
                }
            ),
            block(0, {"type": "text", "text": ""}),
            text(0, "x"),
            stop_block(0),
            *end("end_turn", 9, cache_read_input_tokens=100),
        ),
        [
            Usage(input_tokens=5, output_tokens=1, cache_creation_input_tokens=2048),
            TextDelta("x"),
            Usage(
                input_tokens=5, output_tokens=9, cache_creation_input_tokens=2048, cache_read_input_tokens=100
            ),
            Stop("end_turn", "end_turn"),
        ],
        id="cache-tokens-null-fields-running-totals",
    ),
    pytest.param(
        sse(
            *[
                (None, data)
                for _, data in [
                    start(),
                    block(0, {"type": "text", "text": ""}),
                    text(0, "a"),
                    stop_block(0),
                    *end("max_tokens"),
                ]
            ]
        ),
        [U0, TextDelta("a"), Usage(input_tokens=25, output_tokens=15), Stop("max_tokens", "max_tokens")],
        id="proxy-without-event-lines",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "text", "text": ""}),
            text(0, "é✓"),
            stop_block(0),
            *end("stop_sequence"),
            crlf=True,
        ),
        [
            U0,
            TextDelta("é✓"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("stop_sequence", "stop_sequence"),
        ],
        id="crlf-line-endings-multibyte-text",
    ),
    pytest.param(
        sse(
            start(), block(0, {"type": "text", "text": ""}), text(0, "a"), stop_block(0), *end("end_turn")[:1]
        ),
        [U0, TextDelta("a"), Usage(input_tokens=25, output_tokens=15), Stop("end_turn", "end_turn")],
        id="no-message-stop-after-message-delta",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "text", "text": ""}),
            text(0, "a"),
            stop_block(0),
            *end("end_turn"),
            (None, "[DONE]"),
        ),
        [U0, TextDelta("a"), Usage(input_tokens=25, output_tokens=15), Stop("end_turn", "end_turn")],
        id="done-sentinel-after-message-stop",
    ),
    pytest.param(
        sse(
            start(),
            ("future_event", {"type": "future_event"}),
            block(0, {"type": "text", "text": ""}),
            delta(0, type="future_delta", x=1),
            text(0, "a"),
            stop_block(0),
            *end("model_context_window_exceeded"),
        ),
        [
            U0,
            TextDelta("a"),
            Usage(input_tokens=25, output_tokens=15),
            Stop("max_tokens", "model_context_window_exceeded"),
        ],
        id="unknown-event-and-delta-types-context-window-stop",
    ),
    pytest.param(
        sse(
            start(),
            block(0, {"type": "thinking", "thinking": ""}),
            delta(0, type="thinking_delta", thinking=""),
            delta(0, type="signature_delta", signature=""),
            stop_block(0),
            block(1, {"type": "text", "text": ""}),
            text(1, ""),
            text(1, "a"),
            stop_block(1),
            *end("end_turn"),
        ),
        [U0, TextDelta("a"), Usage(input_tokens=25, output_tokens=15), Stop("end_turn", "end_turn")],
        id="empty-deltas-make-no-events",
    ),
    pytest.param(
        sse(start(), block(0, {"type": "text", "text": ""}), text(0, "a"), stop_block(0), *end("pause_turn")),
        [U0, TextDelta("a"), Usage(input_tokens=25, output_tokens=15), Stop("pause_turn", "pause_turn")],
        id="pause-turn",
    ),
]

BAD = [
    pytest.param(
        sse(
            start(),
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        "overloaded_error: Overloaded",
        id="error-event-anthropic-envelope",
    ),
    pytest.param(
        sse(
            start(),
            ("error", {"error": {"code": 500, "message": "slot unavailable", "type": "server_error"}}),
        ),
        "server_error: slot unavailable",
        id="error-event-llamacpp-openai-shape",
    ),
    pytest.param(  # seen from llama-server 11434 when a tool call fails its output check
        sse(
            start(),
            block(0, {"type": "tool_use", "id": "nKQX72diqVEEP73AhGWoyULvz8itHhU8", "name": "add"}),
            args(0, "{"),
            (
                "error",
                {
                    "code": 500,
                    "message": "The model produced output that does not match",
                    "type": "server_error",
                },
            ),
        ),
        "server_error: The model produced output",
        id="error-event-llamacpp-top-level-fields",
    ),
    pytest.param(sse(("error", "upstream exploded")), "upstream exploded", id="error-event-plain-text"),
    pytest.param(
        sse((None, {"type": "error", "error": {"type": "api_error", "message": "x"}})),
        "api_error: x",
        id="error-type-without-event-line",
    ),
    pytest.param(sse(start(), ("content_block_delta", "{not json")), "not JSON", id="non-json-data"),
    pytest.param(sse(start(), ("message_delta", "[1, 2]")), "not a JSON object", id="json-array-data"),
    pytest.param(
        sse(start(), block(0, {"type": "text", "text": ""}), text(0, "a")),
        "ended before",
        id="truncated-mid-block",
    ),
    pytest.param(b"", "ended before", id="empty-body"),
    pytest.param(sse(start(), args(3, "{")), "never started", id="arguments-for-unknown-block"),
    pytest.param(
        sse(start(), ("content_block_start", {"type": "content_block_start"})),
        "without an index",
        id="block-start-without-block",
    ),
    pytest.param(
        sse(start(), block(0, WEB_CALL), args(0, '{"query": '), stop_block(0)),
        "malformed input",
        id="server-tool-malformed-input",
    ),
    pytest.param(
        sse(start(), block(0, {"type": "text", "text": ""}), text(0, 5)),  # type: ignore[arg-type]
        "text_delta without a string text",
        id="text-delta-not-a-string",
    ),
    pytest.param(
        sse(start(), block(0, {"type": "thinking", "thinking": ""}), delta(0, type="thinking_delta")),
        "thinking_delta without a string thinking",
        id="thinking-delta-without-thinking",
    ),
    pytest.param(
        sse(start(), ("content_block_delta", {"type": "content_block_delta", "index": 0})),
        "without a delta",
        id="delta-without-delta",
    ),
]


def natural(body: bytes) -> list[bytes]:
    """One chunk per event, as servers flush them."""
    parts = body.replace(b"\r\n", b"\n").split(b"\n\n")
    sep = b"\r\n\r\n" if b"\r\n" in body else b"\n\n"
    chunks = [p.replace(b"\n", b"\r\n") + sep if sep == b"\r\n\r\n" else p + sep for p in parts if p]
    return chunks or [body]


def split(size: int) -> Callable[[bytes], list[bytes]]:
    return lambda body: [body[i : i + size] for i in range(0, len(body), size)] or [b""]


CHUNKINGS = [
    pytest.param(natural, id="natural"),
    *(pytest.param(split(n), id=f"split{n}") for n in (1, 3, 7, 64)),
]


def transport(
    body: bytes,
    chunking: Callable[[bytes], list[bytes]],
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> httpx2.MockTransport:
    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunking(body):
            yield chunk

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            status, headers={"content-type": "text/event-stream", **(headers or {})}, content=stream()
        )

    return httpx2.MockTransport(handler)


def provider_for(mock: httpx2.MockTransport) -> MessagesProvider:
    return MessagesProvider(
        "claude-test",
        base_url="http://anthropic.test",
        api_key="k",
        http_client=httpx2.AsyncClient(transport=mock),
    )


REQUEST = ModelRequest("claude-test", [UserMessage(content="hi")])


async def drain(provider: MessagesProvider, request: ModelRequest = REQUEST) -> list[Any]:
    try:
        return [event async for event in provider.stream(request)]
    finally:
        await provider.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize(("body", "expected"), OK)
async def test_streams(body: bytes, expected: list[Any], chunking: Callable[[bytes], list[bytes]]) -> None:
    assert await drain(provider_for(transport(body, chunking))) == expected


@pytest.mark.anyio
@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize(("body", "message"), BAD)
async def test_malformed_streams(body: bytes, message: str, chunking: Callable[[bytes], list[bytes]]) -> None:
    with pytest.raises(StreamError, match=message) as caught:
        await drain(provider_for(transport(body, chunking)))
    assert caught.value.provider == "anthropic"


def envelope(kind: str, message: str) -> str:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}})


HTTP_ERRORS = [
    pytest.param(
        529,
        envelope("overloaded_error", "Overloaded"),
        {},
        ServerError,
        "Overloaded",
        None,
        id="529-overloaded",
    ),
    pytest.param(
        429,
        envelope("rate_limit_error", "slow down"),
        {"retry-after": "7"},
        RateLimitError,
        "slow down",
        7.0,
        id="429-retry-after-seconds",
    ),
    pytest.param(
        429,
        envelope("rate_limit_error", "slow"),
        {"retry-after-ms": "1500"},
        RateLimitError,
        "slow",
        1.5,
        id="429-retry-after-ms",
    ),
    pytest.param(
        401,
        envelope("authentication_error", "invalid x-api-key"),
        {},
        AuthenticationError,
        "invalid x-api-key",
        None,
        id="401-bad-key",
    ),
    pytest.param(
        400,
        envelope("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        {},
        ContextWindowExceededError,
        "prompt is too long",
        None,
        id="400-context-window",
    ),
    pytest.param(
        404,
        envelope("not_found_error", "model: claude-nope"),
        {},
        BadRequestError,
        "claude-nope",
        None,
        id="404-unknown-model",
    ),
    pytest.param(
        500,
        "<html>bad gateway</html>",
        {"content-type": "text/html"},
        ServerError,
        "500",
        None,
        id="500-html-body",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("status", "body", "headers", "error", "message", "retry_after"), HTTP_ERRORS)
async def test_http_errors(
    status: int,
    body: str,
    headers: dict[str, str],
    error: type[ProviderError],
    message: str,
    retry_after: float | None,
) -> None:
    mock = transport(body.encode(), split(64), status, {"content-type": "application/json", **headers})
    with pytest.raises(error, match=message) as caught:
        await drain(provider_for(mock))
    assert caught.value.status_code == status
    assert caught.value.provider == "anthropic"
    assert caught.value.retry_after == retry_after
    assert caught.value.body == body


def failing(exc: Exception) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise exc

    return httpx2.MockTransport(handler)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("exc", "error"),
    [
        pytest.param(httpx2.ConnectError("refused"), ProviderConnectionError, id="connect-refused"),
        pytest.param(httpx2.ReadTimeout("slow"), ProviderTimeoutError, id="read-timeout-before-headers"),
    ],
)
async def test_transport_errors(exc: Exception, error: type[ProviderError]) -> None:
    with pytest.raises(error):
        await drain(provider_for(failing(exc)))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("exc", "error"),
    [
        pytest.param(httpx2.ReadError("reset"), StreamError, id="connection-reset-mid-stream"),
        pytest.param(httpx2.ReadTimeout("stalled"), ProviderTimeoutError, id="timeout-mid-stream"),
    ],
)
async def test_broken_mid_stream(exc: Exception, error: type[ProviderError]) -> None:
    async def stream() -> AsyncIterator[bytes]:
        yield sse(start(), block(0, {"type": "text", "text": ""}), text(0, "partial"))
        raise exc

    mock = httpx2.MockTransport(
        lambda r: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream())
    )
    seen: list[Any] = []
    provider = provider_for(mock)
    with pytest.raises(error):
        async for event in provider.stream(REQUEST):
            seen.append(event)
    await provider.aclose()
    assert TextDelta("partial") in seen


@pytest.mark.anyio
async def test_server_ignoring_stream_true_sends_whole_message() -> None:
    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "x",
        "stop_reason": "tool_use",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "text", "text": "a"},
            {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
        ],
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    mock = transport(json.dumps(message).encode(), split(64), headers={"content-type": "application/json"})
    assert await drain(provider_for(mock)) == [
        Usage(input_tokens=3, output_tokens=4),
        ThinkingDelta("t", "s"),
        TextDelta("a"),
        ToolCallStart(2, "t1", "add"),
        ToolCallDelta(2, '{"a": 1}'),
        Stop("tool_use", "tool_use"),
    ]


@pytest.mark.anyio
async def test_json_error_body_with_status_200() -> None:
    mock = transport(
        envelope("api_error", "boom").encode(), split(64), headers={"content-type": "application/json"}
    )
    with pytest.raises(StreamError, match="api_error: boom"):
        await drain(provider_for(mock))


@pytest.mark.anyio
async def test_the_rest_of_a_malformed_body_is_read_before_the_error() -> None:
    # Left unread, the HTTP library's body generators are finalised by the garbage collector (trio warns).
    read: list[int] = []

    async def stream() -> AsyncIterator[bytes]:
        yield sse(start(), block(0, {"type": "text", "text": ""}), text(0, "a"))
        yield b"event: content_block_delta\ndata: {this is not json\n\n"
        for i in range(3):
            yield b": more that nobody parses\n\n"
            read.append(i)

    mock = httpx2.MockTransport(
        lambda r: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream())
    )
    with pytest.raises(StreamError, match="not JSON"):
        await drain(provider_for(mock))
    assert read == [0, 1, 2]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("data", "outcome"),
    [
        pytest.param(
            '  {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}  ',
            TextDelta("hi"),
            id="whitespace-around-json",
        ),
        pytest.param('{"type": "content_block_delta"} {"x": 1}', "not JSON", id="two-json-values"),
        pytest.param('"a string"', "not a JSON object", id="json-not-an-object"),
    ],
)
async def test_text_delta_data_is_exactly_one_json_object(data: str, outcome: Any) -> None:
    body = sse(
        start(), block(0, {"type": "text", "text": ""}), ("content_block_delta", data), *end("end_turn")
    )
    mock = transport(body, natural, headers={"content-type": "text/event-stream"})
    if isinstance(outcome, str):
        with pytest.raises(StreamError, match=outcome):
            await drain(provider_for(mock))
    else:
        assert outcome in await drain(provider_for(mock))


SECRET = "sk-ant-echoed-0123456789abcdef"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        pytest.param(
            401,
            envelope("authentication_error", f"invalid x-api-key {SECRET}"),
            AuthenticationError,
            id="401",
        ),
        pytest.param(200, envelope("api_error", f"key {SECRET} is wrong"), StreamError, id="200-json-error"),
        pytest.param(
            200, sse(("error", envelope("overloaded_error", f"{SECRET}!"))), StreamError, id="error-event"
        ),
    ],
)
async def test_a_key_the_server_echoes_is_redacted_from_errors(
    status: int, body: str | bytes, error: type[ProviderError]
) -> None:
    raw = body.encode() if isinstance(body, str) else body
    kind = "text/event-stream" if isinstance(body, bytes) else "application/json"
    mock = transport(raw, split(64), status, {"content-type": kind})
    provider = MessagesProvider(
        "claude-test",
        base_url="http://anthropic.test",
        api_key=SECRET,
        http_client=httpx2.AsyncClient(transport=mock),
    )
    with pytest.raises(error) as caught:
        await drain(provider)
    seen = f"{caught.value}\n{caught.value!r}\n{caught.value.message}\n{caught.value.body}"
    assert SECRET not in seen
    assert "[redacted]" in seen


# --- properties ---------------------------------------------------------------------------------------------


async def parse(chunks: list[bytes]) -> list[Any]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [event async for event in parse_stream(source())]


def run(chunks: list[bytes]) -> list[Any]:
    return anyio.run(parse, chunks)


VALID = [p.values[0] for p in OK]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VALID), st.lists(st.integers(min_value=0, max_value=4000), max_size=30))
def test_rechunking_never_changes_the_events(body: bytes, cuts: list[int]) -> None:
    points = sorted({c % (len(body) + 1) for c in cuts})
    chunks = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert run(chunks) == run([body])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=8))
def test_random_bytes_raise_only_provider_errors(chunks: list[bytes]) -> None:
    try:
        events = run(chunks)
    except ProviderError:
        return
    assert isinstance(events[-1], Stop)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(VALID), st.data())
def test_corrupted_streams_raise_only_provider_errors(body: bytes, data: st.DataObject) -> None:
    position = data.draw(st.integers(min_value=0, max_value=len(body) - 1))
    replacement = data.draw(st.binary(min_size=0, max_size=4))
    try:
        events = run([body[:position] + replacement + body[position + 1 :]])
    except ProviderError:
        return
    assert isinstance(events[-1], Stop)
