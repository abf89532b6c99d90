"""The request as sent with ``httpx2`` directly, checked against what the official ``openai`` client sends
(headers, auth, proxies, timeouts), the shared connection pool, and what the provider does with the body:
compressed bodies, the rest of a body after a stream error, and API keys a server echoes back.
"""

from __future__ import annotations

import gzip
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from openai_replay import sse

from openagent.errors import AuthenticationError, ProviderConnectionError, ProviderError, StreamError
from openagent.models import ModelRequest, Stop, TextDelta
from openagent.types import UserMessage
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
    assert request.headers["user-agent"].startswith("openagent-openai/Python ")
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


# --- against the official client ------------------------------------------------------------------------------


async def official_request(monkeypatch: pytest.MonkeyPatch, **client_args: Any) -> httpx2.Request:
    """The request ``openai.AsyncOpenAI`` sends for a streamed chat completion with ``timeout=7``."""
    import openai

    sent: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(TEXT, STOP))

    client = openai.AsyncOpenAI(
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)), max_retries=0, **client_args
    )
    stream = await client.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "hi"}], stream=True, timeout=7
    )
    await stream.close()  # sent once create() returns; its body is not needed
    await client.close()
    return sent[0]


@pytest.mark.parametrize("org", [None, "org-123"], ids=["plain", "organization-and-project"])
async def test_the_headers_are_the_official_clients(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch, org: str | None
) -> None:
    """Same names and values, but for the two that name the client that sent them, and ``Accept``: an event
    stream is asked for by name (the official client sends ``application/json`` and relies on ``stream``).
    """
    for name in ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_BASE_URL", "OPENAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    if org:
        monkeypatch.setenv("OPENAI_ORG_ID", org)
        monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-9")
    theirs = await official_request(monkeypatch, api_key=KEY, base_url="http://models.test/v1")
    p, sent = provider(stream_of(sse(TEXT, STOP)), base_url="http://models.test/v1")
    p.profile = PROFILES["openai"]
    await events_of(p, ModelRequest("test-model", [UserMessage(content="hi")], timeout=7))
    ours = sent[0]
    named = {"user-agent", "x-stainless-package-version", "content-length", "accept"}
    assert {k for k in ours.headers if k not in named} == {k for k in theirs.headers if k not in named}
    for name in ours.headers:
        if name not in named:
            assert ours.headers[name] == theirs.headers[name], name
    assert str(ours.url) == str(theirs.url)
    assert ours.extensions["timeout"] == theirs.extensions["timeout"]
    assert (org is not None) == ("openai-organization" in ours.headers)


