"""`query()`, `run()` and `run_sync()`: one-shot entry points over the agent loop."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from .loop import Conversation
from .options import AgentOptions
from .types import AssistantMessage, Message, ResultMessage, TextBlock, Usage

__all__ = ["RunResult", "query", "run", "run_sync"]


async def query(
    *, prompt: str | AsyncIterable[Mapping[str, Any]], options: AgentOptions | None = None
) -> AsyncIterator[Message]:
    """Run an agent on ``prompt`` and yield its messages as they happen.

    The order is `SystemMessage` (``subtype="init"``), then per turn an `AssistantMessage` and, when tools
    ran, a `UserMessage` with their results, and last a `ResultMessage`. ``prompt`` may also be an async
    iterable of user-message dicts (``{"type": "user", "message": {"role": "user", "content": ...}}``),
    each answered in turn within one conversation.

    Args:
        prompt: The user's message, or an async iterable of them.
        options: Model, tools, limits and the rest; ``AgentOptions()`` reads the model from
            ``$OPENAGENT_MODEL``.

    Raises:
        openagent.errors.ProviderError: After the error `ResultMessage` was yielded, when the model
            endpoint failed.
    """
    conversation = Conversation(options or AgentOptions())
    try:
        if isinstance(prompt, str):
            async for message in conversation.run(prompt):
                yield message
        else:
            async for item in prompt:
                async for message in conversation.run(item):
                    yield message
    finally:
        with anyio.CancelScope(shield=True):
            await conversation.aclose()


@dataclass
class RunResult:
    """What `run()` returns: the final text and everything that led to it."""

    text: str
    """The final answer's text (the text of the last assistant message)."""
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    session_id: str = ""
    structured_output: Any = None
    result: ResultMessage | None = None
    """The closing `ResultMessage` (subtype, cost, turns, durations)."""

    @property
    def is_error(self) -> bool:
        """Whether the run ended in an error (max turns, budget, a failure)."""
        return self.result is None or self.result.is_error


async def run(prompt: str, options: AgentOptions | None = None) -> RunResult:
    """Run an agent to completion and return its final answer and messages."""
    messages: list[Message] = [m async for m in query(prompt=prompt, options=options)]
    result = next((m for m in reversed(messages) if isinstance(m, ResultMessage)), None)
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    text = "".join(b.text for b in last.content if isinstance(b, TextBlock)) if last else ""
    return RunResult(
        text=text,
        messages=messages,
        usage=result.usage or Usage() if result else Usage(),
        session_id=result.session_id if result else "",
        structured_output=result.structured_output if result else None,
        result=result,
    )


def run_sync(prompt: str, options: AgentOptions | None = None) -> RunResult:
    """`run()` for synchronous code (scripts, notebooks without a running loop)."""
    return anyio.run(run, prompt, options)
