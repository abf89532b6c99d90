"""WebFetch against a real HTTP server on loopback, and WebSearch over a pluggable backend."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from tool_calls import call, failed, ok

from openagent import AgentOptions, ToolContext
from openagent_tools import SearchResult, web_fetch, web_search
from openagent_tools import _web as web_module

pytestmark = pytest.mark.anyio

PAGE = b"""<!doctype html><html><head><title>T</title><style>p{color:red}</style>
<script>alert('no')</script></head><body><h1>Hello</h1><p>Some <b>bold</b> text and a
<a href="https://example.org/x">link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, str, bytes]] = {
        "/page": (200, "text/html; charset=utf-8", PAGE),
        "/plain": (200, "text/plain", b"just text"),
        "/json": (200, "application/json", b'{"a": 1}'),
        "/missing": (404, "text/plain", b"nothing here"),
        "/image": (200, "image/png", b"\x89PNG\r\n"),
        "/big": (200, "text/plain", b"y" * (6 * 1024 * 1024)),
    }

    def do_GET(self) -> None:
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/plain")
            self.end_headers()
            return
        if self.path == "/slow":
            threading.Event().wait(3)
        status, kind, body = self.routes.get(self.path, (200, "text/plain", b"slow"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def context(project: Any) -> ToolContext:
    """The test server is on loopback, which WebFetch reaches only when a rule names it."""
    options = AgentOptions(cwd=project, allowed_tools=["WebFetch(domain:127.0.0.1)"])
    return ToolContext(tool_use_id="call_1", session_id="s", cwd=str(project), options=options)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


async def test_fetch_html_as_markdown(server: str, context: ToolContext) -> None:
    out = ok(await call(web_fetch, context, url=f"{server}/page", prompt="the heading"))
    assert out.startswith(f"URL: {server}/page\nLooking for: the heading\n")
    assert "# Hello" in out
    assert "**bold**" in out
    assert "[link](https://example.org/x)" in out
    assert "- one" in out
    assert "alert" not in out and "color:red" not in out


async def test_fetch_html_as_text_and_raw(server: str, context: ToolContext) -> None:
    text = ok(await call(web_fetch, context, url=f"{server}/page", format="text"))
    assert "Hello\nSome\nbold\ntext and a\nlink" in text and "<" not in text and "alert" not in text
    raw = ok(await call(web_fetch, context, url=f"{server}/page", format="raw"))
    assert "<h1>Hello</h1>" in raw


async def test_fetch_plain_json_and_redirects(server: str, context: ToolContext) -> None:
    assert ok(await call(web_fetch, context, url=f"{server}/json")).endswith('{"a": 1}')
    redirected = ok(await call(web_fetch, context, url=f"{server}/redirect"))
    assert redirected == f"URL: {server}/plain\n\njust text"


# Stopping early leaves httpx's inner async generators (aiter_raw and below) suspended: closing the outer one
# cannot close them (PEP 533). Trio finalizes them itself when they are collected, and warns; collect here so
# the warning lands in this test.
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
async def test_fetch_caps_the_body(server: str, context: ToolContext) -> None:
    out = ok(await call(web_fetch, context, url=f"{server}/big", format="raw"))
    assert out.splitlines()[:3] == [f"URL: {server}/big", "[body cut at 5242880 bytes]", ""]
    gc.collect()


async def test_fetch_times_out(server: str, context: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_module, "TIMEOUT", 0.2)
    assert "timed out after 0.2 s" in failed(await call(web_fetch, context, url=f"{server}/slow"))


@pytest.mark.parametrize(
    ("path", "message"),
    [("/missing", "HTTP 404 Not Found: nothing here"), ("/image", "image/png")],
    ids=["http-error", "binary-type"],
)
async def test_fetch_error_results(server: str, context: ToolContext, path: str, message: str) -> None:
    assert message in failed(await call(web_fetch, context, url=f"{server}{path}"))


async def test_fetch_refuses_other_schemes_and_dead_hosts(context: ToolContext) -> None:
    assert "http:// or https://" in failed(await call(web_fetch, context, url="file:///etc/passwd"))
    assert "failed: ConnectError" in failed(await call(web_fetch, context, url="http://127.0.0.1:9/"))


async def test_search_without_backend_is_a_clear_error(context: ToolContext) -> None:
    message = failed(await call(web_search(), context, query="anyio"))
    assert "no search backend configured" in message and "web_search(my_backend)" in message


async def test_search_with_backend_filters_domains(context: ToolContext) -> None:
    seen: dict[str, Any] = {}

    async def backend(
        query: str, *, max_results: int, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> list[SearchResult]:
        seen.update(query=query, max_results=max_results, blocked=list(blocked_domains))
        return [
            {"title": "AnyIO", "url": "https://anyio.readthedocs.io/en/stable/", "snippet": "Async compat"},
            {"title": "Spam", "url": "https://spam.example.com/anyio"},
            {"title": "Trio", "url": "https://trio.readthedocs.io/"},
        ]

    tool = web_search(backend)
    out = ok(await call(tool, context, query="anyio", blocked_domains=["example.com"], max_results=5))
    assert seen == {"query": "anyio", "max_results": 5, "blocked": ["example.com"]}
    assert out.splitlines() == [
        "Results for 'anyio':",
        "1. AnyIO",
        "   https://anyio.readthedocs.io/en/stable/",
        "   Async compat",
        "2. Trio",
        "   https://trio.readthedocs.io/",
    ]
    only = ok(await call(tool, context, query="anyio", allowed_domains=["trio.readthedocs.io"]))
    assert "Trio" in only and "AnyIO" not in only


@pytest.mark.parametrize(
    ("answer", "message"),
    [(RuntimeError("quota"), "backend failed: RuntimeError: quota"), ("nope", "not a list"),
     ([{"title": "x"}], "without a url")],
    ids=["raises", "not-a-list", "no-url"],
)  # fmt: skip
async def test_search_backend_errors(context: ToolContext, answer: Any, message: str) -> None:
    async def backend(query: str, **_: Any) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert message in failed(await call(web_search(backend), context, query="q"))