async def test_organization_headers_go_to_openai_only(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    p = ChatCompletionsProvider("m", profile=PROFILES["ollama"], http_client=httpx2.AsyncClient())
    assert "OpenAI-Organization" not in p._endpoint.headers
    await p.aclose()


async def test_the_shared_client_has_the_official_defaults(anyio_backend: str) -> None:
    import openai

    official = openai.DefaultAsyncHttpxClient()
    ours = await ChatCompletionsProvider("m", profile=PROFILES["llamacpp"])._endpoint.client()
    assert ours.timeout == official.timeout
    assert ours.follow_redirects == official.follow_redirects is True
    assert ours.trust_env == official.trust_env is True
    theirs = official._transport._pool
    for scheme in ("http", "https"):
        pool = ours._transport._pool(scheme)._pool
        assert (pool._max_connections, pool._max_keepalive_connections) == (
            theirs._max_connections,
            theirs._max_keepalive_connections,
        )
    ours_tls, theirs_tls = ours._transport._pool("https")._pool._ssl_context, theirs._ssl_context
    assert ours_tls.verify_mode == theirs_tls.verify_mode == ssl.CERT_REQUIRED
    assert ours_tls.check_hostname and theirs_tls.check_hostname
    assert len(ours_tls.get_ca_certs()) == len(theirs_tls.get_ca_certs()) > 0
    await official.aclose()


async def test_plain_http_never_loads_the_ca_bundle(anyio_backend: str) -> None:
    """A loopback server over plain HTTP: the https pool (and its TLS context) is never made."""
    from scripted_server import ScriptedServer, Turn

    with ScriptedServer() as server:
        server.enqueue(Turn(text="hi"))
        p = ChatCompletionsProvider("m", profile=PROFILES["llamacpp"], base_url=server.url)
        events = await events_of(p)
        client = await p._endpoint.client()
    assert events[0] == TextDelta("hi")
    assert list(client._transport._pools) == ["http"]


async def test_requests_go_through_the_proxy_the_environment_names(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real loopback proxy sees the request in absolute form, as it would from the official client."""
    import anyio

    seen: list[bytes] = []

    async def proxy(stream: Any) -> None:
        async with stream:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
            seen.append(head.split(b"\r\n", 1)[0])
            body = sse(TEXT, STOP)
            await stream.send(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, proxy)
        p = ChatCompletionsProvider(
            "m", profile=PROFILES["openai"], base_url="http://models.test/v1", api_key=KEY
        )
        with anyio.fail_after(10):
            assert await events_of(p) == [TextDelta("x"), Stop("end_turn", "stop")]
        tg.cancel_scope.cancel()
    assert seen == [b"POST http://models.test/v1/chat/completions HTTP/1.1"]


# --- the shared pool ------------------------------------------------------------------------------------------


async def test_providers_with_the_same_settings_share_one_pool(anyio_backend: str) -> None:
    first = ChatCompletionsProvider("a", profile=PROFILES["llamacpp"])
    second = ChatCompletionsProvider("b", profile=PROFILES["vllm"], api_key="k")
    client = await first._endpoint.client()
    assert await second._endpoint.client() is client
    await first.aclose()  # releases, does not close, the shared pool
    assert not client.is_closed
    assert await ChatCompletionsProvider("c", profile=PROFILES["llamacpp"])._endpoint.client() is client


def test_the_pool_is_closed_when_its_event_loop_ends_and_not_shared_across_loops(anyio_backend: str) -> None:
    import anyio

    clients: list[Any] = []

    async def use() -> None:
        clients.append(await ChatCompletionsProvider("a", profile=PROFILES["llamacpp"])._endpoint.client())

    anyio.run(use, backend=anyio_backend)
    anyio.run(use, backend=anyio_backend)
    assert clients[0] is not clients[1]
    assert clients[0].is_closed and clients[1].is_closed


def test_consecutive_queries_reuse_one_connection(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scripted_server import ScriptedServer, Turn

    from openagent import AgentOptions, query

    monkeypatch.setenv("OPENAGENT_PLUGINS", "openai")

    async def two_queries(url: str) -> list[str]:
        texts = []
        for _ in range(2):
            options = AgentOptions(model="llamacpp:m", base_url=url, persist_session=False)
            async for message in query(prompt="hi", options=options):
                if getattr(message, "subtype", None) == "success":
                    texts.append(message.result)  # type: ignore[attr-defined]
        return texts

    with ScriptedServer() as server:
        server.enqueue(Turn(text="one"), Turn(text="two"))
        import anyio

        assert anyio.run(two_queries, server.url, backend=anyio_backend) == ["one", "two"]
        assert server.total_connections == 1


async def test_aclose_connections_closes_this_loops_pools_and_new_ones_open_after(anyio_backend: str) -> None:
    from openagent_openai import aclose_connections

    first = await ChatCompletionsProvider("a", profile=PROFILES["llamacpp"])._endpoint.client()
    await aclose_connections()
    assert first.is_closed
    second = await ChatCompletionsProvider("a", profile=PROFILES["llamacpp"])._endpoint.client()
    assert second is not first and not second.is_closed
    await aclose_connections()
    await aclose_connections()  # nothing left: a no-op


async def _serve_dropping(first_dropped: int) -> tuple[Any, list[bytes], Any]:
    """A loopback server that closes its first ``first_dropped`` connections on receiving a request, unanswered,
    then answers with an event stream."""
    import anyio

    seen: list[bytes] = []

    async def handle(stream: Any) -> None:
        async with stream:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
            seen.append(head.split(b"\r\n", 1)[0])
            if len(seen) <= first_dropped:
                return  # closed: "Server disconnected without sending a response"
            body = sse(TEXT, STOP)
            await stream.send(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode()
                + body
            )

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    return listener, seen, handle


@pytest.mark.parametrize(
    ("dropped", "answered"), [(1, True), (2, False)], ids=["once-retried", "twice-fails"]
)
async def test_a_request_the_server_drops_unanswered_is_sent_once_more(
    anyio_backend: str, dropped: int, answered: bool
) -> None:
    import anyio

    listener, seen, handle = await _serve_dropping(dropped)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        p = ChatCompletionsProvider("m", profile=PROFILES["llamacpp"], base_url=f"http://127.0.0.1:{port}/v1")
        with anyio.fail_after(10):
            if answered:
                assert await events_of(p) == [TextDelta("x"), Stop("end_turn", "stop")]
            else:
                with pytest.raises(ProviderConnectionError, match="Server disconnected"):
                    await events_of(p)
        tg.cancel_scope.cancel()
    assert len(seen) == 2, "one retry, never more"
