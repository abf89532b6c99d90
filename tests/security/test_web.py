"""WebFetch against a hostile web page and a hostile model: SSRF to loopback and private addresses, redirects
to hosts no rule allows, and DNS answers that change between the check and the connection.

Every server here is on loopback (the only addresses tests may reach); private, link-local and other
addresses are judged by the address check alone and are never connected to.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest
from attack import attack, results

from openagent_tools import _web, web_fetch

pytestmark = pytest.mark.anyio


class Page(ThreadingHTTPServer):
    """A loopback web server that records the paths asked of it; ``/to?URL`` redirects to URL, ``/hop`` to
    ``/admin``."""

    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.seen: list[str] = []
        super().__init__((host, port), _Handler)
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{self.server_address[0]}:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Page

    def do_GET(self) -> None:
        self.server.seen.append(self.path)
        target = self.path[4:] if self.path.startswith("/to?") else "/admin" if self.path == "/hop" else None
        if target is not None:
            self.send_response(302)
            self.send_header("Location", target)
            self.end_headers()
            return
        body = f"page {self.path} host {self.headers.get('host')}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def page() -> Iterator[Page]:
    server = Page()
    yield server
    server.shutdown()
    server.server_close()


async def fetch(url: str, **options: Any) -> Any:
    """One WebFetch by a hostile model (in bypassPermissions unless said otherwise: the address checks hold
    in every mode)."""
    options.setdefault("permission_mode", "bypassPermissions")
    messages = await attack([("WebFetch", {"url": url})], tools=[web_fetch], **options)
    (result,) = results(messages)
    return result


LOOPBACK_FORMS = [
    "http://127.0.0.1:{port}/x",
    "http://localhost:{port}/x",
    "http://127.1:{port}/x",
    "http://2130706433:{port}/x",
    "http://0x7f000001:{port}/x",
    "http://[::ffff:127.0.0.1]:{port}/x",
    "http://0.0.0.0:{port}/x",
    "http://user@127.0.0.1:{port}/x",
]


@pytest.mark.parametrize("form", LOOPBACK_FORMS)
async def test_loopback_in_any_spelling_is_refused_without_a_rule_naming_it(page: Page, form: str) -> None:
    result = await fetch(form.format(port=page.server_address[1]))
    assert result.is_error and "loopback, private or link-local" in str(result.content)
    assert page.seen == []


async def test_control_a_rule_naming_the_host_reaches_it(page: Page) -> None:
    result = await fetch(f"{page.url}/ok", allowed_tools=["WebFetch(domain:127.0.0.1)"])
    assert not result.is_error and "page /ok" in str(result.content) and page.seen == ["/ok"]


@pytest.mark.parametrize(
    "target",
    [
        "http://localhost:{port}/inner",
        "http://[::1]:{port}/inner",
        "http://169.254.169.254/latest/meta-data/",
    ],
    ids=["localhost", "ipv6-loopback", "metadata"],
)
async def test_a_redirect_to_a_host_no_rule_allows_is_not_followed(page: Page, target: str) -> None:
    url = f"{page.url}/to?{target.format(port=page.server_address[1])}"
    result = await fetch(url, allowed_tools=["WebFetch(domain:127.0.0.1)"], permission_mode="default")
    assert result.is_error and "was not followed" in str(result.content)
    assert page.seen == [f"/to?{target.format(port=page.server_address[1])}"]


async def test_a_redirect_is_checked_against_deny_rules_even_on_an_allowed_host(page: Page) -> None:
    rules = {"allowed_tools": ["WebFetch(domain:127.0.0.1)"], "disallowed_tools": ["WebFetch(*/admin*)"]}
    result = await fetch(f"{page.url}/hop", **rules)  # redirects to /admin
    assert result.is_error and "WebFetch(*/admin*)" in str(result.content) and page.seen == ["/hop"]
    result = await fetch(f"{page.url}/to?/public", **rules)
    assert not result.is_error and page.seen[-1] == "/public"  # control: same host, allowed path
    result = await fetch(f"{page.url}/to?file:///etc/passwd", **rules)
    assert result.is_error and "not an http(s) URL" in str(result.content)


async def test_a_redirect_to_loopback_from_an_allowed_public_name_is_refused(
    page: Page, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page lives at a public-looking name; its redirect to loopback is an SSRF attempt."""
    resolved: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        resolved.append(host)
        return ["127.0.0.1"]

    monkeypatch.setattr(_web, "_resolve", resolve)
    url = f"http://docs.example.com:{page.server_address[1]}/to?http://127.0.0.1:{page.server_address[1]}/x"
    result = await fetch(url, allowed_tools=["WebFetch(domain:example.com)"], permission_mode="default")
    assert result.is_error and "was not followed" in str(result.content)
    assert page.seen == [url.split(str(page.server_address[1]), 1)[1]] and resolved == ["docs.example.com"]


async def test_dns_rebinding_cannot_swap_the_checked_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """The name resolves to one address when checked and to another afterwards: the request goes to the
    first (both are loopback servers here; a rule names the host, so only pinning is under test)."""
    first = Page("127.0.0.1")
    second = Page("127.0.0.2", first.server_address[1])
    answers = iter([["127.0.0.1"], ["127.0.0.2"], ["127.0.0.2"]])

    async def resolve(host: str, port: int) -> list[str]:
        return next(answers)

    monkeypatch.setattr(_web, "_resolve", resolve)
    try:
        result = await fetch(
            f"http://rebind.test:{first.server_address[1]}/p", allowed_tools=["WebFetch(domain:rebind.test)"]
        )
        assert not result.is_error and "host rebind.test:" in str(result.content)  # the name, not the address
        assert first.seen == ["/p"] and second.seen == []
    finally:
        for server in (first, second):
            server.shutdown()
            server.server_close()


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("10.0.0.1", False), ("172.16.5.4", False), ("192.168.1.1", False), ("169.254.169.254", False),
        ("100.64.0.1", False), ("127.0.0.53", False), ("0.0.0.0", False), ("224.0.0.1", False),
        ("::1", False), ("fe80::1", False), ("fc00::1", False), ("::ffff:10.0.0.1", False),
        ("64:ff9b::7f00:1", False), ("2002:7f00:1::", False),
        ("93.184.216.34", True), ("2606:2800:220:1:248:1893:25c8:1946", True), ("64:ff9b::5db8:d822", True),
    ],
)  # fmt: skip
def test_the_address_check(address: str, public: bool) -> None:
    assert _web._public(ipaddress.ip_address(address)) is public


async def test_an_ambiguous_url_is_refused(page: Page) -> None:
    url = f"http://example.com\\@127.0.0.1:{page.server_address[1]}/x"
    with anyio.fail_after(10):
        result = await fetch(url, allowed_tools=["WebFetch(domain:example.com)"], permission_mode="default")
    assert result.is_error and page.seen == []
