"""The viewer as an attacker meets it over HTTP: another site's Host, writes, path tricks, the token."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest
from viewer_support import Project

from openagent.plugin import project_key_for


@dataclass
class Served:
    project: Project
    url: str
    session_id: str

    @property
    def base(self) -> str:
        return f"{self.url.rstrip('/')}/s/{project_key_for(self.project.cwd)}/{self.session_id}"


@pytest.fixture(scope="module")
def served(shared: Project) -> Iterator[Served]:
    session_id = shared.agent("demo")
    outside = shared.data / "openagent"  # beside the store's folder, not in it
    (outside / "private.jsonl").write_text(
        '{"type": "user", "message": {"type": "user", "content": "PRIVATE-CONTENT-4821"}}\n'
    )
    yield Served(shared, shared.serve(), session_id)


def test_pages_carry_a_strict_content_security_policy(served: Served) -> None:
    response = httpx.get(served.base)
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"


def test_another_sites_host_name_is_refused(served: Served) -> None:
    """A page elsewhere that rebinds its own name to 127.0.0.1 must not read sessions."""
    port = httpx.URL(served.url).port
    assert httpx.get(served.base, headers={"host": f"attacker.example:{port}"}).status_code == 421
    assert httpx.get(served.base, headers={"host": f"localhost:{port}"}).status_code == 200
    assert httpx.get(served.base, headers={"host": f"[::1]:{port}"}).status_code == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_can_be_changed(served: Served, method: str) -> None:
    response = httpx.request(method, served.base)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    "path",
    [
        "/s/{project}/..%2F..%2Fprivate",
        "/s/{project}/..",
        "/s/{project}/.hidden",
        "/s/no-such-project/{session}",
        "/s/..%2F..%2F..%2Fetc/passwd",
        "/s/{project}/{session}%2F..%2F..%2F..%2Fprivate",
        "/s/{project}/no-such-session",
        "/s/{project}/{session}/full/0/-1/0%2F..",
        "/s/{project}/{session}/full/999/0/0",
        "/s/{project}/{session}/full/2/0/5",
        "/s/{project}/{session}/items?start=x&stop=1",
        "/?project=..",
        "/?project=..%2F..%2Fprivate",
    ],
)
def test_paths_outside_the_known_sessions_are_not_found(served: Served, path: str) -> None:
    url = served.url.rstrip("/") + path.format(
        project=quote(project_key_for(served.project.cwd)), session=served.session_id
    )
    response = httpx.get(url)
    assert response.status_code == 404, response.text[:200]
    assert "PRIVATE-CONTENT-4821" not in response.text


def test_the_full_text_of_a_cut_value_is_plain_text(served: Served) -> None:
    response = httpx.get(f"{served.base}/full/4/0/0")  # the read_file result
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.endswith("line 900\n")


def test_a_range_of_items_comes_as_rendered_html(served: Served) -> None:
    response = httpx.get(f"{served.base}/items?start=0&stop=2")
    assert response.status_code == 200
    assert response.text.startswith('<div class="loaded" data-count="')
    assert response.text.count('<article class="item') == 2


def test_with_a_token_nothing_is_served_without_it(project: Project) -> None:
    project.agent("demo")
    printed = project.serve("--token", "s3cret-token-value")
    url, _, token = printed.partition("?token=")
    assert token == "s3cret-token-value"
    with httpx.Client() as client:
        for path in ("/", "/static/viewer.js", "/pygments.css"):
            assert client.get(url + path.lstrip("/")).status_code == 401
        assert client.get(url, headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.get(url, headers={"authorization": "Bearer s3cret-token-value"}).status_code == 200
        first = client.get(url + "?token=s3cret-token-value&q=x")
        assert first.status_code == 303 and first.headers["location"] == "/?q=x"
        cookie = first.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert client.get(url).status_code == 200  # the cookie now stands for the token


def test_listening_beyond_loopback_requires_a_token(project: Project) -> None:
    url = project.serve("--host", "0.0.0.0")
    assert "?token=" in url
    port = httpx.URL(url).port
    assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 401
    token = url.split("?token=", 1)[1]
    assert (
        httpx.get(f"http://127.0.0.1:{port}/", headers={"authorization": f"Bearer {token}"}).status_code
        == 200
    )
