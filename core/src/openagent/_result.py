"""The end of a run: its totals, and the `ResultMessage` that reports them."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .types import AssistantMessage, ResultMessage, ResultSubtype, TextBlock, Usage

if TYPE_CHECKING:
    from .loop import Conversation

__all__ = ["RunStats", "add_model_usage", "final_text", "result_message"]


@dataclass(slots=True)
class RunStats:
    """Totals of one prompt's run."""

    api: float = 0.0
    turns: int = 0
    repairs: int = 0
    stop_hook_active: bool = False
    structured: Any = None
    usage: Usage = field(default_factory=Usage)


def final_text(message: AssistantMessage | None) -> str:
    """The text blocks of ``message``, joined."""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock)) if message else ""


_TERMINAL = {
    "error_max_turns": "max_turns",
    "error_max_budget_usd": "max_budget",
    "error_max_structured_output_retries": "structured_output_retries",
}


def _terminal_reason(subtype: str, stop_reason: str | None) -> str:
    if stop_reason in ("interrupted", "tool_use"):
        return "interrupted" if stop_reason == "interrupted" else "tool_pending"
    return _TERMINAL.get(subtype) or ("completed" if subtype == "success" else "error")


def add_model_usage(entry: dict[str, Any], usage: Usage, cost: float | None) -> None:
    """Add one turn to a model's ``model_usage`` entry (the Claude Agent SDK's camelCase keys)."""
    for key, value in (
        ("inputTokens", usage.input_tokens),
        ("outputTokens", usage.output_tokens),
        ("cacheReadInputTokens", usage.cache_read_input_tokens),
        ("cacheCreationInputTokens", usage.cache_creation_input_tokens),
    ):
        entry[key] = entry.get(key, 0) + value
    entry["costUSD"] = entry.get("costUSD", 0.0) + (cost or 0.0)


async def result_message(
    conversation: Conversation,
    subtype: ResultSubtype,
    started: float,
    stats: RunStats,
    result: str,
    last: AssistantMessage | None,
    stop_reason: str | None = None,
    *,
    structured: Any = None,
) -> ResultMessage:
    """The run's `ResultMessage`, persisted; the run's permission denials are handed over and cleared."""
    message = ResultMessage(
        subtype=subtype,
        duration_ms=int((time.monotonic() - started) * 1000),
        duration_api_ms=int(stats.api * 1000),
        is_error=subtype != "success",
        num_turns=stats.turns,
        session_id=conversation.session_id,
        total_cost_usd=conversation.total_cost_usd,
        usage=stats.usage,
        result=result,
        structured_output=structured,
        stop_reason=stop_reason or (last.stop_reason if last else None),
        terminal_reason=_terminal_reason(subtype, stop_reason),
        permission_denials=list(conversation.denials),
        model_usage={model: dict(used) for model, used in conversation.model_usage.items()},
        uuid=uuid.uuid4().hex,
    )
    conversation.denials.clear()
    await conversation.persist(message)
    return message
