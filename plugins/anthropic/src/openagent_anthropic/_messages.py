"""The Anthropic messages wire format: request body out, server-sent events in, `ModelEvent`s out.

Requests go out over ``httpx2`` (the official ``anthropic`` client's HTTP library) with the headers that
client sends (auth, version) and its timeouts and pool limits, without importing it: the ``anthropic``
package takes about a second to import. Retries are the loop's retry policy's. The URL, the JSON body and
the response are handled here. The body is read as raw bytes and decoded with core's `SSEDecoder` and
``json.loads`` — no SDK object per event, no SDK transformation per request — because this is the hot path.

Options the core `ModelRequest` has no field for travel in ``ModelRequest.extra_body``, the one channel:
every key is an Anthropic Messages API body field and is sent verbatim (``thinking``, ``output_config``
with ``effort``, ``metadata``, ``service_tier``, ``top_k``, top-level ``cache_control``, …; ``tools`` such
as ``{"type": "web_search_20250305", "name": "web_search"}`` are added after the request's own), except
``betas``: a list of beta names, sent as the ``anthropic-beta`` header (what the SDK's ``betas=`` does).
Prompt caching: by default the provider marks ``{"type": "ephemeral"}`` breakpoints on the system prompt,
the last tool and the last message; ``extra_body={"cache_control": {...}}`` hands caching to the API's own
automatic caching with that setting instead, and ``extra_body={"cache_control": None}`` turns caching off.

Content blocks core has no type of its own for (``redacted_thinking``, server tool blocks such as
``server_tool_use`` / ``web_search_tool_result``) are yielded whole, as ``RawContent("anthropic", block)``
once the block is complete; the loop keeps them as `RawBlock`s in place, and replay sends them back
verbatim. A ``pause_turn`` stop (a server tool paused a long turn) is ``Stop("pause_turn")``: the loop sends
the paused turn back to let the server continue it. The request body is built in `_request`; this module
parses the stream and holds the provider.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import uuid
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from dataclasses import replace
from email.utils import parsedate_to_datetime
from time import time
from typing import Any, ClassVar

import anyio

from openagent.plugin import (
    ConfigError,
    ModelEvent,
    ModelProfile,
    ModelRequest,
    ProviderConnectionError,
    ProviderError,
    ProviderProfile,
    ProviderTimeoutError,
    RawContent,
    ServerSentEvent,
    SSEDecoder,
    Stop,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    error_for_status,
    json_data,
)

from ._request import build_body

__all__ = ["PROFILE", "MessagesProvider", "build_body", "parse_stream"]

logger = logging.getLogger("openagent.anthropic")

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the Messages API version this module speaks (the official clients')."""
PROFILE = ProviderProfile(
    name="anthropic",
    base_url=DEFAULT_BASE_URL,
    api_key_env="ANTHROPIC_API_KEY",
    defaults=ModelProfile(supports_json_schema=True, context_window=200_000),
)
_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",  # a server tool paused a long turn: send the turn back to continue it
    "model_context_window_exceeded": "max_tokens",
}
_DRAIN_SECONDS = 2.0  # how long, and how much, of a body the parser gave up on is read to its end
_DRAIN_BYTES = 1 << 20


# --- stream -------------------------------------------------------------------------------------------------


