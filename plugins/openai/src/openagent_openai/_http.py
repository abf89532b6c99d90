"""How requests leave the openai plugin: `Endpoint`, shared by every wire format of the plugin.

Requests are sent with ``httpx2`` (the HTTP library under the official ``openai`` package) directly, with the
headers, auth, proxies, TLS, timeouts and connection limits that ``openai.AsyncOpenAI`` would use:

- headers: ``Authorization: Bearer <key>``, ``Content-Type``/``Accept``, a ``User-Agent`` naming this
  plugin, the ``X-Stainless-*`` platform headers (language, OS, architecture, runtime, async library, retry
  count, read timeout), and ``OpenAI-Organization``/``OpenAI-Project`` from ``OPENAI_ORG_ID``/
  ``OPENAI_PROJECT_ID`` for the OpenAI API;
- proxies from ``HTTP(S)_PROXY``/``ALL_PROXY``/``NO_PROXY`` and CA files from ``SSL_CERT_FILE``/
  ``SSL_CERT_DIR`` (``trust_env``, as the client does); 600 s timeouts with 5 s to connect; at most 1000
  connections, 100 kept alive; redirects followed.

Importing ``openai`` costs about a second of start-up and its per-request machinery more CPU than a whole
stream; none of it is needed to send a JSON body and read an event stream.

Connection pools are shared: every `Endpoint` with the same proxy and TLS settings in one event loop sends
through one ``httpx2`` client, so consecutive ``query()`` calls reuse connections. The pool is closed when
its event loop ends (an async generator parked in the loop closes it when the loop finalizes it) — a
connection cannot outlive the loop that opened it.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

import anyio
import anyio.lowlevel
from anyio.lowlevel import RunVar

from openagent.plugin import (
    ContextWindowExceededError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    error_for_status,
)

__all__ = ["Endpoint", "aclose_connections", "drain", "platform_headers"]

VERSION = "0.1.0"
"""This plugin's version, as its ``User-Agent`` gives it."""
# The official client's defaults (openai._constants): what users of it get, they get here.
_TIMEOUT = (600.0, 5.0)
"""Seconds: each read/write/pool wait, and to connect."""
_LIMITS = (1000, 100)
"""Connections at most, and kept alive at most."""
# The machine-readable codes servers give a context overflow, whatever their message says: OpenAI's
# `context_length_exceeded`, llama.cpp's `exceed_context_size_error` ("the request exceeds the available
# context size").
_CONTEXT_CODES = ("context_length_exceeded", "exceed_context_size_error")
_DRAIN_SECONDS = 2.0
"""How long the rest of a body being abandoned after a stream error is read for (see `drain`)."""
# What ``trust_env`` makes an httpx2 client read at construction: clients are shared per distinct values.
_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")

_POOLS: RunVar[dict[tuple[str | None, ...], Any]] = RunVar("openagent_openai_pools")


