"""The providers of OpenAI's two wire formats, sent through the ``openai`` client's HTTP client.

`ChatCompletionsProvider` (``POST /chat/completions``, parsed by `_chat.ChatStream`) and `ResponsesProvider`
(``POST /responses``, parsed by `_responses.ResponsesStream`) share everything but the path, the body and the
parser: the ``openai`` client is built once per provider for its configuration (base URL, default headers,
auth, timeouts, its ``httpx2`` client); each request is then sent through that ``httpx2`` client directly
(one function, `_SSEProvider._open`), the JSON body and headers built here, and the body read as raw bytes
(no typed object per chunk). Skipping the client's per-request machinery (options, transforms, its response
wrappers) was the largest cost above a bare ``httpx`` loop when profiled. Retries are the core loop's,
applied only before the first event is handed on.

Every error raised here is a `ProviderError` with the configured API key redacted from it, in case the
server echoed the key back.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any, ClassVar, Protocol

import anyio

from openagent._sse import ServerSentEvent, SSEDecoder
from openagent.errors import (
    BadRequestError,
    ContextWindowExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StreamError,
    error_for_status,
)
from openagent.models import ModelEvent, ModelRequest

from . import _responses_request
from ._chat import ChatStream, build_body
from ._profiles import OpenAIProfile, resolve_api_key, resolve_base_url
from ._responses import ResponsesStream

__all__ = ["ChatCompletionsProvider", "ResponsesProvider", "make_provider"]

logger = logging.getLogger("openagent.openai")

# The machine-readable codes servers give a context overflow, whatever their message says: OpenAI's
# `context_length_exceeded`, llama.cpp's `exceed_context_size_error` ("the request exceeds the available
# context size").
_CONTEXT_CODES = ("context_length_exceeded", "exceed_context_size_error")
_DRAIN_SECONDS = 2.0
"""How long the rest of a body being abandoned after a stream error is read for (see `_drain`)."""
_INSTALL = 'the openai provider needs the openai package: pip install "openagent[openai]"'


class _Parser(Protocol):
    done: bool
    seen_data: bool

    def feed(self, data: str) -> list[ModelEvent]: ...
    def finish(self) -> list[ModelEvent]: ...


class _SSEProvider:
    """What both wires share: the client, sending, reading the event stream, and typing every failure.

    Args:
        model: The model name the endpoint knows (``qwen3:8b``, ``gpt-4.1-mini``).
        profile: The endpoint's defaults and quirks (see `PROFILES`).
        base_url: Overrides ``OPENAGENT_BASE_URL``, the vendor's variable and the profile's default.
        api_key: Overrides ``OPENAGENT_API_KEY`` and the vendor's variable; keyless servers get a placeholder.
        http_client: An ``httpx`` client for the ``openai`` package to send through (tests, proxies).
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
        self._http_client = http_client
        self._client: Any = None
        self._transport_errors: tuple[type[BaseException], ...] = ()
        self._timeout_errors: tuple[type[BaseException], ...] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, profile={self.profile.name!r})"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _parser(self, request: ModelRequest) -> _Parser:
        raise NotImplementedError

    def _openai(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise ImportError(_INSTALL) from exc
            http_client = self._http_client or openai.DefaultAsyncHttpxClient(verify=_ssl_context())
            client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, http_client=http_client
            )
            # What the client would send with every request: its default headers (user agent, platform,
            # organization and project when set; an `Omit` marks one left out) and its auth header.
            headers = {k: v for k, v in client.default_headers.items() if isinstance(v, str)}
            headers.update(client.auth_headers)
            headers["Accept"] = "text/event-stream"
            self._headers = headers
            self._url = f"{str(client.base_url).rstrip('/')}{self.path}"
            self._timeout = client.timeout
            self._http = client._client  # the client's own httpx2 client: its pool, TLS, proxies, limits
            self._transport_errors, self._timeout_errors = _transport_errors()
            self._client = client
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send ``request`` and yield its events as they arrive.

        Raises:
            ProviderError: a typed subclass for HTTP errors, transport failures and malformed streams, with
                the configured API key redacted from its message and body.
        """
        self._openai()
        parser = self._parser(request)
        try:
            response = await self._open(request)
            try:
                async with aclosing(self._batches(response, parser)) as batches:
                    async for batch in batches:
                        for item in batch:
                            yield item
            except self._timeout_errors as exc:
                raise ProviderTimeoutError(
                    f"the stream from {self.base_url} stalled", provider=self.profile.name
                ) from exc
            except self._transport_errors as exc:
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
        """Send ``request``; the response, its body left to stream. An HTTP error status raises its error."""
        content = json.dumps(self._body(request), ensure_ascii=False, separators=(",", ":")).encode()
        timeout = self._timeout if request.timeout is None else request.timeout
        sent = self._http.build_request(
            "POST", self._url, headers=self._headers, content=content, timeout=timeout
        )
        response = await self._send(sent)
        if response.status_code >= 400:
            try:
                await response.aread()
            except (*self._transport_errors, *self._timeout_errors):
                pass  # the error body broke off: the status speaks for itself (`_status_error`)
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
            raise self._status_error(response.status_code, response)
        return response

    async def _send(self, sent: Any) -> Any:
        """Send the request; the response's body is left to stream."""
        try:
            return await self._http.send(sent, stream=True)
        except self._timeout_errors as exc:
            raise ProviderTimeoutError(
                f"no answer from {self.base_url} in time", provider=self.profile.name
            ) from exc
        except self._transport_errors as exc:
            raise ProviderConnectionError(
                f"cannot reach {self.base_url}: {type(exc).__name__}: {exc}", provider=self.profile.name
            ) from exc

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
            await _drain(chunks)
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

    def _status_error(self, status: int, response: Any) -> ProviderError:
        try:
            text = response.text  # read in full above
        except Exception:  # a body that could not be decoded leaves the status to speak for itself
            text = ""
        message = _message(text) or response.reason_phrase or f"HTTP {status}"
        retry_after = _retry_after(response.headers)
        if status in (400, 413) and any(code in text for code in _CONTEXT_CODES):
            return ContextWindowExceededError(
                message, provider=self.profile.name, status_code=status, body=text, retry_after=retry_after
            )
        return error_for_status(
            status, message, provider=self.profile.name, body=text, retry_after=retry_after
        )


