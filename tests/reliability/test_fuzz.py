"""The providers' whole byte path (HTTP body → SSE decoder → wire parser → events), fuzzed.

Streams the scripted server would send for random turns, cut at random byte boundaries, parse to the same
text, thinking, tool calls and stop reason as the turn holds; random bytes (alone or after a valid prefix)
end the stream or raise a `ProviderError`, never anything else.

Each example runs the whole client stack (the vendor SDK, its HTTP client, the provider), about 50 ms, so
these take a twentieth of ``OPENAGENT_FUZZ_EXAMPLES`` (``nox -s fuzz``: 100,000 → 5,000 each, about 40
minutes); the byte-level parser properties in tests/openai and tests/anthropic take the full count.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scripted_server import ToolCall, Turn, render

from openagent._errors import ProviderError
from openagent._models import ModelRequest, Stop, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from openagent._types import UserMessage

_ASKED = os.environ.get("OPENAGENT_FUZZ_EXAMPLES")
EXAMPLES = max(25, int(_ASKED) // 20) if _ASKED else 25
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
pytestmark = [pytest.mark.anyio, pytest.mark.fuzz]
REQUEST = ModelRequest(model="m", messages=[UserMessage(content="hi")])


class Chunks:
    """An async byte stream over fixed chunks (a class, not an async generator: nothing to finalise)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = iter(chunks)

    def __aiter__(self) -> Chunks:
        return self

    async def __anext__(self) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            raise StopAsyncIteration from None


@dataclass
class Body:
    """What the mock transport answers with next."""

    chunks: list[bytes] = field(default_factory=list)


def make_provider(wire: str, body: Body) -> Any:
    httpx2 = pytest.importorskip("httpx2")

    def answer(request: Any) -> Any:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=Chunks(body.chunks)
        )

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    if wire == "openai":
        plugin = pytest.importorskip("openagent_openai")
        return plugin.ChatCompletionsProvider(
            "m",
            profile=plugin.PROFILES["openai-compatible"],
            base_url="http://fuzz.test/v1",
            api_key="k",
            http_client=client,
        )
    plugin = pytest.importorskip("openagent_anthropic")
    return plugin.MessagesProvider("m", base_url="http://fuzz.test", api_key="k", http_client=client)


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def body() -> Body:
    return Body()


@pytest.fixture
def provider(wire: str, body: Body) -> Iterator[Any]:
    yield make_provider(wire, body)


async def summary(provider: Any) -> dict[str, Any]:
    """Events folded into what a turn means: text, thinking, calls by index, stop reason."""
    text, thinking, calls, stop = [], [], {}, None
    async for event in provider.stream(REQUEST):
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ThinkingDelta):
            thinking.append(event.thinking)
        elif isinstance(event, ToolCallStart):
            calls[event.index] = [event.name, []]
        elif isinstance(event, ToolCallDelta):
            calls[event.index][1].append(event.arguments)
        elif isinstance(event, Stop):
            stop = event.reason
    return {
        "text": "".join(text),
        "thinking": "".join(thinking),
        "calls": [(name, json.loads("".join(args))) for _, (name, args) in sorted(calls.items())],
        "stop": stop,
    }


def cut(data: bytes, points: list[int]) -> list[bytes]:
    marks = sorted({p % (len(data) + 1) for p in points})
    return [data[a:b] for a, b in itertools.pairwise([0, *marks, len(data)])]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=10)
JSON_VALUES = st.one_of(st.integers(-(10**6), 10**6), TEXT, st.booleans(), st.none())


def _reads_cumulative(pieces: list[str]) -> bool:
    return len(pieces) >= 3 and all(
        len(b) > len(a) and b.startswith(a) for a, b in itertools.pairwise(pieces[:3])
    )


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    calls = [
        ToolCall(
            draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True)),
            draw(st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), JSON_VALUES, max_size=4)),
            id=f"call_{i}",
            fragments=draw(st.integers(1, 5)),
        )
        for i in range(draw(st.integers(0, 2)))
    ]
    return Turn(
        # Three first pieces that each extend the one before read as cumulative text (test_quirks.py):
        # such a delta stream is ambiguous by nature, so the generator leaves it out.
        text=draw(st.lists(TEXT, max_size=6).filter(lambda t: not _reads_cumulative(t))),
        thinking=draw(st.lists(TEXT, max_size=3)),
        tool_calls=calls,
        signature=draw(st.sampled_from(["", "sig=="])),
        usage=draw(st.sampled_from([None, (10, 0)])),
    )


@SETTINGS
@given(turn=turns(), points=st.lists(st.integers(0, 10**6), max_size=12))
async def test_any_rechunking_parses_to_the_scripted_turn(
    provider: Any, body: Body, wire: str, turn: Turn, points: list[int], anyio_backend: str
) -> None:
    data = render(turn, wire)  # type: ignore[arg-type]
    body.chunks = cut(data, points)
    got = await summary(provider)
    assert got == {
        "text": "".join(turn.text),
        "thinking": "".join(turn.thinking),
        "calls": [(c.name, c.arguments) for c in turn.tool_calls],
        "stop": turn.stop_reason,
    }


@SETTINGS
@given(
    turn=turns(),
    keep=st.integers(0, 10**6),
    noise=st.binary(max_size=300),
    points=st.lists(st.integers(0, 10**6), max_size=6),
)
async def test_random_bytes_end_the_stream_or_raise_a_provider_error(
    provider: Any,
    body: Body,
    wire: str,
    turn: Turn,
    keep: int,
    noise: bytes,
    points: list[int],
    anyio_backend: str,
) -> None:
    valid = render(turn, wire)  # type: ignore[arg-type]
    body.chunks = cut(valid[: keep % (len(valid) + 1)] + noise, points)
    try:
        async for _ in provider.stream(REQUEST):
            pass
    except ProviderError:
        pass