class Endpoint:
    """One API root and its credentials: builds the URL and headers, sends, and maps failures to errors.

    Args:
        base_url: The API root (``https://api.openai.com/v1``); paths are appended to it.
        api_key: Sent as ``Authorization: Bearer``.
        provider: The provider's name, for errors.
        http_client: An ``httpx2.AsyncClient`` to send through (tests, custom transports); closed by
            `aclose`. Without one, the shared pool for this event loop is used.
        organization: ``OpenAI-Organization``, sent when given.
        project: ``OpenAI-Project``, sent when given.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        provider: str,
        http_client: Any = None,
        organization: str | None = None,
        project: str | None = None,
    ) -> None:
        import httpx2  # with the first endpoint, not at plugin registration

        self.base_url = base_url.rstrip("/")
        self.provider = provider
        self.api_key = api_key
        self._own_client = http_client
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": f"openagent-openai/Python {VERSION}",
            **platform_headers(),
            "X-Stainless-Retry-Count": "0",  # retries are the core loop's, each a fresh request
        }
        if organization:
            headers["OpenAI-Organization"] = organization
        if project:
            headers["OpenAI-Project"] = project
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.headers = headers
        """What every request carries (`send` adds the per-request ones)."""
        self.timeout_errors: tuple[type[BaseException], ...] = (httpx2.TimeoutException,)
        self.transport_errors: tuple[type[BaseException], ...] = (httpx2.TransportError,)
        self._dropped: tuple[type[BaseException], ...] = (httpx2.RemoteProtocolError,)

    def url(self, path: str) -> str:
        """``base_url`` + ``path`` (``/chat/completions``), with one slash between them."""
        return f"{self.base_url}/{path.lstrip('/')}"

    async def client(self) -> Any:
        """The ``httpx2.AsyncClient`` requests go through: the caller's, or this loop's shared one."""
        if self._own_client is not None:
            return self._own_client
        return await _shared_client()

    async def aclose(self) -> None:
        """Close a client given to this endpoint; a shared pool stays open for the next request."""
        client, self._own_client = self._own_client, None
        if client is not None:
            await client.aclose()

    async def send(
        self,
        path: str,
        body: bytes,
        *,
        timeout: float | None,  # noqa: ASYNC109 - the request's own timeout, handed to httpx2 as its phases
        stream: bool = True,
    ) -> Any:
        """POST ``body`` (JSON) to ``path``; the response's body is left to stream.

        Raises:
            ProviderError: a typed subclass: the status's (with the server's message and ``Retry-After``),
                `ProviderTimeoutError`, or `ProviderConnectionError`.
        """
        http = await self.client()
        read = _TIMEOUT[0] if timeout is None else timeout
        headers = {
            **self.headers,
            "X-Stainless-Async": f"async:{_async_library()}",
            "X-Stainless-Read-Timeout": str(read),
        }
        if stream:
            headers["Accept"] = "text/event-stream"
        # The client's default (600 s, 5 s to connect), or the request's own timeout for every phase.
        phases = (_TIMEOUT[1], read, read, read) if timeout is None else timeout
        request = http.build_request("POST", self.url(path), headers=headers, content=body, timeout=phases)
        try:
            response = await self._send(http, request, stream=True)
        except self.timeout_errors as exc:
            raise ProviderTimeoutError(
                f"no answer from {self.base_url} in time", provider=self.provider
            ) from exc
        except self.transport_errors as exc:
            raise ProviderConnectionError(
                f"cannot reach {self.base_url}: {type(exc).__name__}: {exc}", provider=self.provider
            ) from exc
        if response.status_code >= 400:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise self.status_error(response)
        return response

    async def _send(self, http: Any, request: Any, *, stream: bool) -> Any:
        try:
            return await http.send(request, stream=stream)
        except self._dropped:
            # The connection closed before a byte of answer came: a kept-alive connection the server was
            # closing as the request went out (llama.cpp's server closes one after a streamed answer).
            # Nothing was received, so the request goes once more on a new connection, as browsers do.
            return await http.send(request, stream=stream)

    async def probe(self, method: str, url: str, body: Any = None) -> Any:
        """A small request beside the model's (what a server says about a model): its JSON body, or ``None``
        when the server cannot say (an error status, a transport failure, a body that is not JSON).
        """  # noqa: D205
        http = await self.client()
        request = http.build_request(method, url, headers=self.headers, json=body, timeout=10.0)
        try:
            response = await self._send(http, request, stream=False)
            return response.json() if response.status_code == 200 else None
        except (*self.transport_errors, ValueError, RecursionError):
            return None

    def status_error(self, response: Any) -> ProviderError:
        """The typed error for an HTTP error status, with the server's own words when its body has them."""
        status = response.status_code
        try:
            text = response.text  # read in full by the caller
        except Exception:  # a body that could not be decoded leaves the status to speak for itself
            text = ""
        message = error_message(text) or response.reason_phrase or f"HTTP {status}"
        retry_after = _retry_after(response.headers)
        if status in (400, 413) and any(code in text for code in _CONTEXT_CODES):
            return ContextWindowExceededError(
                message, provider=self.provider, status_code=status, body=text, retry_after=retry_after
            )
        return error_for_status(status, message, provider=self.provider, body=text, retry_after=retry_after)


@functools.cache
def platform_headers() -> dict[str, str]:
    """The ``X-Stainless-*`` headers describing this process, as the official client sends them."""
    return {
        "X-Stainless-Lang": "python",
        "X-Stainless-Package-Version": VERSION,
        "X-Stainless-OS": _os_name(),
        "X-Stainless-Arch": _arch(),
        "X-Stainless-Runtime": platform.python_implementation(),
        "X-Stainless-Runtime-Version": platform.python_version(),
    }


def _os_name() -> str:
    name = sys.platform
    if name.startswith("linux"):
        return "Linux"
    known = {"darwin": "MacOS", "win32": "Windows", "android": "Android", "ios": "iOS"}
    if name in known:
        return known[name]
    for prefix, label in (("freebsd", "FreeBSD"), ("openbsd", "OpenBSD")):
        if name.startswith(prefix):
            return label
    return f"Other:{name}"