class _Turn:
    """What one response stream has said so far."""

    __slots__ = ("blocks", "partial", "stop_reason", "stopped", "tools", "usage")
    _handlers: ClassVar[dict[str, Callable[[_Turn, dict[str, Any]], list[ModelEvent]]]]

    def __init__(self) -> None:
        self.blocks: dict[int, str] = {}  # content index → block type
        self.partial: dict[int, tuple[dict[str, Any], list[str]]] = {}  # pass-through blocks being built
        self.tools: dict[int, bool] = {}  # tool_use index → whether argument text was sent
        self.stop_reason: str | None = None
        self.usage = Usage()
        self.stopped = False

    def handle(self, sse: ServerSentEvent, data: dict[str, Any] | None) -> list[ModelEvent]:
        """The events one server-sent event makes (``data``: its JSON when already decoded)."""
        if sse.event == "error":
            raise _error_event(sse.data)
        if sse.event == "ping":
            return []
        if not isinstance(data, dict):
            data = _decode(sse.data)
        # Quirk (proxies that drop ``event:`` lines): the ``type`` inside the data names the event.
        kind = data.get("type") or sse.event
        if kind == "error":
            raise _error_event(sse.data)
        if kind == "message_stop":
            return [self.finish()]
        handler = self._handlers.get(kind)
        return handler(self, data) if handler is not None else []  # ping, and event types added later

    def start(self, data: dict[str, Any]) -> list[ModelEvent]:
        index, block = data.get("index"), data.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise StreamError(
                "content_block_start without an index or a block", provider="anthropic", body=json.dumps(data)
            )
        kind = block.get("type")
        self.blocks[index] = kind if isinstance(kind, str) else ""
        if kind == "text":
            return [TextDelta(block["text"])] if block.get("text") else []
        if kind == "thinking":
            thinking, signature = block.get("thinking") or "", block.get("signature") or ""
            return [ThinkingDelta(thinking, signature)] if thinking or signature else []
        if kind == "tool_use":
            # Quirk (llama.cpp): tool_use starts without an id or without ``input``; the real API sends
            # ``input: {}`` and then the arguments as input_json_delta fragments.
            call_id = block.get("id") or f"toolu_{uuid.uuid4().hex[:24]}"
            events: list[ModelEvent] = [ToolCallStart(index, call_id, block.get("name") or "")]
            arguments = block.get("input")
            self.tools[index] = bool(arguments)
            if arguments:  # a server that sends the whole input at once: one fragment
                events.append(ToolCallDelta(index, json.dumps(arguments)))
            return events
        self.partial[index] = (block, [])  # redacted_thinking, server_tool_use, *_tool_result, …
        return []

    def delta(self, data: dict[str, Any]) -> list[ModelEvent]:
        index, delta = data.get("index"), data.get("delta")
        if not isinstance(delta, dict):
            raise StreamError(
                "content_block_delta without a delta", provider="anthropic", body=json.dumps(data)
            )
        kind = delta.get("type")
        if kind == "input_json_delta":
            fragment = delta.get("partial_json") or ""
            if index in self.tools:
                if not fragment:
                    return []
                self.tools[index] = True
                return [ToolCallDelta(index, fragment)]
            if index in self.partial:
                self.partial[index][1].append(fragment)
                return []
            raise StreamError(
                f"input_json_delta for block {index}, which never started",
                provider="anthropic",
                body=json.dumps(data),
            )
        if kind in ("text_delta", "thinking_delta", "signature_delta"):
            field = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature"}[kind]
            value = delta.get(field)
            if not isinstance(value, str):
                raise StreamError(
                    f"{kind} without a string {field}", provider="anthropic", body=json.dumps(data)
                )
            if not value:
                return []
            if kind == "text_delta":
                return [TextDelta(value)]
            return [ThinkingDelta(value)] if kind == "thinking_delta" else [ThinkingDelta(signature=value)]
        # citations_delta and delta types added after this was written: Anthropic's versioning policy says
        # clients must tolerate new event and delta types. Citations are not replayed (core has no field).
        logger.debug("anthropic: ignoring %s for block %s", kind, index)
        return []

    def stop(self, data: dict[str, Any]) -> list[ModelEvent]:
        index = data.get("index")
        if index in self.tools and not self.tools[index]:
            self.tools[index] = True
            return [ToolCallDelta(index, "{}")]  # a call without arguments
        if index in self.partial:
            block, fragments = self.partial.pop(index)
            if fragments and "".join(fragments).strip():
                try:
                    block = {**block, "input": json.loads("".join(fragments))}
                except ValueError as exc:
                    raise StreamError(
                        f"server tool block {index} has malformed input: {exc}",
                        provider="anthropic",
                        body="".join(fragments),
                    ) from None
            return [RawContent("anthropic", block)]
        return []

    def message_start(self, data: dict[str, Any]) -> list[ModelEvent]:
        message = data.get("message")
        usage = message.get("usage") if isinstance(message, dict) else None
        return self._usage(usage)

    def message_delta(self, data: dict[str, Any]) -> list[ModelEvent]:
        delta = data.get("delta")
        if isinstance(delta, dict) and delta.get("stop_reason"):
            self.stop_reason = str(delta["stop_reason"])
        return self._usage(data.get("usage"))

    def _usage(self, usage: Any) -> list[ModelEvent]:
        if not isinstance(usage, dict):
            return []
        update = Usage(  # fields may be absent or null (compatible servers, cache fields before use)
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens") or 0,
            cache_read_input_tokens=usage.get("cache_read_input_tokens") or 0,
        )
        self.usage = self.usage.merge(update)
        return [self.usage]

    def finish(self) -> Stop:
        self.stopped = True
        raw = self.stop_reason
        reason = _STOP_REASONS.get(raw or "", "end_turn")
        # Quirk (compatible servers): tool calls with end_turn / stop_sequence / no reason at all. The calls
        # are what the turn produced, so the loop must run them. llama.cpp's "tool_use" with a stop_sequence
        # set keeps "tool_use": the reason field wins over stop_sequence.
        if self.tools and reason in ("end_turn", "stop_sequence"):
            reason = "tool_use"
        return Stop(reason=reason, raw=raw)


