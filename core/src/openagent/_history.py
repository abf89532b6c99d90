"""The model's history rebuilt from a transcript, valid for every provider whatever the transcript holds.

A transcript can hold lines that are not messages (a crafted file, a bug, a torn write) and can end in the
middle of a tool call (a crash); the rebuilt history skips the first with a warning and answers the second,
so a resumed run sends a request every provider accepts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from .types import AssistantMessage, ToolResultBlock, ToolUseBlock, ToolUseError, UserMessage

__all__ = ["UNFINISHED_CALL", "history_from_entries"]

logger = logging.getLogger("openagent.sessions")


def history_from_entries(entries: Sequence[dict[str, Any]]) -> list[UserMessage | AssistantMessage]:
    """Rebuild the model's message history from a transcript, exactly as the original run sent it.

    Subagent messages (``parent_tool_use_id`` set) and turns cut off mid-stream are not part of it; a
    compaction entry restarts the history from the compacted one it carries. An entry that is not a valid
    message is skipped with a warning, and every tool call is left answered (`_paired`).
    """
    entries = [e for e in entries if isinstance(e, dict)]
    start, history = 0, []
    for index in range(len(entries) - 1, -1, -1):  # only what follows the last compaction matters
        if entries[index].get("type") == "system" and "history" in entries[index]:
            if isinstance(entries[index]["history"], list):
                start, history = index + 1, list(entries[index]["history"])
                break
            logger.warning("skipped entry %d of the session: a compaction whose history is no list", index)
    history += [
        e["message"] for e in entries[start:] if e.get("type") in ("user", "assistant") and "message" in e
    ]
    return _paired(
        [
            m
            for m in _validated(history)
            if not m.parent_tool_use_id
            and not (isinstance(m, AssistantMessage) and m.stop_reason == "incomplete")
        ]
    )


def _validated(history: list[Any]) -> list[UserMessage | AssistantMessage]:
    """The messages validated in one call (a 10,000-message resume is dominated by this); when one is
    invalid, one by one, skipping and reporting the invalid ones.
    """  # noqa: D205
    adapter = _history_adapter()
    try:
        return adapter.validate_python(history)
    except ValidationError:
        pass
    kept: list[UserMessage | AssistantMessage] = []
    for position, raw in enumerate(history):
        try:
            kept += adapter.validate_python([raw])
        except ValidationError as exc:
            logger.warning("skipped message %d of the session: not a valid message (%s)", position, exc)
    return kept


UNFINISHED_CALL = (
    "The run stopped before this tool call finished, so its result was lost: it may or may not have taken "
    "effect. Check before repeating it."
)
"""The error result a resumed session gets for a tool call that was never answered."""


def _paired(history: list[UserMessage | AssistantMessage]) -> list[UserMessage | AssistantMessage]:
    """Every tool call followed by its result and every result by its call, as every provider requires.

    A run killed during a tool call leaves a call without a result: it gets an error result
    (`UNFINISHED_CALL`). A result whose call is gone (a skipped line) is dropped.
    """
    out: list[UserMessage | AssistantMessage] = []
    waiting: list[str] = []  # ids of the calls of the last assistant message, not yet answered
    for message in history:
        if isinstance(message, AssistantMessage):
            if waiting:
                out.append(_unfinished(waiting))
            out.append(message)
            waiting = [b.id for b in message.content if isinstance(b, ToolUseBlock | ToolUseError)]
            continue
        content = message.content if isinstance(message.content, list) else None
        if content is not None and any(isinstance(b, ToolResultBlock) for b in content):
            kept = [b for b in content if not isinstance(b, ToolResultBlock) or b.tool_use_id in waiting]
            answered = {b.tool_use_id for b in kept if isinstance(b, ToolResultBlock)}
            missing = _unfinished([i for i in waiting if i not in answered]).content if waiting else []
            fixed = [*missing, *kept] if isinstance(missing, list) else kept
            if fixed != content:
                message = message.model_copy(update={"content": fixed})
            waiting = []
            if fixed:
                out.append(message)
            continue
        if waiting:
            out.append(_unfinished(waiting))
            waiting = []
        out.append(message)
    if waiting:
        out.append(_unfinished(waiting))
    return out


def _unfinished(ids: list[str]) -> UserMessage:
    return UserMessage(
        content=[ToolResultBlock(tool_use_id=i, content=UNFINISHED_CALL, is_error=True) for i in ids]
    )


_HISTORY: TypeAdapter[list[UserMessage | AssistantMessage]] | None = None


def _history_adapter() -> TypeAdapter[list[UserMessage | AssistantMessage]]:
    global _HISTORY
    if _HISTORY is None:
        _HISTORY = TypeAdapter(list[Annotated[UserMessage | AssistantMessage, Field(discriminator="type")]])
    return _HISTORY
