"""The providers of OpenAI's two wire formats, sent with ``httpx2`` through `_http.Endpoint`.

`ChatCompletionsProvider` (``POST /chat/completions``, parsed by `_chat.ChatStream`) and `ResponsesProvider`
(``POST /responses``, parsed by `_responses.ResponsesStream`) share everything but the path, the body and the
parser: the headers are built in `_http` (what the official ``openai`` client would send), the body here,
and the response read as raw bytes (no typed object per chunk). Retries are the core loop's, applied only
before the first event is handed on.

Every error raised here is a `ProviderError` with the configured API key redacted from it, in case the
server echoed the key back.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, ClassVar, Protocol

import anyio

from openagent.plugin import (
    BadRequestError,
    ModelEvent,
    ModelProfile,
    ModelRequest,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ServerSentEvent,
    SSEDecoder,
    StreamError,
)

from . import _responses_request, _server_info
from ._chat import ChatStream, build_body
from ._http import Endpoint, drain
from ._profiles import OpenAIProfile, resolve_api_key, resolve_base_url
from ._responses import ResponsesStream

__all__ = ["ChatCompletionsProvider", "ResponsesProvider", "make_provider"]

logger = logging.getLogger("openagent.openai")


class _Parser(Protocol):
    done: bool
    seen_data: bool

    def feed(self, data: str) -> list[ModelEvent]: ...
    def finish(self) -> list[ModelEvent]: ...


class _SSEProvider:
    """What both wires share: the endpoint, sending, reading the event stream, and typing every failure.

    Args:
        model: The model name the endpoint knows (``qwen3:8b``, ``gpt-4.1-mini``).
        profile: The endpoint's defaults and quirks (see `PROFILES`).
        base_url: Overrides ``OPENAGENT_BASE_URL``, the vendor's variable and the profile's default.
        api_key: Overrides ``OPENAGENT_API_KEY`` and the vendor's variable; keyless servers get a placeholder.
        http_client: An ``httpx2.AsyncClient`` to send through (tests, custom transports); by default the
            connection pool shared by every provider with the same proxy and TLS settings in this event loop.
    """

    path: ClassVar[str]
    """Where requests go, below the base URL."""

    def __init__(
        self,
        model: str,
        *,
        profile: OpenAIProfile,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: Any = None,
    ) -> None:
        self.model = model
        self.profile = profile
        """The endpoint's capabilities and quirks."""
        self.base_url = resolve_base_url(profile, base_url)
        self._api_key = resolve_api_key(profile, api_key)
        # The official client sends these wherever it points; they belong to OpenAI accounts only.
        official = profile.api_key_env == "OPENAI_API_KEY"
        self._endpoint = Endpoint(
            self.base_url,
            self._api_key,
            provider=profile.name,
            http_client=http_client,
            organization=os.environ.get("OPENAI_ORG_ID") if official else None,
            project=os.environ.get("OPENAI_PROJECT_ID") if official else None,
        )
        self._reported: ModelProfile | None = None
        self._asked = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, profile={self.profile.name!r})"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _parser(self, request: ModelRequest) -> _Parser:
        raise NotImplementedError

    async def model_profile(self) -> ModelProfile | None:
        """What the server reports about the model (its context window), asked once; ``None`` when the
        server cannot say (see `_server_info`: llama.cpp ``/props``, Ollama ``/api/show``, vLLM
        ``/v1/models``). Failures are not errors: the run goes on without the figure.
        """  # noqa: D205
        if self._asked:
            return self._reported
        self._asked = True
        root = self.base_url.removesuffix("/v1")
        for kind in self.profile.model_info:
            method, url, body = _server_info.probe_request(kind, root, self.model)
            data = await self._endpoint.probe(method, url, body)
            if window := _server_info.parse(kind, data, self.model):
                self._reported = ModelProfile(context_window=window)
                break
        return self._reported

    async def aclose(self) -> None:
        """Release the connections: a client given to the provider is closed; a shared pool stays open."""
        await self._endpoint.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send ``request`` and yield its events as they arrive.

        Raises:
            ProviderError: a typed subclass for HTTP errors, transport failures and malformed streams, with
                the configured API key redacted from its message and body.
        """
        endpoint = self._endpoint
        parser = self._parser(request)
        try:
            response = await self._open(request)
            try:
                async with aclosing(self._batches(response, parser)) as batches:
                    async for batch in batches:
                        for item in batch:
                            yield item
            except endpoint.timeout_errors as exc:
                raise ProviderTimeoutError(
                    f"the stream from {self.base_url} stalled", provider=self.profile.name
                ) from exc
            except endpoint.transport_errors as exc:
                raise ProviderConnectionError(
                    f"the connection to {self.base_url} broke: {type(exc).__name__}: {exc}",
                    provider=self.profile.name,
                ) from exc
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
            for item in parser.finish():
                yield item
        except ProviderError as exc:
            exc.redact(self._api_key)  # a server may echo the key back ("Incorrect API key provided: sk-…")
            raise

    async def _open(self, request: ModelRequest) -> Any:
        """Send ``request`` (the one place requests leave); the response, its body left to stream."""
        content = json.dumps(self._body(request), ensure_ascii=False, separators=(",", ":")).encode()
        return await self._endpoint.send(self.path, content, timeout=request.timeout)

    async def _batches(self, response: Any, parser: _Parser) -> AsyncGenerator[list[ModelEvent], None]:
        """The events of the body, a list per chunk: an event stream, or a whole answer or error."""
        kind = response.headers.get("content-type", "")
        if "text/event-stream" not in kind and ("html" in kind or "json" in kind):
            await response.aread()
            yield self._whole(response, kind, parser)
            return
        decoder = SSEDecoder()
        head = b""
        # The response's byte stream itself unless the body is compressed: `aiter_raw`/`aiter_bytes` add a
        # generator layer and a chunker call per chunk, and the server sends a chunk per event.
        encoding = response.headers.get("content-encoding", "identity")
        chunks = response.stream.__aiter__() if encoding in ("", "identity") else response.aiter_bytes()
        try:
            async for chunk in chunks:
                if not parser.seen_data and len(head) < 4096:
                    head += chunk
                if batch := self._feed(decoder.feed(chunk), parser):
                    yield batch
        except ProviderError:  # a malformed stream, or an error the stream reported: read the rest first
            await drain(chunks)
            raise
        finally:
            if hasattr(chunks, "aclose"):
                await chunks.aclose()
        yield self._feed(decoder.flush(), parser)
        if not parser.seen_data and head.strip():
            raise StreamError(
                "the server answered with something that is not an event stream",
                provider=self.profile.name,
                body=head.decode("utf-8", "replace"),
            )

    def _feed(self, events: list[ServerSentEvent], parser: Any) -> list[ModelEvent]:
        if len(events) == 1 and events[0].event == "message":
            return parser.feed(events[0].data)  # the common case: one event per chunk
        out: list[ModelEvent] = []
        for event in events:
            if event.event == "error":
                raise self._error_event(event.data)
            out += parser.feed(event.data)
        return out

    def _error_event(self, data: str) -> StreamError:
        """A named SSE ``error`` event (some proxies and gateways)."""
        return StreamError(f"error event in the stream: {data}", provider=self.profile.name, body=data)

    def _whole(self, response: Any, kind: str, parser: _Parser) -> list[ModelEvent]:
        """A server that ignored ``stream``: a whole chat.completion object, an error object, or a page."""
        if "json" not in kind:
            raise StreamError(
                "the server answered with an HTML page, not an event stream",
                provider=self.profile.name,
                body=response.text[:4096],
            )
        events = parser.feed(response.text)
        parser.done = True
        return events


class ChatCompletionsProvider(_SSEProvider):
    """A model behind an OpenAI chat-completions endpoint (OpenAI, Ollama, LM Studio, llama.cpp, vLLM …).

    Args:
        model: The model name the endpoint knows (``qwen3:8b``, ``gpt-4.1-mini``).
        profile: The endpoint's defaults and quirks (see `PROFILES`).
        base_url: Overrides ``OPENAGENT_BASE_URL``, the vendor's variable and the profile's default.
        api_key: Overrides ``OPENAGENT_API_KEY`` and the vendor's variable; keyless servers get a placeholder.
        http_client: An ``httpx2.AsyncClient`` to send through (tests, custom transports); by default the
            connection pool shared by every provider with the same proxy and TLS settings in this event loop.
    """

    path = "/chat/completions"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return build_body(request, self.model, self.profile)

    def _parser(self, request: ModelRequest) -> ChatStream:
        return ChatStream(
            self.profile.name,
            tool_names=frozenset(t.name for t in request.tools),
            text_protocol=bool(request.tools)
            and request.capabilities(self.profile).tool_call_protocol == "text",
        )


class ResponsesProvider(_SSEProvider):
    """A model behind an OpenAI Responses endpoint (``POST /responses``): OpenAI, or a server that speaks it.

    Reasoning items come back as `RawBlock` blocks and are sent back on the next turn (with their encrypted
    content when the profile says ``store: false``); hosted tools are given in ``extra_body["tools"]`` (see
    `web_search`, `file_search`, `code_interpreter`, `mcp`).

    Args:
        model: The model name the endpoint knows (``gpt-5``, ``o4-mini``).
        profile: The endpoint's defaults and quirks (see `PROFILES`).
        base_url: Overrides ``OPENAGENT_BASE_URL``, the vendor's variable and the profile's default.
        api_key: Overrides ``OPENAGENT_API_KEY`` and the vendor's variable; keyless servers get a placeholder.
        http_client: An ``httpx2.AsyncClient`` to send through (tests, custom transports); by default the
            connection pool shared by every provider with the same proxy and TLS settings in this event loop.
    """

    path = "/responses"
    _summaries = True
    """Reasoning summaries are asked for (until the organization turns out not to be allowed them)."""

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return _responses_request.build_body(request, self.model, self.profile, summary=self._summaries)

    def _parser(self, request: ModelRequest) -> ResponsesStream:
        return ResponsesStream(self.profile.name)

    async def _open(self, request: ModelRequest) -> Any:
        try:
            return await super()._open(request)
        except BadRequestError as exc:
            # OpenAI gives reasoning summaries to verified organizations only and refuses the request of
            # any other ("Your organization must be verified to generate reasoning summaries"): ask again
            # without, and no more for this provider.
            if not self._summaries or '"reasoning.summary"' not in (exc.body or ""):
                raise
            self._summaries = False
            logger.warning("openai: %s; continuing without reasoning summaries", exc.message)
            return await super()._open(request)

    def _feed(self, events: list[ServerSentEvent], parser: ResponsesStream) -> list[ModelEvent]:
        if len(events) == 1:
            return parser.feed(events[0].data, events[0].event)  # the common case: one event per chunk
        out: list[ModelEvent] = []
        for event in events:  # an `error` event is the parser's: its payload says what went wrong
            out += parser.feed(event.data, event.event)
        return out


def make_provider(
    model: str,
    *,
    profile: OpenAIProfile,
    base_url: str | None = None,
    api_key: str | None = None,
    http_client: Any = None,
) -> _SSEProvider:
    """The provider of ``model`` at the endpoint ``profile`` describes, on the wire that model takes.

    Args:
        model: The model name the endpoint knows.
        profile: The endpoint; its `OpenAIProfile.wire_for` picks `ResponsesProvider` or
            `ChatCompletionsProvider`.
        base_url: Overrides the endpoint's URL (see `ChatCompletionsProvider`).
        api_key: Overrides the endpoint's key.
        http_client: An HTTP client to send through (tests, proxies).
    """
    cls = ResponsesProvider if profile.wire_for(model) == "responses" else ChatCompletionsProvider
    return cls(model, profile=profile, base_url=base_url, api_key=api_key, http_client=http_client)
