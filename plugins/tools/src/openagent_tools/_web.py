"""The web tools: WebFetch (a page as markdown or text, through httpx) and WebSearch (a pluggable backend)."""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import Any, Literal, Protocol, TypedDict, cast
from urllib.parse import urlsplit

import anyio
import httpx

from openagent import Tool, ToolContext, ToolError, tool
from openagent.permissions import PathPolicy

__all__ = ["SearchBackend", "SearchResult", "web_fetch", "web_search"]

MAX_BYTES = 5 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000
TIMEOUT = 30.0
USER_AGENT = "openagent-webfetch/0.1 (+https://pypi.org/project/openagent-tools/)"
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "application/javascript")


def _html_to(html: str, fmt: str) -> str:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg", "iframe"]):
        tag.decompose()
    if fmt == "text":
        lines = (line.strip() for line in soup.get_text("\n").splitlines())
        return "\n".join(line for line in lines if line)
    markdown: str = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return "\n".join(line.rstrip() for line in markdown.splitlines()).strip()


MAX_REDIRECTS = 5
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether an address is on the public internet (IPv4 inside IPv6 forms judged by their IPv4)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo or (None, None))[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return _public(embedded)
    return address.is_global and not address.is_multicast


async def _resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (the system resolver, off the event loop)."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]).partition("%")[0] for info in infos]


async def _address(url: httpx.URL, policy: PathPolicy) -> str:
    """The address to connect to for ``url``, resolved once and checked: a loopback, private or link-local
    one only when a rule names the host. The request then goes to this very address (the name is not
    resolved again), so a DNS answer that changes between the check and the connection cannot redirect it.
    """  # noqa: D205
    host = url.host
    try:
        addresses = await _resolve(host, url.port or (443 if url.scheme == "https" else 80))
    except OSError as exc:
        raise ToolError(f"cannot resolve {host}: {exc}") from None
    if not addresses:
        raise ToolError(f"{host} resolves to no address")
    if not policy.names_host("WebFetch", str(url)):
        for found in addresses:
            if not _public(ipaddress.ip_address(found)):
                raise ToolError(
                    f"{host} resolves to {found}, a loopback, private or link-local address; WebFetch "
                    "reaches those only when a rule names the host: "
                    f"allowed_tools=['WebFetch(domain:{host})']"
                )
    return addresses[0]


async def _send(client: httpx.AsyncClient, url: httpx.URL, policy: PathPolicy) -> httpx.Response:
    """GET ``url`` from the checked address, with the original host in the Host header and for TLS."""
    address = await _address(url, policy)
    headers = {"host": url.netloc.decode("ascii")}
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    request = client.build_request("GET", url.copy_with(host=address), headers=headers, extensions=extensions)
    return await client.send(request, stream=True)


async def _download(url: str, seconds: float, policy: PathPolicy) -> tuple[httpx.Response, bytes, bool, str]:
    """Fetch ``url``, following up to `MAX_REDIRECTS` redirects, each hop checked against the rules."""
    headers = {"user-agent": USER_AGENT, "accept": "text/html,text/plain,application/json;q=0.9,*/*;q=0.5"}
    current = httpx.URL(url)
    async with httpx.AsyncClient(timeout=seconds, headers=headers, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            with anyio.fail_after(seconds):
                response = await _send(client, current, policy)
            if not response.has_redirect_location:
                body, cut = await _body(response)
                return response, body, cut, str(current)
            await response.aclose()
            hop = current.join(response.headers["location"])
            if hop.scheme not in ("http", "https"):
                raise ToolError(f"{current} redirects to {hop}, which is not an http(s) URL")
            if why := policy.redirect_refused("WebFetch", str(hop), url):
                raise ToolError(f"{current} redirects to {hop}, which was not followed: {why}")
            current = hop
    raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times")


async def _body(response: httpx.Response) -> tuple[bytes, bool]:
    """The body, cut at `MAX_BYTES` (the stream is closed early then)."""
    body = bytearray()
    cut = False
    try:
        chunks_gen = cast(AsyncGenerator[bytes, None], response.aiter_bytes())  # it is a generator
        async with aclosing(chunks_gen) as chunks:  # closed even when we stop early
            async for chunk in chunks:
                body += chunk
                if len(body) > MAX_BYTES:
                    del body[MAX_BYTES:]
                    cut = True
                    break
    finally:
        await response.aclose()
    return bytes(body), cut


WEB_FETCH_DESCRIPTION = f"""Fetch a web page (http or https) and return its content.

- HTML is converted to markdown (format "markdown", the default) or plain text (format "text"); "raw"
  returns the body as is. JSON and plain text come back unchanged.
- Bodies over {MAX_BYTES // (1024 * 1024)} MB are cut; the request gives up after {TIMEOUT:g} s.
- Redirects to another host are followed only when the rules allow that host; loopback, private and
  link-local addresses are reached only when a rule names them.
- prompt (optional) says what you are looking for; it is echoed above the content as a reminder."""


@tool(
    "WebFetch", WEB_FETCH_DESCRIPTION, requires_permission=True, max_result_chars=MAX_OUTPUT_CHARS, paths={}
)
async def web_fetch(
    url: str,
    context: ToolContext,
    format: Literal["markdown", "text", "raw"] = "markdown",
    prompt: str | None = None,
) -> str:
    """Fetch a URL.

    Args:
        url: The http(s) URL to fetch.
        context: Injected by the loop.
        format: How to return HTML: markdown, text, or raw.
        prompt: What to look for in the page.
    """
    if not url.startswith(("http://", "https://")):
        raise ToolError(f"url must start with http:// or https://, got {url!r}")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ToolError(f"{url!r} is not a valid URL: {exc}") from None
    if (urlsplit(url).hostname or "") != parsed.host.lower():  # the rules read the URL as urlsplit does
        raise ToolError(f"{url!r} is ambiguous: its host reads differently to different URL parsers")
    try:
        response, body, cut, final = await _download(url, TIMEOUT, PathPolicy.of(context))
    except (httpx.TimeoutException, TimeoutError):
        raise ToolError(f"fetching {url} timed out after {TIMEOUT:g} s") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None
    if response.status_code >= 400:
        snippet = body[:500].decode("utf-8", errors="replace")
        raise ToolError(f"{url} answered HTTP {response.status_code} {response.reason_phrase}: {snippet}")
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and not kind.startswith(_TEXT_TYPES):
        raise ToolError(f"{url} is {kind} ({len(body)} bytes); WebFetch returns text, HTML and JSON only")
    text = body.decode(response.encoding or "utf-8", errors="replace")
    if format != "raw" and (kind in ("text/html", "application/xhtml+xml") or text.lstrip()[:15].lower()
                            .startswith(("<!doctype html", "<html"))):  # fmt: skip
        text = _html_to(text, format)
    head = [f"URL: {final}"] + ([f"Looking for: {prompt}"] if prompt else [])
    head += [f"[body cut at {MAX_BYTES} bytes]"] if cut else []
    return "\n".join([*head, "", text])


class SearchResult(TypedDict, total=False):
    """One hit: ``title`` and ``url`` required, ``snippet`` optional."""

    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    """Anything that answers a query with results: a search API client, a local index."""

    def __call__(
        self, query: str, *, max_results: int, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> Awaitable[Sequence[SearchResult]]: ...


WEB_SEARCH_DESCRIPTION = """Search the web and return result titles, URLs and snippets.

- allowed_domains keeps only results from those domains; blocked_domains drops results from them.
- Use WebFetch on a result's URL to read the page."""


def web_search(
    backend: SearchBackend | Callable[..., Awaitable[Sequence[SearchResult]]] | None = None,
) -> Tool:
    """The WebSearch tool over ``backend``; without one, every call is an error saying how to add one.

    Args:
        backend: ``async (query, *, max_results, allowed_domains, blocked_domains) -> [{"title", "url",
            "snippet"}]``.
    """

    @tool("WebSearch", WEB_SEARCH_DESCRIPTION, requires_permission=True)
    async def search(
        query: str,
        allowed_domains: list[str] | None = None,
        blocked_domains: list[str] | None = None,
        max_results: int = 10,
    ) -> str:
        """Search the web.

        Args:
            query: What to search for.
            allowed_domains: Only return results from these domains.
            blocked_domains: Never return results from these domains.
            max_results: How many results to return (default 10).
        """
        if backend is None:
            raise ToolError(
                "WebSearch has no search backend configured. The application must pass one: "
                "AgentOptions(tools=[openagent_tools.web_search(my_backend)])"
            )
        try:
            results = await backend(
                query,
                max_results=max_results,
                allowed_domains=allowed_domains or [],
                blocked_domains=blocked_domains or [],
            )
        except Exception as exc:
            raise ToolError(f"the search backend failed: {type(exc).__name__}: {exc}") from None
        return _format_results(query, results, allowed_domains or [], blocked_domains or [], max_results)

    return search


def _host_in(url: str, domains: Sequence[str]) -> bool:
    host = (httpx.URL(url).host or "").lower() if url.startswith(("http://", "https://")) else ""
    return any(host == d.lower() or host.endswith("." + d.lower()) for d in domains)


def _format_results(
    query: str, results: Any, allowed: Sequence[str], blocked: Sequence[str], limit: int
) -> str:
    if not isinstance(results, list | tuple):
        raise ToolError(f"the search backend returned {type(results).__name__}, not a list of results")
    lines: list[str] = []
    kept = 0
    for item in results:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            raise ToolError(
                f"the search backend returned a result without a url: {json.dumps(item, default=str)}"
            )
        if (allowed and not _host_in(item["url"], allowed)) or _host_in(item["url"], blocked):
            continue
        kept += 1
        lines.append(f"{kept}. {item.get('title') or item['url']}\n   {item['url']}")
        if snippet := item.get("snippet"):
            lines.append(f"   {snippet}")
        if kept >= limit:
            break
    return f"Results for {query!r}:\n" + "\n".join(lines) if lines else f"No results for {query!r}"
