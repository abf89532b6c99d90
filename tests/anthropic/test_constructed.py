"""What only the real Anthropic API shows: thinking signatures, redacted thinking, server tool blocks,
cache tokens, 529 overloaded, 429 with retry-after, an error event mid-stream.

The cassettes (cassettes/anthropic/test_constructed/) are constructed from Anthropic's documented stream
examples by cassette_builder.py and say so in their metadata; ``ANTHROPIC_API_KEY=… nox -s record``
re-records them. Each test replays the turn the way the loop does (events → blocks → history), so the
second request only matches its cassette when signatures and pass-through blocks were sent back intact.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from anthropic_streams import assemble

from openagent._contract import ADD_TOOL
from openagent._prices import cost_of
from openagent.errors import RateLimitError, ServerError, StreamError
from openagent.models import ModelRequest, Stop, TextDelta
from openagent.types import (
    AssistantMessage,
    RawBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from openagent_anthropic import MessagesProvider
from openagent_anthropic._messages import parse_stream

History = list[UserMessage | AssistantMessage]
ROOT = Path(__file__).resolve().parents[2]
MODEL = "claude-sonnet-4-6"
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
WEB_SEARCH = {"tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}]}
SYSTEM = "You are a meticulous assistant who answers in one short sentence. " * 40
REDACTED_TRIGGER = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253"


def requests() -> dict[str, list[ModelRequest]]:
    """Every request the tests below send, in order (cassette_builder.py builds the cassettes from these)."""
    add: History = [UserMessage(content="What is 2 + 3? Use the add tool.")]
    redacted: History = [UserMessage(content=REDACTED_TRIGGER)]
    weather: History = [UserMessage(content="What is the weather in Paris today?")]
    cached = ModelRequest(MODEL, [UserMessage(content="Say hi.")], system=SYSTEM, max_tokens=256)
    plain = ModelRequest(MODEL, [UserMessage(content="Say hi.")], max_tokens=256)
    return {
        "test_thinking_signature_round_trip": [
            ModelRequest(MODEL, add, tools=[ADD_TOOL], max_tokens=2048, extra_body=THINKING),
            ModelRequest(
                MODEL, add + THINKING_HISTORY, tools=[ADD_TOOL], max_tokens=2048, extra_body=THINKING
            ),
        ],
        # The second requests of these two carry the first turn as assembled (see follow_up).
        "test_redacted_thinking_survives_replay": [
            ModelRequest(MODEL, redacted, max_tokens=2048, extra_body=THINKING)
        ],
        "test_web_search_blocks_survive_replay": [
            ModelRequest(MODEL, weather, max_tokens=1024, extra_body=WEB_SEARCH)
        ],
        "test_prompt_cache_tokens_and_cost": [cached, cached],
        "test_overloaded_529": [plain],
        "test_rate_limited_429_with_retry_after": [plain],
        "test_overloaded_error_event_mid_stream": [plain],
    }


# The histories the second requests carry: what the first turns must assemble to (checked in the tests).
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
THINKING_HISTORY: list[Any] = [
    AssistantMessage(
        model=MODEL,
        content=[
            ThinkingBlock(thinking="The user wants 2 + 3. I should call the add tool.", signature=SIGNATURE),
            ToolUseBlock(id="toolu_01A09q90qw90lq917835lq9", name="add", input={"a": 2, "b": 3}),
        ],
    ),
    UserMessage(content=[ToolResultBlock(tool_use_id="toolu_01A09q90qw90lq917835lq9", content="5")]),
]
REDACTED_DATA = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8="


def follow_up(first: ModelRequest, message: AssistantMessage, text: str) -> ModelRequest:
    """The next request after ``first`` was answered with ``message``."""
    messages = [*first.messages, message, UserMessage(content=text)]
    return ModelRequest(MODEL, messages, max_tokens=first.max_tokens, extra_body=first.extra_body)


async def turn(provider: MessagesProvider, request: ModelRequest) -> tuple[list[Any], AssistantMessage]:
    events = [event async for event in provider.stream(request)]
    return events, AssistantMessage(model=MODEL, content=assemble(events))


@pytest.fixture
async def provider(anyio_backend: str, anthropic_key: str) -> AsyncIterator[MessagesProvider]:
    provider = MessagesProvider(MODEL, api_key=anthropic_key)
    yield provider
    await provider.aclose()


def constructed(test: Any) -> Any:
    """A test that plays its cassette (all of it) under asyncio and trio."""
    return pytest.mark.vcr(pytest.mark.usefixtures("played")(pytest.mark.anyio(test)))


@constructed
async def test_thinking_signature_round_trip(provider: MessagesProvider) -> None:
    first, second = requests()["test_thinking_signature_round_trip"]
    events, message = await turn(provider, first)
    assert message == THINKING_HISTORY[0]
    assert events[-1] == Stop("tool_use", "tool_use")
    events, message = await turn(provider, second)  # matches only if the signature went back verbatim
    assert "5" in "".join(e.text for e in events if isinstance(e, TextDelta))


@constructed
async def test_redacted_thinking_survives_replay(provider: MessagesProvider) -> None:
    (first,) = requests()["test_redacted_thinking_survives_replay"]
    _, message = await turn(provider, first)
    assert message.content[:2] == [
        ThinkingBlock(thinking="This request contains a test string.", signature="EuYBCkQYAiJAg3ohZnSjdkm6"),
        RawBlock(provider="anthropic", data={"type": "redacted_thinking", "data": REDACTED_DATA}),
    ]
    events, _ = await turn(
        provider, follow_up(first, message, "Thanks.")
    )  # matches only if the redacted block went back in place
    assert events[-1] == Stop("end_turn", "end_turn")


@constructed
async def test_web_search_blocks_survive_replay(provider: MessagesProvider) -> None:
    (first,) = requests()["test_web_search_blocks_survive_replay"]
    events, message = await turn(provider, first)
    kinds = [getattr(block, "data", {}).get("type", block.type) for block in message.content]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]  # in arrival order
    assert message.content[1] == RawBlock(
        provider="anthropic",
        data={
            "type": "server_tool_use",
            "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
            "name": "web_search",
            "input": {"query": "weather Paris today"},
        },
    )
    assert not any(type(e).__name__ == "ToolCallStart" for e in events), "a server tool is not ours to run"
    events, _ = await turn(provider, follow_up(first, message, "Thanks!"))
    assert events[-1] == Stop("end_turn", "end_turn")


@constructed
async def test_prompt_cache_tokens_and_cost(provider: MessagesProvider) -> None:
    first, second = requests()["test_prompt_cache_tokens_and_cost"]
    written = [e for e in (await turn(provider, first))[0] if isinstance(e, Usage)][-1]
    read = [e for e in (await turn(provider, second))[0] if isinstance(e, Usage)][-1]
    assert written.cache_creation_input_tokens > 0 and written.cache_read_input_tokens == 0
    assert read.cache_read_input_tokens == written.cache_creation_input_tokens
    cost_read, cost_written = (cost_of(provider, provider.model, u) for u in (read, written))
    assert cost_read is not None and cost_written is not None
    assert cost_read < cost_written


@constructed
async def test_overloaded_529(provider: MessagesProvider) -> None:
    (request,) = requests()["test_overloaded_529"]
    with pytest.raises(ServerError, match="Overloaded") as caught:
        await turn(provider, request)
    assert caught.value.status_code == 529 and caught.value.is_retryable


@constructed
async def test_rate_limited_429_with_retry_after(provider: MessagesProvider) -> None:
    (request,) = requests()["test_rate_limited_429_with_retry_after"]
    with pytest.raises(RateLimitError) as caught:
        await turn(provider, request)
    assert caught.value.retry_after == 12.0 and caught.value.is_retryable


@constructed
async def test_overloaded_error_event_mid_stream(provider: MessagesProvider) -> None:
    (request,) = requests()["test_overloaded_error_event_mid_stream"]
    seen: list[Any] = []
    with pytest.raises(StreamError, match="overloaded_error"):
        async for event in provider.stream(request):
            seen.append(event)
    assert TextDelta("Hel") in seen


# --- every recorded or constructed stream, re-chunked -------------------------------------------------------

CASSETTES = sorted((ROOT / "cassettes" / "anthropic").rglob("*.yaml"))
STREAMS = [
    pytest.param(i["response"]["body"]["string"].encode(), id=f"{path.parent.name}/{path.stem}#{n}")
    for path in CASSETTES
    for n, i in enumerate(yaml.safe_load(path.read_text())["interactions"])
    if i["response"]["status"]["code"] == 200
]


async def _parse(chunks: list[bytes]) -> list[Any]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    try:
        return [event async for event in parse_stream(source())]
    except StreamError as exc:
        return [exc.message]


@pytest.mark.parametrize("size", [1, 5, 16])
@pytest.mark.parametrize("body", STREAMS)
def test_cassette_streams_at_small_byte_splits(
    body: bytes, size: int, request: pytest.FixtureRequest
) -> None:
    whole = anyio.run(_parse, [body])
    assert anyio.run(_parse, [body[i : i + size] for i in range(0, len(body), size)]) == whole


def test_cassettes_exist() -> None:
    assert STREAMS, f"no cassettes under {Path(ROOT / 'cassettes' / 'anthropic')}"
