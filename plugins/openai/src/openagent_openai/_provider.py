"""`ChatCompletionsProvider`: one chat-completions endpoint, over the official ``openai`` client.

The client sends the request and maps transport and HTTP failures; the body is read as raw bytes and parsed
by `_chat.ChatStream` (no typed object per chunk). The client's own retries are off: the core loop applies
the retry policy, and only before the first event is handed on.
"""

from __future__ import annotations

import email.utils
import functools
import json
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

from openagent._sse import SSEDecoder
from openagent.errors import (
    ContextWindowExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StreamError,
    error_for_status,
)
from openagent.models import ModelEvent, ModelRequest

from ._chat import ChatStream, build_body
from ._profiles import OpenAIProfile, resolve_api_key, resolve_base_url

__all__ = ["ChatCompletionsProvider"]

# The machine-readable codes servers give a context overflow, whatever their message says: OpenAI's
# `context_length_exceeded`, llama.cpp's `exceed_context_size_error` ("the request exceeds the available
# context size").
_CONTEXT_CODES = ("context_length_exceeded", "exceed_context_size_error")
_INSTALL = 'the openai provider needs the openai package: pip install "openagent[openai]"'


class ChatCompletionsProvider:
    """A model behind an OpenAI chat-completions endpoint (OpenAI, Ollama, LM Studio, llama.cpp, vLLM …).

    Args:
        model: The model name the endpoint knows (``qwen3:8b``, ``gpt-4.1-mini``).
        profile: The endpoint's defaults and quirks (see `PROFILES`).
        base_url: Overrides ``OPENAGENT_BASE_URL``, the vendor's variable and the profile's default.
        api_key: Overrides ``OPENAGENT_API_KEY`` and the vendor's variable; keyless servers get a placeholder.
        http_client: An ``httpx`` client for the ``openai`` package to send through (tests, proxies).
    """

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
        return f"ChatCompletionsProvider({self.model!r}, profile={self.profile.name!r})"

    def _openai(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise ImportError(_INSTALL) from exc
            self._openai_module = openai
            http_client = self._http_client or openai.DefaultAsyncHttpxClient(verify=_ssl_context())
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, http_client=http_client
            )
            self._transport_errors, self._timeout_errors = _transport_errors()
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Send ``request`` and yield its events as they arrive.

        Raises:
            ProviderError: a typed subclass for HTTP errors, transport failures and malformed streams.
        """
        client = self._openai()
        body = build_body(request, self.model, self.profile)
        # The body is already in wire form. Passed as `extra_body` (which the client sends verbatim, over the
        # named fields), it skips the client's per-request walk of the whole history against its TypedDicts,
        # 40% of a request's CPU when profiled.
        kwargs: dict[str, Any] = {"model": body["model"], "messages": (), "stream": True, "extra_body": body}
        if request.timeout is not None:
            kwargs["timeout"] = request.timeout
        text_protocol = self.profile.tool_call_protocol == "text" and bool(request.tools)
        parser = ChatStream(
            self.profile.name,
            tool_names=frozenset(t.name for t in request.tools),
            text_protocol=text_protocol,
        )
        openai = self._openai_module
        try:
            async with client.chat.completions.with_streaming_response.create(**kwargs) as raw:
                async with aclosing(self._batches(raw.http_response, parser)) as batches:
                    async for batch in batches:
                        for item in batch:
                            yield item
        except openai.APIStatusError as exc:
            raise self._status_error(exc.status_code, exc.response) from exc
        except openai.APITimeoutError as exc:
            raise ProviderTimeoutError(
                f"no answer from {self.base_url} in time", provider=self.profile.name
            ) from exc
        except openai.APIConnectionError as exc:
            raise ProviderConnectionError(
                f"cannot reach {self.base_url}: {exc.__cause__ or exc}", provider=self.profile.name
            ) from exc
        except self._timeout_errors as exc:
            raise ProviderTimeoutError(
                f"the stream from {self.base_url} stalled", provider=self.profile.name
            ) from exc
        except self._transport_errors as exc:
            raise ProviderConnectionError(
                f"the connection to {self.base_url} broke: {type(exc).__name__}: {exc}",
                provider=self.profile.name,
            ) from exc
        for item in parser.finish():
            yield item

    async def _batches(self, response: Any, parser: ChatStream) -> AsyncGenerator[list[ModelEvent], None]:
        """Parse the body: an event stream, or a whole answer from a server that ignored ``stream``."""
        kind = response.headers.get("content-type", "")
        if "text/event-stream" not in kind and ("html" in kind or "json" in kind):
            await response.aread()
            if "json" not in kind:
                raise StreamError(
                    "the server answered with an HTML page, not an event stream",
                    provider=self.profile.name,
                    body=response.text[:4096],
                )
            yield parser.feed(response.text)  # a whole chat.completion object, or an error object
            parser.done = True
            return
        decoder = SSEDecoder()
        head = b""
        async with aclosing(response.aiter_bytes()) as chunks:
            async for chunk in chunks:
                if not parser.seen_data and len(head) < 4096:
                    head += chunk
                for event in decoder.feed(chunk):
                    if batch := self._event(event.event, event.data, parser):
                        yield batch
        for event in decoder.flush():
            yield self._event(event.event, event.data, parser)
        if not parser.seen_data and head.strip():
            raise StreamError(
                "the server answered with something that is not an event stream",
                provider=self.profile.name,
                body=head.decode("utf-8", "replace"),
            )

    def _event(self, name: str, data: str, parser: ChatStream) -> list[ModelEvent]:
        if name == "error":  # a named SSE error event (some proxies and gateways)
            raise StreamError(f"error event in the stream: {data}", provider=self.profile.name, body=data)
        return parser.feed(data)

    def _status_error(self, status: int, response: Any) -> ProviderError:
        try:
            text = response.text  # the client has read the error body already
        except Exception:  # a body that could not be read leaves the status to speak for itself
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

    return httpx2.create_ssl_context()


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