_Turn._handlers = {
    "content_block_start": _Turn.start,
    "content_block_delta": _Turn.delta,
    "content_block_stop": _Turn.stop,
    "message_start": _Turn.message_start,
    "message_delta": _Turn.message_delta,
}


def _error_event(data: str) -> StreamError:
    """An ``error`` event inside a 200 stream; its data may not be Anthropic's envelope (llama.cpp)."""
    message = data.strip() or "error event without data"
    try:
        payload = json.loads(data)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            kind, text = error.get("type"), error.get("message")
            message = f"{kind}: {text}" if kind and text else str(text or kind or message)
        elif isinstance(error, str):
            message = error
    return StreamError(message, provider="anthropic", body=data)


def _decode(data: str) -> dict[str, Any]:
    try:
        payload = json.loads(data)
    except ValueError:
        raise StreamError("stream data is not JSON", provider="anthropic", body=data) from None
    if not isinstance(payload, dict):
        raise StreamError("stream data is not a JSON object", provider="anthropic", body=data)
    return payload


async def _batches(chunks: AsyncIterable[bytes]) -> AsyncGenerator[list[ServerSentEvent], None]:
    decoder = SSEDecoder()
    async for chunk in chunks:
        yield decoder.feed(chunk)
    yield decoder.flush()


async def parse_stream(chunks: AsyncIterable[bytes]) -> AsyncIterator[ModelEvent]:
    """Decode the bytes of a messages stream into events; `StreamError` for anything malformed."""
    turn = _Turn()
    loads = json_data
    async with aclosing(_batches(chunks)) as batches:
        async for batch in batches:
            for sse in batch:
                if turn.stopped:
                    break  # anything after message_stop ([DONE] from OpenAI-style proxies) is ignored
                data = None
                if sse.event == "content_block_delta":  # the hot path: one text fragment per event
                    try:
                        data = loads(sse.data)
                        delta = data["delta"]
                        if delta["type"] == "text_delta" and delta["text"].__class__ is str:
                            if delta["text"]:
                                yield TextDelta(delta["text"])
                            continue
                    except ValueError:
                        data = None  # handle() reports the raw data
                    except (KeyError, TypeError, AttributeError):
                        pass  # not a well-formed text delta: handle() sorts it out
                for event in turn.handle(sse, data):
                    yield event
    if not turn.stopped:
        if turn.stop_reason is None:
            raise StreamError("the stream ended before the message was complete", provider="anthropic")
        # Quirk (compatible servers): the stream ends after message_delta with a stop_reason but no
        # message_stop; everything the turn said has arrived.
        yield turn.finish()