def _arch() -> str:
    machine = platform.machine().lower()
    if machine in ("arm64", "aarch64"):
        return "arm64"
    if machine in ("x86_64", "amd64"):
        return "x64"
    if machine == "arm":
        return "arm"
    return f"other:{machine}" if machine else "unknown"


def _async_library() -> str:
    """``asyncio`` or ``trio``: what the client reports in ``X-Stainless-Async``."""
    return "trio" if "trio" in anyio.lowlevel.get_async_backend().__module__ else "asyncio"


# --- the shared pool --------------------------------------------------------------------------------------


async def _shared_client() -> Any:
    """This event loop's client for the current proxy and TLS environment, made on first use."""
    try:
        pools = _POOLS.get()
    except LookupError:
        pools = {}
        _POOLS.set(pools)
    key = tuple(os.environ.get(name) or os.environ.get(name.lower()) for name in _ENV)
    entry = pools.get(key)
    if entry is None or entry[0].is_closed:
        import httpx2

        limits = httpx2.Limits(max_connections=_LIMITS[0], max_keepalive_connections=_LIMITS[1])
        # With a proxy in the environment, the client's own transports (httpx2 reads the proxy variables only
        # when it makes them); without one, pools that load the CA bundle with the first https request.
        proxied = any(key[:3])
        client = httpx2.AsyncClient(
            verify=_ssl_context(key[-2], key[-1]) if proxied else True,
            transport=None if proxied else _Transports(),
            limits=limits,
            timeout=httpx2.Timeout(_TIMEOUT[0], connect=_TIMEOUT[1]),
            follow_redirects=True,
        )
        keeper = _close_at_loop_end(client)
        await keeper.asend(None)  # parked in this loop: the loop finalizes it, and so closes the client
        entry = pools[key] = (client, keeper)
    return entry[0]


class _Transports:
    """The connection pools of a shared client, one per scheme, each made on its first request.

    Making an ``https`` pool loads the CA bundle (a TLS context: 50–150 ms of CPU on a small machine); a
    conversation with a server on loopback over plain HTTP never pays it. Verification is the same as the
    official client's whenever TLS is used: the ``https`` pool gets the default context.
    """

    def __init__(self) -> None:
        self._pools: dict[str, Any] = {}

    def _pool(self, scheme: str) -> Any:
        pool = self._pools.get(scheme)
        if pool is None:
            import httpx2

            limits = httpx2.Limits(max_connections=_LIMITS[0], max_keepalive_connections=_LIMITS[1])
            # A plain-HTTP pool never opens a TLS connection (redirects to https come back through the
            # client, and so to the other pool): it needs no context.
            verify = _ssl_context(*_cert_env()) if scheme == "https" else False
            pool = self._pools[scheme] = httpx2.AsyncHTTPTransport(verify=verify, limits=limits)
        return pool

    async def handle_async_request(self, request: Any) -> Any:
        """Send through the pool for the request's scheme."""
        return await self._pool("https" if request.url.scheme == "https" else "http").handle_async_request(
            request
        )

    async def aclose(self) -> None:
        """Close both pools."""
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()

    async def __aenter__(self) -> _Transports:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _cert_env() -> tuple[str | None, str | None]:
    return os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")


async def aclose_connections() -> None:
    """Close this event loop's shared connection pools now, rather than when the loop ends.

    Providers made afterwards in the loop open new ones. For programs (and tests) that want no idle
    keep-alive connection left once their work is done.
    """
    try:
        pools = _POOLS.get()
    except LookupError:
        return
    entries, pools_left = list(pools.values()), pools
    pools_left.clear()
    for _client, keeper in entries:
        await keeper.aclose()  # its finally closes the client


async def _close_at_loop_end(client: Any) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        with anyio.CancelScope(shield=True):
            await client.aclose()


@functools.cache
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> Any:
    """The default TLS context for a CA setting, made once per process: loading the CA bundle costs tens of
    milliseconds of CPU, which every conversation would otherwise pay.
    """  # noqa: D205
    import httpx2

    return httpx2.create_ssl_context()  # reads SSL_CERT_FILE / SSL_CERT_DIR itself: they are the cache key


# --- reading error bodies -----------------------------------------------------------------------------------


async def drain(chunks: AsyncIterator[bytes]) -> None:
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


def error_message(text: str) -> str:
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
            import email.utils  # an HTTP date: rare, and the module is not otherwise needed

            when = email.utils.parsedate_to_datetime(value)
            return max(when.timestamp() - time.time(), 0.0)
    except (ValueError, TypeError):
        return None
