"""The provider contract suite: one set of pytest tests every provider plugin runs over its own endpoint.

Subclass `ProviderContract` in a test module, supply the ``provider`` and ``failing_provider`` fixtures
(built against cassettes or a live server), and set the capability flags; the tests send the same requests
to every provider and assert on the normalised `ModelEvent`s only (see tests/openai/test_contract.py). A
capability the endpoint lacks is reported as a skip, never as a pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from . import models as m
from ._turn import TurnBuilder
from .errors import ProviderError
from .models import ModelEvent, ModelRequest, Provider, RawContent, Stop, TextDelta, ThinkingDelta, ToolSpec
from .types import AssistantMessage, ContentBlock, ToolResultBlock, ToolUseBlock, Usage, UserMessage

__all__ = ["ADD_TOOL", "PROMPTS", "WEATHER_TOOL", "ProviderContract", "Turn", "collect"]

PROMPTS = {
    "text": "Reply with the single word: hello",
    "tool": "What is 1234 + 4321? Use the add tool.",
    "parallel": "Get the weather in Paris and in London. Call get_weather once for each city, both now.",
    "reasoning": "Is 91 a prime number? Answer yes or no.",
    "usage": "Count from 1 to 5.",
}
"""The prompt of each contract test (a recorded cassette matches on the exact request)."""

_INTS = {"a": {"type": "integer"}, "b": {"type": "integer"}}
ADD_TOOL = ToolSpec("add", "Add two integers and return their sum.", {"type": "object", "properties": _INTS})
_CITY = {"city": {"type": "string"}}
WEATHER_TOOL = ToolSpec(
    "get_weather", "Get the current weather in one city.", {"type": "object", "properties": _CITY}
)


@dataclass
class Turn:
    """One model turn rebuilt from its events, with the checks every stream must pass."""

    events: list[ModelEvent] = field(default_factory=list)
    text: str = ""
    thinking: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    """``index → {"id", "name", "arguments"}`` (arguments as the concatenated JSON text)."""
    usage: Usage | None = None
    stop: Stop | None = None
    raw: list[RawContent] = field(default_factory=list)
    """Provider-specific blocks kept verbatim (reasoning items, server tool calls …)."""
    builder: TurnBuilder = field(default_factory=lambda: TurnBuilder(partial=False), repr=False)

    def add(self, event: ModelEvent) -> None:
        """Fold one event in, asserting the ordering rules of the `Provider` protocol."""
        assert self.stop is None, f"event {event!r} after Stop"
        self.events.append(event)
        if isinstance(event, TextDelta):
            self.text += event.text
        elif isinstance(event, ThinkingDelta):
            self.thinking += event.thinking
        elif isinstance(event, m.ToolCallStart):
            assert event.id, "ToolCallStart with an empty id"
            assert event.index not in self.calls, f"second ToolCallStart for index {event.index}"
            assert event.id not in {c["id"] for c in self.calls.values()}, f"duplicate call id {event.id!r}"
            self.calls[event.index] = {"id": event.id, "name": event.name, "arguments": ""}
        elif isinstance(event, m.ToolCallDelta):
            assert event.index in self.calls, f"ToolCallDelta for {event.index} before its ToolCallStart"
            self.calls[event.index]["arguments"] += event.arguments
        elif isinstance(event, Usage):
            self.usage = event if self.usage is None else self.usage.merge(event)
        elif isinstance(event, Stop):
            self.stop = event
        elif isinstance(event, RawContent):
            self.raw.append(event)
        else:  # pragma: no cover - a provider yielding a foreign object is the bug this catches
            raise AssertionError(f"not a ModelEvent: {event!r}")
        self.builder.feed(event)

    def content(self) -> list[ContentBlock]:
        """The turn as the loop keeps it (its blocks in arrival order, raw ones included): what a second
        turn sends back.
        """  # noqa: D205
        return self.builder.content()

    def arguments(self, index: int) -> dict[str, Any]:
        """The parsed arguments of the call at ``index`` (must be a JSON object)."""
        value = json.loads(self.calls[index]["arguments"] or "{}")
        assert isinstance(value, dict), f"arguments are not a JSON object: {value!r}"
        return value

    def tool_uses(self) -> list[ToolUseBlock]:
        """The calls as blocks, in index order, for replaying the turn as history."""
        calls = sorted(self.calls.items())
        return [ToolUseBlock(id=c["id"], name=c["name"], input=self.arguments(i)) for i, c in calls]


async def collect(provider: Provider, request: ModelRequest) -> Turn:
    """Drain ``provider.stream(request)`` into a `Turn`; the stream must end with exactly one `Stop`."""
    turn = Turn()
    async for event in provider.stream(request):
        turn.add(event)
    assert turn.stop is not None, "stream ended without a Stop event"
    return turn


class ProviderContract:
    """The shared provider tests. Subclass it and supply ``provider`` and ``failing_provider`` fixtures."""

    model: ClassVar[str] = "test-model"
    supports_parallel_tool_calls: ClassVar[bool] = True
    supports_reasoning: ClassVar[bool] = False  # then a `ThinkingDelta` must come before the answer
    reports_usage: ClassVar[bool] = True
    expected_error: ClassVar[type[ProviderError]] = ProviderError  # what ``failing_provider`` raises
    max_tokens: ClassVar[int | None] = 512

    @pytest.fixture(params=["asyncio", "trio"])
    def anyio_backend(self, request: pytest.FixtureRequest) -> str:
        """Every contract test runs under asyncio and trio."""
        return str(request.param)

    @pytest.fixture
    def provider(self) -> Iterator[Provider]:
        """The provider under test (override)."""
        raise NotImplementedError("define a `provider` fixture in your ProviderContract subclass")

    @pytest.fixture
    def failing_provider(self) -> Iterator[Provider]:
        """A provider whose requests the endpoint refuses, e.g. with a wrong key (override)."""
        raise NotImplementedError("define a `failing_provider` fixture")

    def request(
        self, prompt: str, *, tools: Sequence[ToolSpec] = (), history: Sequence[Any] = ()
    ) -> ModelRequest:
        """The request a test sends; override to add provider-specific settings (``extra_body``)."""
        messages: list[UserMessage | AssistantMessage] = [UserMessage(content=prompt), *history]
        return ModelRequest(self.model, messages, tools=[*tools], max_tokens=self.max_tokens, temperature=0)

    @pytest.mark.anyio
    async def test_text(self, provider: Provider) -> None:
        """A plain question gets incremental text and an ``end_turn`` stop."""
        turn = await collect(provider, self.request(PROMPTS["text"]))
        assert "hello" in turn.text.lower()
        assert all(e.text for e in turn.events if isinstance(e, TextDelta)), "an empty TextDelta"
        assert turn.stop is not None and turn.stop.reason == "end_turn"
        assert not turn.calls

    @pytest.mark.anyio
    async def test_tool_round_trip(self, provider: Provider) -> None:
        """The model calls a tool, gets the result back as history, and answers with it."""
        prompt = PROMPTS["tool"]
        first = await collect(provider, self.request(prompt, tools=[ADD_TOOL]))
        assert first.stop is not None and first.stop.reason == "tool_use"
        assert [c["name"] for c in first.calls.values()] == ["add"]
        index = next(iter(first.calls))
        assert first.arguments(index) == {"a": 1234, "b": 4321}
        call = first.tool_uses()[0]
        history: list[UserMessage | AssistantMessage] = [  # the whole turn goes back: reasoning included
            AssistantMessage(content=first.content(), model=self.model),
            UserMessage(content=[ToolResultBlock(tool_use_id=call.id, content="5555")]),
        ]
        second = await collect(provider, self.request(prompt, tools=[ADD_TOOL], history=history))
        assert second.stop is not None and second.stop.reason == "end_turn"
        assert "5555" in second.text.replace(",", "")

    @pytest.mark.anyio
    async def test_parallel_tools(self, provider: Provider) -> None:
        """Two independent calls in one turn come as two calls with distinct indexes and ids."""
        if not self.supports_parallel_tool_calls:
            pytest.skip("the endpoint does not make parallel tool calls")
        prompt = PROMPTS["parallel"]
        turn = await collect(provider, self.request(prompt, tools=[WEATHER_TOOL]))
        assert turn.stop is not None and turn.stop.reason == "tool_use"
        cities = sorted(turn.arguments(i)["city"] for i in turn.calls)
        assert cities == ["London", "Paris"]
        assert {c["name"] for c in turn.calls.values()} == {"get_weather"}

    @pytest.mark.anyio
    async def test_reasoning(self, provider: Provider) -> None:
        """A reasoning model streams its thinking as `ThinkingDelta`s before the answer."""
        if not self.supports_reasoning:
            pytest.skip("the model does not stream reasoning")
        turn = await collect(provider, self.request(PROMPTS["reasoning"]))
        assert turn.thinking.strip()
        first_text = next(i for i, e in enumerate(turn.events) if isinstance(e, TextDelta))
        assert any(isinstance(e, ThinkingDelta) for e in turn.events[:first_text])
        assert turn.text.strip()

    @pytest.mark.anyio
    async def test_usage(self, provider: Provider) -> None:
        """Token usage is reported, prompt and output both counted."""
        if not self.reports_usage:
            pytest.skip("the endpoint does not report usage")
        turn = await collect(provider, self.request(PROMPTS["usage"]))
        assert turn.usage is not None
        assert turn.usage.input_tokens > 0 and turn.usage.output_tokens > 0

    @pytest.mark.anyio
    async def test_errors(self, failing_provider: Provider) -> None:
        """A refused request raises the typed error, with status, provider name and the server's message."""
        with pytest.raises(self.expected_error) as caught:
            await collect(failing_provider, self.request(PROMPTS["text"]))
        assert isinstance(caught.value, ProviderError)
        assert caught.value.status_code is not None and caught.value.status_code >= 400
        assert caught.value.provider and caught.value.message
