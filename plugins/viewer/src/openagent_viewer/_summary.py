"""One row of the sessions list, derived from a session's raw entries.

Entries come from a store and may have been written by anyone: every field is read defensively (a missing
or mistyped field is as good as absent), so a hostile or damaged transcript yields a row, never an error.

Status: ``finished`` or ``error`` once the latest run (what follows the last ``init``) has its result;
before that ``waiting for approval`` while a ``permission_request`` entry has no decision yet, else
``running``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, TypeAlias

__all__ = [
    "STATUSES",
    "Status",
    "Summarizer",
    "Summary",
    "blocks_of",
    "mapping",
    "message_of",
    "number",
    "parse_time",
    "summarize",
    "text_of",
    "usage_total",
]

Status: TypeAlias = Literal["finished", "error", "running", "waiting for approval"]
STATUSES: tuple[Status, ...] = ("finished", "error", "running", "waiting for approval")
_SEARCH_CHARS = 100_000  # per session: enough to find it by what it said, bounded for huge sessions


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def message_of(entry: Any) -> dict[str, Any] | None:
    """The entry's message object, or None (a bare entry, or not an object)."""
    message = entry.get("message") if isinstance(entry, dict) else None
    return message if isinstance(message, dict) else None


def blocks_of(message: dict[str, Any]) -> list[Any]:
    """The message's content blocks ([] when the content is a string or malformed)."""
    content = message.get("content")
    return content if isinstance(content, list) else []


def text_of(value: Any) -> str:
    """``value`` if it is a string, else ''."""
    return value if isinstance(value, str) else ""


def number(value: Any) -> float | None:
    """``value`` if it is a finite number (not a bool, NaN or infinity; at most 1e18), else None."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        result = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return result if math.isfinite(result) and abs(result) <= 1e18 else None


def usage_total(usage: Any) -> int:
    """All tokens a usage object counts (prompt, cached or not, and output)."""
    if not isinstance(usage, dict):
        return 0
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return int(sum(number(usage.get(k)) or 0 for k in keys))


def parse_time(value: Any) -> datetime | None:
    """An entry's ISO timestamp, or None when it is absent or malformed."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


@dataclass(slots=True)
class Summary:
    """What the sessions list shows of one session."""

    session_id: str
    project: str
    updated: int
    """Last modification, epoch milliseconds (from the store)."""
    title: str = "(no prompt)"
    """The first prompt."""
    model: str = ""
    turns: int = 0
    """Model turns of the main agent (as ``ResultMessage.num_turns`` counts them)."""
    tokens: int = 0
    """Every token of every model turn, subagents' included."""
    cost_usd: float | None = None
    duration_ms: int = 0
    """Sum of the runs' durations; a run still going counts up to its latest entry."""
    status: Status = "running"
    cwd: str = ""
    entries: int = 0
    search: str = ""
    """Lower-cased prompts, answers and tool names, for the search box."""
    waiting: list[str] = field(default_factory=list)
    """Tool names whose approval is awaited."""


@dataclass(slots=True)
class _Fold:
    """What a `Summarizer` accumulates while it walks the entries."""

    summary: Summary
    turn_cost: float | None = None
    run_cost: float | None = None
    run_started: datetime | None = None
    last_time: datetime | None = None
    result: dict[str, Any] | None = None
    pending: dict[str, str] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)
    chars: int = 0

    def word(self, text: str) -> None:
        if text and self.chars < _SEARCH_CHARS:
            self.words.append(text)
            self.chars += len(text) + 1


class Summarizer:
    """A session's summary, kept up to date entry by entry (a page following a session adds the new ones)."""

    def __init__(self, session_id: str, project: str) -> None:
        self._fold = _Fold(Summary(session_id=session_id, project=project, updated=0))
        self.count = 0
        """Entries added so far."""

    def add(self, entry: Any) -> None:
        """Count ``entry`` in."""
        self.count += 1
        if isinstance(entry, dict):
            _fold_entry(self._fold, entry)

    def summary(self, updated: int = 0) -> Summary:
        """The summary after the entries added so far (a copy: adding more does not change it)."""
        fold = self._fold
        summary = replace(fold.summary, updated=updated, entries=self.count)
        summary.cost_usd = fold.turn_cost if fold.turn_cost is not None else fold.run_cost
        if fold.result is not None:
            summary.status = "error" if fold.result.get("is_error") is True else "finished"
        else:
            summary.status = "waiting for approval" if fold.pending else "running"
            summary.waiting = sorted(set(fold.pending.values()))
            if fold.run_started and fold.last_time:
                try:
                    running = (fold.last_time - fold.run_started).total_seconds()
                    summary.duration_ms += max(0, int(running * 1000))
                except TypeError:  # naive and aware timestamps mixed: no duration rather than a guess
                    pass
        summary.search = " ".join(fold.words).lower()[:_SEARCH_CHARS]
        return summary


def summarize(session_id: str, project: str, updated: int, entries: Iterable[Any]) -> Summary:
    """The list row for a session's entries."""
    summarizer = Summarizer(session_id, project)
    for entry in entries:
        summarizer.add(entry)
    return summarizer.summary(updated)


def _fold_entry(fold: _Fold, entry: dict[str, Any]) -> None:
    kind, message = entry.get("type"), message_of(entry)
    fold.last_time = parse_time(entry.get("timestamp")) or fold.last_time
    if kind == "permission_request":
        fold.pending[text_of(entry.get("tool_use_id"))] = text_of(entry.get("tool_name"))
    elif kind == "tool_outcome":
        fold.pending.pop(text_of(entry.get("tool_use_id")), None)
    elif message is None:
        return
    elif kind == "system" and message.get("subtype") == "init":
        _fold_init(fold, entry, message)
    elif kind == "assistant":
        _fold_assistant(fold, entry, message)
    elif kind == "user":
        _fold_user(fold, message)
    elif kind == "result":
        fold.result = message
        fold.summary.duration_ms += int(number(message.get("duration_ms")) or 0)
        cost = number(message.get("total_cost_usd"))
        if cost is not None:
            fold.run_cost = max(cost, fold.run_cost or 0.0)


def _fold_init(fold: _Fold, entry: dict[str, Any], message: dict[str, Any]) -> None:
    data = mapping(message.get("data"))
    fold.result, fold.pending = None, {}
    fold.run_started = parse_time(entry.get("timestamp"))
    fold.summary.model = text_of(data.get("model")) or fold.summary.model
    fold.summary.cwd = text_of(data.get("cwd")) or fold.summary.cwd


def _fold_assistant(fold: _Fold, entry: dict[str, Any], message: dict[str, Any]) -> None:
    summary = fold.summary
    summary.tokens += usage_total(message.get("usage"))
    cost = number(entry.get("cost_usd"))
    if cost is not None:
        fold.turn_cost = (fold.turn_cost or 0.0) + cost
    if not message.get("parent_tool_use_id"):
        summary.turns += 1
        summary.model = text_of(message.get("model")) or summary.model
    for block in blocks_of(message):
        if isinstance(block, dict):
            fold.word(text_of(block.get("text")) or text_of(block.get("name")))


def _fold_user(fold: _Fold, message: dict[str, Any]) -> None:
    content = message.get("content")
    if isinstance(content, str):
        fold.word(content)
        if fold.summary.title == "(no prompt)" and not message.get("parent_tool_use_id"):
            fold.summary.title = " ".join(content.split())[:120] or "(empty prompt)"
        return
    for block in blocks_of(message):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            fold.pending.pop(text_of(block.get("tool_use_id")), None)
