"""Test support: `ScriptedModel`, a provider that replays scripted turns, and the provider contract suite.

Use `ScriptedModel` to test your own agents without a network::

    from openagent import AgentOptions, run
    from openagent.testing import ScriptedModel, text, tool_call

    model = ScriptedModel([
        [tool_call("add", {"a": 2, "b": 3})],   # turn 1: the model calls a tool
        "2 + 3 = 5",                           # turn 2: it answers
    ])
    result = await run("What is 2 + 3?", AgentOptions(model=model, tools=[add]))
    assert result.text == "2 + 3 = 5"
    assert model.requests[1].messages[-1].content[0].content == "5"   # what the tool returned

``model="test:echo"`` (no script) answers every prompt with the prompt itself.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import anyio

from .errors import ProviderError
from .hookspecs import hookimpl
from .models import ModelEvent, ModelRequest, ProviderProfile, Stop, TextDelta, ThinkingDelta, ToolCallDelta
from .models import ToolCallStart as _ToolCallStart
from .types import Usage

__all__ = [
    "ProviderContract",  # noqa: F822 - loaded lazily by __getattr__ (it imports pytest)
    "ScriptedModel",
    "Turn",
    "error",
    "stop",
    "text",
    "thinking",
    "tool_call",
    "usage",
]


@dataclass(frozen=True, slots=True)
class _Text:
    text: str


@dataclass(frozen=True, slots=True)
class _Thinking:
    thinking: str
    signature: str


@dataclass(frozen=True, slots=True)
class _ToolCall:
    name: str
    arguments: str
    id: str | None


@dataclass(frozen=True, slots=True)
class _Raise:
    error: BaseException


Part: TypeAlias = str | _Text | _Thinking | _ToolCall | _Raise | Usage | Stop
Turn: TypeAlias = str | Sequence[Part] | BaseException
"""One scripted model turn: a string (a text answer), a list of parts, or an exception to raise."""


def text(value: str) -> _Text:
    """Answer text."""
    return _Text(value)


def thinking(value: str, signature: str = "") -> _Thinking:
    """Reasoning, with an optional signature."""
    return _Thinking(value, signature)


def tool_call(name: str, arguments: dict[str, Any] | str, *, id: str | None = None) -> _ToolCall:
    """A tool call; a string ``arguments`` is sent as is (use it to script garbled JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return _ToolCall(name, raw, id)


def usage(input_tokens: int = 0, output_tokens: int = 0, **more: int) -> Usage:
    """The usage the turn reports."""
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, **more)


def stop(reason: str) -> Stop:
    """End the turn with this stop reason (the default is ``tool_use`` or ``end_turn``)."""
    return Stop(reason)


def error(exc: BaseException) -> _Raise:
    """Raise ``exc`` at this point of the stream (after the parts before it were sent)."""
    return _Raise(exc)


@dataclass
class ScriptedModel:
    """A provider that replays scripted turns, one per request, split into chunks of ``chunk_size``.

    Every request it receives is kept in `requests`, so tests can assert what the loop sent.
    """

    turns: Sequence[Turn] = ()
    chunk_size: int = 0
    """Split text and argument strings into deltas of this many characters (0: one delta per part)."""
    delay: float = 0.0
    """Seconds to wait before each event (to test interrupts and timeouts)."""
    model: str = "scripted"
    profile: ProviderProfile = field(
        default_factory=lambda: ProviderProfile(name="test", requires_api_key=False, local=True)
    )
    requests: list[ModelRequest] = field(default_factory=list)
    cost_per_token: float | None = None
    """When set, `cost` prices every token at this many dollars (to test budgets)."""

    def __post_init__(self) -> None:
        self._next = 0

    def cost(self, used: Usage) -> float | None:
        """The price of ``used`` at `cost_per_token`."""
        return None if self.cost_per_token is None else used.total_tokens * self.cost_per_token

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Replay the next scripted turn (or echo the last user text when there is no script)."""
        self.requests.append(request)
        if not self.turns:
            turn: Turn = request.last_user_text()
        elif self._next >= len(self.turns):
            raise ProviderError(f"the script has only {len(self.turns)} turns", provider="test")
        else:
            turn = self.turns[self._next]
            self._next += 1
        for event in self._events(turn):
            if self.delay:
                await anyio.sleep(self.delay)
            if isinstance(event, _Raise):
                raise event.error
            yield event

    def _events(self, turn: Turn) -> list[ModelEvent | _Raise]:
        if isinstance(turn, BaseException):
            return [_Raise(turn)]
        parts: Sequence[Part] = turn if isinstance(turn, list | tuple) else [turn]  # type: ignore[list-item]
        events: list[ModelEvent | _Raise] = []
        calls = 0
        for part in parts:
            if isinstance(part, str):
                part = _Text(part)
            if isinstance(part, _Text):
                events += [TextDelta(piece) for piece in self._split(part.text)]
            elif isinstance(part, _Thinking):
                events += [ThinkingDelta(piece) for piece in self._split(part.thinking)]
                if part.signature:
                    events.append(ThinkingDelta(signature=part.signature))
            elif isinstance(part, _ToolCall):
                events.append(_ToolCallStart(calls, part.id or f"call_{self._next}_{calls}", part.name))
                events += [ToolCallDelta(calls, piece) for piece in self._split(part.arguments)]
                calls += 1
            else:
                events.append(part)
        if not any(isinstance(e, Stop) for e in events) and not (events and isinstance(events[-1], _Raise)):
            events.append(Stop("tool_use" if calls else "end_turn"))
        return events

    def _split(self, value: str) -> list[str]:
        size = self.chunk_size
        if not size or len(value) <= size:
            return [value]
        return [value[i : i + size] for i in range(0, len(value), size)]


def _echo_factory(model: str, *, base_url: str | None = None, api_key: str | None = None) -> ScriptedModel:
    return ScriptedModel(model=model)


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
    """The built-in ``test`` provider: ``model="test:echo"`` echoes the prompt."""
    register("test", _echo_factory)


def __getattr__(name: str) -> Any:
    if name == "ProviderContract":  # imports pytest: only when asked for
        from ._contract import ProviderContract

        return ProviderContract
    raise AttributeError(name)
