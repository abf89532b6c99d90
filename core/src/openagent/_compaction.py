"""Context-window management: count the history's tokens, trim big tool results, summarise old turns.

Before each model request the loop asks `Compaction.needed` whether the history would pass ``threshold``
of the context window (the policy's own, else the model profile's: from maintained data, the server, or
the run's options). If so it fires ``PreCompact`` and calls `compact`, a function of the history, the
provider and the policy alone: it trims tool results longer than ``max_tool_result_chars``; if that is not
enough, it asks a model for a summary of the oldest turns and replaces them with it, keeping the latest
``keep_last`` messages and never separating a tool call from its result. It returns the new history and
the ``compact_boundary`` message; the loop persists both, so a resumed run rebuilds the compacted history.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import OpenAgentError
from ._models import ModelProfile, ModelRequest, Provider, Stop, TextDelta
from ._types import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)

__all__ = ["MIN_CONTEXT_WINDOW", "Compaction", "compact", "estimate_tokens", "reported_window"]

logger = logging.getLogger("openagent.compaction")

History = list[UserMessage | AssistantMessage]

SUMMARY_PROMPT = (
    "Summarise the conversation below for your own later use: the user's goals, decisions taken, facts "
    "learned (file names, values, results of tool calls), and what remains to do. Be complete but brief.\n\n"
)
SUMMARY_MARKER = "[The earlier part of this conversation was compacted. Its summary follows.]"


def estimate_tokens(messages: Sequence[UserMessage | AssistantMessage]) -> int:
    """A fast estimate: about four characters of JSON per token (real tokenizers vary by ±30 %)."""
    return sum(_size(m) for m in messages) // 4 + 1


def _size(message: UserMessage | AssistantMessage) -> int:
    try:
        return len(message.model_dump_json(exclude_none=True))
    except ValueError:  # a lone surrogate (text from someone else) cannot be UTF-8: count it escaped
        return len(json.dumps(message.model_dump(mode="python", exclude_none=True), default=str))


MIN_CONTEXT_WINDOW = 1_024
"""No model is run with a smaller window: below this many tokens of history, nobody asks the server."""


async def reported_window(provider: Provider) -> int | None:
    """The context window the provider's server reports for its model (``model_profile()``, where the
    provider has it: llama.cpp, Ollama, vLLM…), or ``None`` when it cannot say — which is no reason to fail
    a run.
    """  # noqa: D205
    ask = getattr(provider, "model_profile", None)
    if ask is None:
        return None
    try:
        reported = await ask()
    except OpenAgentError as exc:
        logger.debug("the model profile could not be read: %s", exc)
        return None
    return getattr(reported, "context_window", None)


@dataclass
class Compaction:
    """When and how to compact. ``AgentOptions.compaction=None`` turns it off."""

    context_window: int | None = None
    """Tokens the model can take; ``None`` uses the model profile's (no figure anywhere: no compaction)."""
    threshold: float = 0.8
    """Compact when the next request would exceed this share of the window."""
    keep_last: int = 6
    """Recent messages kept verbatim (fewer when a tool call and its result would be split)."""
    max_tool_result_chars: int = 2_000
    """Tool results longer than this are trimmed first when compacting."""
    model: Provider | None = None
    """The provider that writes summaries; ``None`` uses the run's own."""

    def window(self, source: Provider | ModelProfile) -> int | None:
        """The context window in force: the policy's, else the profile's (a provider's endpoint defaults)."""
        if not isinstance(source, ModelProfile):
            profile = getattr(source, "profile", None)
            source = getattr(profile, "defaults", None) or ModelProfile()
        return self.context_window or source.context_window

    def needed(self, history: History, window: int | None, extra: int = 0) -> bool:
        """Whether ``history`` (plus ``extra`` tokens of system prompt and tools) passes the threshold."""
        return window is not None and estimate_tokens(history) + extra > self.threshold * window

    def worth_asking(self, history: History) -> bool:
        """Whether the server's reported window could matter yet: ``history`` would need compacting in the
        smallest window a model is run with (`MIN_CONTEXT_WINDOW`), so short runs never ask.
        """  # noqa: D205
        return self.needed(history, MIN_CONTEXT_WINDOW)

    async def apply(
        self, history: History, provider: Provider, model: str, window: int | None, extra: int, *, force: bool
    ) -> History:
        """Trim long tool results; if still too big (or ``force``), summarise all but the latest turns."""
        history = self.trim(history)
        if force or self.needed(history, window, extra):
            cut = self.split(history)
            if cut > 0:
                history = [*await self.summarise(history[:cut], provider, model), *history[cut:]]
        return history

    def trim(self, history: History) -> History:
        """The history with long tool results cut to ``max_tool_result_chars`` (pairs stay intact)."""
        limit = self.max_tool_result_chars
        trimmed: History = []
        for message in history:
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                blocks = [_trim(b, limit) if isinstance(b, ToolResultBlock) else b for b in message.content]
                message = message.model_copy(update={"content": blocks})
            trimmed.append(message)
        return trimmed

    def split(self, history: History) -> int:
        """Where the kept part starts: a user turn that is not a tool result, at most ``keep_last`` back."""
        for index in range(max(len(history) - self.keep_last, 1), len(history)):
            message = history[index]
            if isinstance(message, UserMessage) and not _is_tool_results(message):
                return index
        return len(history)

    async def summarise(self, history: History, provider: Provider, model: str) -> History:
        """Ask for a summary of ``history`` (sent as a plain-text transcript, so any endpoint takes it)."""
        request = ModelRequest(
            model=model, messages=[UserMessage(content=SUMMARY_PROMPT + transcript(history))]
        )
        parts: list[str] = []
        events = (self.model or provider).stream(request)
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, Stop):
                    break
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        return [
            UserMessage(content=SUMMARY_MARKER),
            AssistantMessage(
                content=[TextBlock(text="".join(parts).strip())], model=model, stop_reason="end_turn"
            ),
        ]


