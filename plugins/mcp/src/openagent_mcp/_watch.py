"""Watchers on a session's channels: they turn what the ``mcp`` package only logs or drops into faults.

`Inbox` and `Outbox` sit between the transport and the ``ClientSession``: the inbox reports the end of the
server's messages (a process that exited, a stream that broke) and messages that are not MCP at all; the
outbox reports a transport that no longer takes messages, and ties each request id to the call that sent
it. `WatchedTransport` sits under the HTTP client: it reports error statuses with the start of their body,
and a request whose response stream ended without resuming, which the ``mcp`` 1.x streamable-HTTP client
would otherwise leave waiting forever. `StderrTail` keeps the end of a stdio server's stderr.
"""

from __future__ import annotations

import contextvars
import json
import os
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx

from openagent._sse import SSEDecoder

__all__ = ["CURRENT_CALL", "Faults", "Inbox", "Outbox", "StderrTail", "WatchedTransport"]

CURRENT_CALL: contextvars.ContextVar[Any] = contextvars.ContextVar("openagent_mcp_call", default=None)
"""The call whose task is sending: the outbox ties the request id it sends to it."""

_ERROR_BODY = 2000  # characters of an error response kept for the message
_FRAMING = ("content-length", "transfer-encoding", "content-encoding")


class Faults:
    """What the watchers report, to the server that owns the session (callbacks, set by the server)."""

    def __init__(
        self,
        fatal: Callable[[str], None],
        suspect: Callable[[str, int | str | None], None],
        broken: Callable[[str, int | str | None], None],
        sent: Callable[[int | str, Any], None],
        posted: Callable[[int | str], None],
    ) -> None:
        self.fatal = fatal
        """The session cannot go on: end it, and every call on it, with this cause."""
        self.suspect = suspect
        """An answer may be lost (of one request id, or ``None``: any): end the calls soon unless it comes."""
        self.broken = broken
        """A stream broke: end the call of this request id now (``None``: none lost for sure), and check
        that the server is still alive."""
        self.sent = sent
        """A request id was sent by a call."""
        self.posted = posted
        """The HTTP client began posting this request id."""