class ChatCompletionsProvider(_SSEProvider):
    """A model behind an OpenAI chat-completions endpoint (OpenAI, Ollama, LM Studio, llama.cpp, vLLM …).

    Args:
        model: The model name the endpoint knows (``qwen3:8b``, ``gpt-4.1-mini``).
        profile: The endpoint's defaults and quirks (see `PROFILES`).
        base_url: Overrides ``OPENAGENT_BASE_URL``, the vendor's variable and the profile's default.
        api_key: Overrides ``OPENAGENT_API_KEY`` and the vendor's variable; keyless servers get a placeholder.
        http_client: An ``httpx`` client for the ``openai`` package to send through (tests, proxies).
    """

    path = "/chat/completions"

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        return build_body(request, self.model, self.profile)

    def _parser(self, request: ModelRequest) -> ChatStream:
        return ChatStream(
            self.profile.name,
            tool_names=frozenset(t.name for t in request.tools),
            text_protocol=self.profile.tool_call_protocol == "text" and bool(request.tools),
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
        http_client: An ``httpx`` client for the ``openai`` package to send through (tests, proxies).
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


async def _drain(chunks: Any) -> None:
    """Read what is left of a body being abandoned, for a short while.

    An HTTP library's generators left half-iterated are finalized by the garbage collector, which trio
    reports as a ResourceWarning (httpcore2's `PoolByteStream.__aiter__` is not closed by httpx2's transport
    stream); a body read to its end, or ended by the deadline's cancellation, closes every one of them.
    """
    with anyio.move_on_after(_DRAIN_SECONDS):
        try:
            async for _ in chunks:
                pass
        except Exception:  # the body broke while being thrown away: nothing left to close
            return


def _message(text: str) -> str:
    """The server's own words from an error body (``{"error": {"message": ...}}`` and its variants)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text.strip()[:1000]
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            error = error.get("message") or error.get("detail") or data.get("message") or data.get("detail")
        if error:
            return error if isinstance(error, str) else json.dumps(error)
    return text.strip()[:1000]


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (OpenAI) or ``Retry-After`` (seconds or an HTTP date)."""
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(float(ms) / 1000, 0.0)
        if (value := headers.get("retry-after")) is None:
            return None
        try:
            return max(float(value), 0.0)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(when.timestamp() - time.time(), 0.0)
    except (ValueError, TypeError):
        return None


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The default TLS context, made once per process: building one loads the CA bundle, ~60 ms of CPU,
    which would otherwise be paid by every provider (every conversation).
    """  # noqa: D205
    import httpx2

    context: ssl.SSLContext = httpx2.create_ssl_context()
    return context


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """The transport and timeout exceptions of the HTTP library under the ``openai`` package."""
    transport: list[type[BaseException]] = []
    timeouts: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        transport.append(module.TransportError)
        timeouts.append(module.TimeoutException)
    return tuple(transport), tuple(timeouts)