def _replay_message(raw: bytes) -> list[ModelEvent]:
    """Quirk (compatible servers that ignore ``stream: true``): a whole message as one JSON body."""
    payload = _decode(raw.decode("utf-8", errors="replace"))
    if payload.get("type") == "error" or "content" not in payload:
        raise _error_event(raw.decode("utf-8", errors="replace"))
    turn = _Turn()
    events = turn.message_start({"message": payload})
    for index, block in enumerate(payload.get("content") or []):
        events += turn.start({"index": index, "content_block": block})
        events += turn.stop({"index": index})
    events += turn.message_delta({"delta": {"stop_reason": payload.get("stop_reason")}})
    return [*events, turn.finish()]


# --- the provider -------------------------------------------------------------------------------------------


class MessagesProvider:
    """A model behind an Anthropic messages endpoint: the Anthropic API or a compatible server.

    The key comes from ``api_key``, else ``OPENAGENT_API_KEY``, else ``ANTHROPIC_API_KEY``; the URL from
    ``base_url``, else ``OPENAGENT_BASE_URL``, else ``ANTHROPIC_BASE_URL``, else the Anthropic API. A server
    other than the Anthropic API needs no key (a placeholder is sent). Requests go out over ``httpx2`` with
    the headers, timeouts and pool limits of the official client (proxies and TLS settings from the
    environment); the URL, the JSON body and the handling of the response are this module's.

    Args:
        model: The model name, e.g. ``claude-sonnet-4-5``.
        base_url: The server's root URL (a trailing ``/v1`` is accepted and dropped).
        api_key: The API key.
        http_client: An ``httpx2.AsyncClient`` to send requests with (proxies, tests); one is made otherwise.
    """

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key: str | None = None, http_client: Any = None
    ) -> None:
        try:
            import httpx2
        except ImportError as exc:  # pragma: no cover - the package depends on it
            raise ImportError('the anthropic provider needs: pip install "openagent[anthropic]"') from exc
        self._httpx = httpx2
        self.model = model
        env = os.environ.get
        url = base_url or env("OPENAGENT_BASE_URL") or env("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        # Quirk (users of OpenAI-style URLs): /v1/messages is appended here, so a /v1 suffix is dropped.
        url = url.rstrip("/").removesuffix("/v1")
        official = url == DEFAULT_BASE_URL
        key = api_key or env("OPENAGENT_API_KEY") or env("ANTHROPIC_API_KEY")
        if not key:
            if official:
                raise ConfigError(
                    "the anthropic provider needs an API key: set ANTHROPIC_API_KEY, or api_key"
                )
            key = "no-key"  # local compatible servers (llama.cpp) take any key
        self.profile: ProviderProfile = replace(PROFILE, base_url=url, requires_api_key=official)
        """This endpoint, and what the models behind it can do."""
        self._key = key
        # The official client's defaults (10 minutes to answer, 5 s to connect, its pool limits), without
        # importing it: the `anthropic` package takes about a second to import, more than a whole answer.
        self._timeout = httpx2.Timeout(600.0, connect=5.0)
        if http_client is None:
            limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
            http_client = httpx2.AsyncClient(verify=_ssl_context(), timeout=self._timeout, limits=limits)
        self._headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "anthropic-version": API_VERSION,
            "Authorization": f"Bearer {key}",  # as the official client of this API generation sends it
            "User-Agent": f"openagent-anthropic/Python {_version()}",
        }
        self._url = f"{url}/v1/messages"
        self._http = http_client

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send ``request`` and yield its events as they arrive.

        Raises:
            openagent.plugin.ProviderError: A typed subclass for every failure: HTTP status, connection,
                timeout, malformed stream; the API key is redacted from its message and body.
        """
        body, extra_headers = build_body(request)
        body["stream"] = True
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {**self._headers, **extra_headers} if extra_headers else self._headers
        timeout = self._timeout if request.timeout is None else request.timeout
        httpx = self._httpx
        sent = self._http.build_request("POST", self._url, headers=headers, content=content, timeout=timeout)
        started = False
        try:
            try:
                response = await self._http.send(sent, stream=True)
            except httpx.TimeoutException as exc:
                raise ProviderTimeoutError(f"timed out: {exc}", provider="anthropic") from exc
            except httpx.TransportError as exc:
                where = self.profile.base_url
                raise ProviderConnectionError(f"cannot reach {where}: {exc!r}", provider="anthropic") from exc
            try:
                if response.status_code >= 400:
                    await response.aread()
                    raise _status_error(response)
                if "text/event-stream" not in response.headers.get("content-type", "text/event-stream"):
                    for event in _replay_message(await response.aread()):
                        yield event
                    return
                # The response's byte stream itself unless the body is compressed (or already read, as
                # cassettes replay it): `aiter_raw`/`aiter_bytes` add a generator layer and a chunker call
                # per chunk, and a server sends a chunk per event.
                raw = response.headers.get("content-encoding", "identity") in ("", "identity")
                raw = raw and not response.is_stream_consumed
                chunks = response.stream.__aiter__() if raw else response.aiter_bytes()
                async with _closing(chunks):  # closed at once when parsing fails
                    try:
                        async for event in parse_stream(chunks):
                            started = True
                            yield event
                    except StreamError:
                        await _drain(chunks)
                        raise
            except httpx.TimeoutException as exc:
                raise ProviderTimeoutError(f"timed out: {exc}", provider="anthropic") from exc
            except httpx.TransportError as exc:
                if started:
                    raise StreamError(
                        f"the connection broke mid-stream: {exc!r}", provider="anthropic"
                    ) from exc
                where = self.profile.base_url
                raise ProviderConnectionError(f"cannot reach {where}: {exc!r}", provider="anthropic") from exc
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        except ProviderError as exc:
            exc.redact(self._key)  # a server may echo the key back ("invalid x-api-key: sk-…")
            raise


@asynccontextmanager
async def _closing(chunks: AsyncIterator[bytes]) -> AsyncIterator[AsyncIterator[bytes]]:
    """Close ``chunks`` on the way out when it is a generator (`aclosing` for any byte iterator)."""
    try:
        yield chunks
    finally:
        if isinstance(chunks, AsyncGenerator):
            await chunks.aclose()


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read the rest of a body the parser gave up on (briefly, boundedly).

    An HTTP library generator abandoned mid-body is finalised by the garbage collector, which trio reports
    as a ResourceWarning (httpcore2's `PoolByteStream.__aiter__` is not closed by httpx2's transport
    stream); a body read to its end closes them all in order. A body that goes on (or stalls) past the
    bounds, or breaks, is left to the response's own close instead.
    """
    received = 0
    with anyio.move_on_after(_DRAIN_SECONDS):
        try:
            async for chunk in chunks:
                received += len(chunk)
                if received > _DRAIN_BYTES:
                    break
        except Exception:  # the body broke while being thrown away: nothing left to read
            return


@functools.cache
@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openagent-anthropic")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def _ssl_context() -> Any:
    """The default TLS context, made once per process: building one loads the CA bundle (tens of ms of
    CPU), which every provider (every conversation) would otherwise pay.
    """  # noqa: D205
    import httpx2

    return httpx2.create_ssl_context()


def _status_error(response: Any) -> ProviderError:
    """The typed error for an HTTP error status, with the server's own words when its body has them."""
    status = response.status_code
    try:
        text: str = response.text
    except Exception:  # a body that cannot be decoded leaves the status to speak for itself
        text = ""
    message = _error_message(text) or response.reason_phrase or f"HTTP {status}"
    return error_for_status(
        status, message, provider="anthropic", body=text or None, retry_after=_retry_after(response.headers)
    )


def _error_message(text: str) -> str:
    """``error.message`` from Anthropic's envelope (or a compatible server's variant), else the text."""
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        return text.strip()[:1000]
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            error = error.get("message") or error.get("detail") or payload.get("message")
        if error:
            return error if isinstance(error, str) else json.dumps(error)
    return text.strip()[:1000]


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time())
        except (TypeError, ValueError):
            return None