def _excerpt(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


class Inbox:
    """The session's read stream: passes messages on, reports the end of the stream and garbage."""

    def __init__(self, stream: Any, faults: Faults) -> None:
        self._stream = stream
        self._faults = faults

    async def __aenter__(self) -> Inbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        while True:
            try:
                item = await self._stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._faults.fatal("the server closed the connection")
                raise StopAsyncIteration from None
            if not isinstance(item, Exception):
                return item
            if isinstance(item, httpx.TransportError | OSError):
                self._faults.fatal(f"the connection broke: {type(item).__name__}: {item}")
            else:  # a line or event that is not a JSON-RPC message: nobody can tell whose answer it was
                first = str(item).strip().splitlines()[:3]
                self._faults.suspect(
                    f"the server sent a malformed message ({_excerpt(' '.join(first))})", None
                )

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._stream.aclose()


class Outbox:
    """The session's write stream: records which call sent which request id; reports a dead transport.

    With ``handoff`` (streamable HTTP), a request is handed to the transport only after the previous one's
    POST has begun: mcp 1.x's streamable-HTTP writer starts each request's POST in a task whose closure
    reads the loop's current message, so a message queued right behind a request could be posted in its
    place, and the request never sent.
    """

    def __init__(
        self, stream: Any, faults: Faults, *, handoff: Callable[[int | str], Any] | None = None
    ) -> None:
        self._stream = stream
        self._faults = faults
        self._handoff = handoff
        self._lock = anyio.Lock()

    async def __aenter__(self) -> Outbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stream.aclose()

    async def send(self, item: Any) -> None:
        """Pass ``item`` to the transport."""
        root = getattr(getattr(item, "message", None), "root", None)
        request_id = getattr(root, "id", None) if getattr(root, "method", None) is not None else None
        call = CURRENT_CALL.get()
        if call is not None and request_id is not None:
            self._faults.sent(request_id, call)
        if self._handoff is None:
            return await self._send(item)
        async with self._lock:
            began = self._handoff(request_id) if request_id is not None else None
            await self._send(item)
            if began is not None:
                with anyio.move_on_after(1.0):
                    await began.wait()

    async def _send(self, item: Any) -> None:
        try:
            await self._stream.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._faults.fatal("the transport stopped taking messages (its connection failed)")
            raise

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._stream.aclose()


class StderrTail:
    """A stdio server's stderr through a pipe, read as it comes; the last few KB are kept for errors."""

    def __init__(self, keep: int = 4000) -> None:
        self._read, write = os.pipe()
        os.set_blocking(self._read, False)
        self.file = os.fdopen(write, "w")
        """Give this to the process as its stderr, then `detach` it."""
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self._keep = keep

    def detach(self) -> None:
        """Close this process's copy of the write end (the child keeps its own)."""
        self.file.close()

    def _drain(self) -> bool:
        """Read what is there; False at end of file."""
        while True:
            try:
                data = os.read(self._read, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            self._chunks.append(data)
            self._kept += len(data)
            while self._kept - len(self._chunks[0]) >= self._keep:
                self._kept -= len(self._chunks.popleft())

    async def pump(self) -> None:
        """Keep reading until end of file (a full pipe would block the server)."""
        while self._drain():
            await anyio.wait_readable(self._read)

    def tail(self, limit: int = 400) -> str:
        """`` (server stderr: …)`` with the end of what the server wrote, or nothing."""
        if self._read >= 0:
            self._drain()
        text = b"".join(self._chunks).decode("utf-8", errors="replace").strip()
        return f" (server stderr: {text[-limit:]})" if text else ""

    def close(self) -> None:
        """Close both ends."""
        if not self.file.closed:
            self.file.close()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


def _request_id(request: httpx.Request) -> int | str | None:
    try:
        body = json.loads(request.content)
    except (ValueError, httpx.RequestNotRead):
        return None
    found = body.get("id") if isinstance(body, dict) and "method" in body else None
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


class _Watched(httpx.AsyncByteStream):
    """A response body that reports, when it ends, whether the request it answers may still be waiting.

    With no ``request_id``, it is an event stream of the server's own: a break only says to check the server.
    """

    def __init__(self, stream: httpx.AsyncByteStream, request_id: int | str | None, faults: Faults) -> None:
        self._stream = stream
        self._chunks: AsyncIterator[bytes] | None = None
        self._id = request_id
        self._faults = faults
        self._events = SSEDecoder()
        self._resumable = False  # an event id lets the mcp client resume the stream by itself

    def __aiter__(self) -> AsyncIterator[bytes]:
        self._chunks = self._stream.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        assert self._chunks is not None
        try:
            chunk = await self._chunks.__anext__()
        except StopAsyncIteration:
            if not self._resumable and self._id is not None:
                self._faults.suspect("the server ended its answer stream without an answer", self._id)
            raise
        except httpx.HTTPError as exc:  # resumable or not, a dead server fails the check at once
            lost = None if self._resumable else self._id
            self._faults.broken(f"the connection broke during the call: {type(exc).__name__}: {exc}", lost)
            raise
        self._resumable = self._resumable or any(e.id for e in self._events.feed(chunk))
        return chunk

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):  # a connection's close is quick; never leave it half done
            await self._stream.aclose()
            await _close(self._chunks)


async def _close(chunks: Any) -> None:
    """Close a byte iterator left before its end (an async generator must not be left to the GC)."""
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()


async def _start_of(response: httpx.Response) -> bytes:
    """The first `_ERROR_BODY` bytes of a response's body; the response is closed."""
    body = b""
    chunks = response.stream.__aiter__()  # type: ignore[union-attr]
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) >= _ERROR_BODY:
                break
    finally:
        with anyio.CancelScope(shield=True):
            await response.aclose()
            await _close(chunks)
    return body


class WatchedTransport(httpx.AsyncBaseTransport):
    """An HTTP transport that reports failed POSTs and answer streams that ended early."""

    def __init__(self, faults: Faults, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._faults = faults
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; watch its response."""
        post, resuming = request.method == "POST", "last-event-id" in request.headers
        request_id = _request_id(request) if post else None
        if request_id is not None:
            self._faults.posted(request_id)
        try:
            response = await self._inner.handle_async_request(request)
        except httpx.HTTPError as exc:
            # A POST that failed lost its message; a refused connection means the server is gone (the mcp
            # client would retry its event streams against it, and leave the calls waiting).
            if post or resuming or isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
                self._faults.fatal(f"{type(exc).__name__}: {exc or 'the request failed'} ({request.url})")
            raise
        if response.status_code >= 400 and (post or resuming):
            body = await _start_of(response)
            text = _excerpt(body.decode("utf-8", errors="replace"), _ERROR_BODY)
            where = f"HTTP {response.status_code} from {request.method} {request.url}"
            self._faults.fatal(where + (f": {text}" if text else ""))
            kept = [(k, v) for k, v in response.headers.items() if k.lower() not in _FRAMING]
            return httpx.Response(response.status_code, headers=kept, content=body, request=request)
        if (
            (request_id is not None or request.method == "GET")
            and response.status_code < 300
            and response.status_code != 202
        ):
            response.stream = _Watched(response.stream, request_id, self._faults)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._inner.aclose()