def _trim(block: ToolResultBlock, limit: int) -> ToolResultBlock:
    text = block.content if isinstance(block.content, str) else json.dumps(block.content)
    if len(text) <= limit:
        return block
    return block.model_copy(
        update={"content": text[:limit] + f"\n[trimmed to save context: {len(text)} chars]"}
    )


def _is_tool_results(message: UserMessage) -> bool:
    return isinstance(message.content, list) and any(isinstance(b, ToolResultBlock) for b in message.content)


def transcript(history: Sequence[UserMessage | AssistantMessage]) -> str:
    """The history as readable text: who said what, which tools were called with what, and their results."""
    lines: list[str] = []
    for message in history:
        blocks: Sequence[Any] = (
            [TextBlock(text=message.content)] if isinstance(message.content, str) else message.content
        )
        for block in blocks:
            if isinstance(block, TextBlock):
                lines.append(f"{message.type}: {block.text}")
            elif isinstance(block, ToolUseBlock):
                lines.append(f"assistant called {block.name}({json.dumps(block.input)})")
            elif isinstance(block, ToolUseError):
                lines.append(f"assistant called {block.name} with invalid arguments")
            elif isinstance(block, ToolResultBlock):
                content = block.content if isinstance(block.content, str) else json.dumps(block.content)
                lines.append(f"tool result{' (error)' if block.is_error else ''}: {content}")
    return "\n".join(lines)


async def compact(
    history: History,
    provider: Provider,
    policy: Compaction,
    *,
    model: str,
    trigger: str,
    window: int | None = None,
    extra: int = 0,
    force: bool = False,
) -> tuple[History, SystemMessage]:
    """Compact ``history``: the new history and the ``compact_boundary`` message that records it.

    Args:
        history: The messages the model would see next.
        provider: Writes the summary, unless the policy names its own ``model``.
        policy: When and how to compact.
        model: The model name to send to ``provider``.
        trigger: ``auto`` or ``manual`` (recorded in the boundary).
        window: The context window in force, for the check after trimming.
        extra: Tokens of system prompt and tool schemas that come with every request.
        force: Summarise even when trimming was enough (manual compaction, a context overflow).
    """
    before = estimate_tokens(history)
    compacted = await policy.apply(history, provider, model, window, extra, force=force)
    data = {"trigger": trigger, "pre_tokens": before, "post_tokens": estimate_tokens(compacted)}
    return compacted, SystemMessage(subtype="compact_boundary", data=data)
