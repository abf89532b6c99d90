"""Cassette settings for the openai plugin's tests, and a replay helper over an httpx mock transport."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from openagent_openai import PROFILES, ChatCompletionsProvider, OpenAIProfile

ROOT = Path(__file__).resolve().parents[2]
SECRET_HEADERS = [
    "authorization",
    "x-api-key",
    "cookie",
    "set-cookie",
    "openai-organization",
    "openai-project",
]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: a hypothesis property test (OPENAGENT_FUZZ_EXAMPLES examples)")


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": SECRET_HEADERS,
        "match_on": ["method", "path", "query", "body"],  # any base URL replays
        "allow_playback_repeats": False,
        "decode_compressed_response": True,
    }


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(ROOT / "cassettes" / "openai" / request.module.__name__.rpartition(".")[2])


@pytest.fixture
def default_cassette_name(request: pytest.FixtureRequest) -> str:
    """One cassette per test, shared by the asyncio and trio runs: ``<test_module>/<test_name>.yaml``."""
    return str(request.node.originalname)


@pytest.fixture(autouse=True)
def _cassette_fully_played(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test fails when its cassette has interactions it never replayed."""
    if request.node.get_closest_marker("vcr") is None:
        yield
        return
    cassette = request.getfixturevalue("vcr")
    yield
    if cassette is not None and request.getfixturevalue("record_mode") == "none":
        unplayed = [r.uri for i, r in enumerate(cassette.requests) if not cassette.play_counts[i]]
        assert cassette.all_played, f"cassette {cassette._path} has unplayed interactions: {unplayed}"


# --- replay over a mock transport --------------------------------------------------------------------------


def sse(*chunks: dict[str, Any] | str, done: bool = True) -> bytes:
    """An event-stream body: each chunk a ``data:`` event (dicts as JSON), then ``[DONE]``."""
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return "".join([*lines, "data: [DONE]\n\n" if done else ""]).encode()


def natural(body: bytes) -> list[bytes]:
    """The chunking a server produces: one network chunk per event."""
    parts = body.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def fixed(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


SPLITS: list[Any] = ["natural", 1, 3, 17]
"""How every stream is replayed: at its natural chunking and at small fixed byte splits."""


def chunked(body: bytes, split: Any) -> list[bytes]:
    return natural(body) if split == "natural" else fixed(body, split)


class Replay:
    """Builds providers whose HTTP exchanges are answered by a handler, recording the requests sent."""

    def __init__(self) -> None:
        self.requests: list[httpx2.Request] = []

    def provider(
        self,
        body: bytes = b"",
        *,
        split: Any = "natural",
        status: int = 200,
        headers: dict[str, str] | None = None,
        profile: OpenAIProfile | str = "llamacpp",
        handler: Callable[[httpx2.Request], httpx2.Response] | None = None,
    ) -> ChatCompletionsProvider:
        headers = {"content-type": "text/event-stream", **(headers or {})}

        async def stream() -> AsyncIterator[bytes]:
            for part in chunked(body, split):
                yield part

        def answer(request: httpx2.Request) -> httpx2.Response:
            self.requests.append(request)
            if handler is not None:
                return handler(request)
            return httpx2.Response(status, headers=headers, content=stream())

        client = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
        profile = PROFILES[profile] if isinstance(profile, str) else profile
        return ChatCompletionsProvider("test-model", profile=profile, http_client=client)

    def sent(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)


@pytest.fixture
def replay() -> Replay:
    return Replay()


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated tool-call ids become ``gen_0``, ``gen_1`` … so expected events can name them."""
    import itertools

    from openagent_openai import _chat

    counter = itertools.count()
    monkeypatch.setattr(_chat, "new_call_id", lambda: f"gen_{next(counter)}")
