"""A session's entries as a timeline of prompts, model turns, tool-call cards, boundaries and results.

Subagent messages nest under the card of the call that ran them.

`Timeline.feed` takes one entry at a time and returns what changed (`Op`s), so the page rendered at load
and the live updates sent afterwards come from one walk over the same entries: the page is the timeline
after ``n`` entries, an update is the ops of the entries after it. Nothing here renders HTML.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ._summary import blocks_of, mapping, message_of, number, text_of, usage_total

__all__ = ["MAX_DEPTH", "PREVIEW_CHARS", "Card", "Node", "Op", "Part", "Timeline", "TurnStat", "full_values"]

PREVIEW_CHARS = 2_000
"""Longer text is cut here; the rest comes on request (the full-text route)."""
MARKDOWN_CHARS = 20_000
"""Longer answers are shown as plain text (markdown of that size is a dump, not prose)."""
MAX_DEPTH = 6
"""Subagents nest this deep on the page; deeper ones (only a forged transcript has them) stay flat."""
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
IMAGE_CHARS = 4_000_000
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
PROMPT, TEXT, OTHER = -1, -2, -3  # block positions of a prompt string, a result's text, a whole entry
TASK_SUBTYPES = ("task_started", "task_notification")
_SYSTEM_NODES: dict[Any, Any] = {"init": "run", "compact_boundary": "compaction"} | dict.fromkeys(
    TASK_SUBTYPES, "task"
)

PartKind: TypeAlias = Literal["text", "markdown", "thinking", "json", "image"]


@dataclass(slots=True, eq=False)
class Part:
    """One piece of content: ``value`` is what is shown, cut to `PREVIEW_CHARS` when ``total`` says more."""

    kind: PartKind
    value: str
    address: tuple[int, int, int]
    """(entry, block, part): where the full-text route finds the whole value."""
    total: int = 0

    @property
    def truncated(self) -> bool:
        """Whether ``value`` is only the start of the content."""
        return self.total > len(self.value)


@dataclass(slots=True, eq=False)
class Card:
    """A tool call: input, result, duration, permission decision, and the messages of a subagent it ran."""

    dom: str
    tool_use_id: str
    name: str
    depth: int
    input: Part
    invalid: str | None = None
    """Why the call could not be run as written (a garbled call, `ToolUseError`)."""
    result: list[Part] | None = None
    is_error: bool = False
    duration_ms: int | None = None
    permission: dict[str, Any] | None = None
    waiting: str | None = None
    """Why approval was asked, while it is awaited."""
    children: list[Node] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Node:
    """One timeline item; ``kind`` says which fields matter."""

    kind: Literal["run", "prompt", "assistant", "compaction", "task", "result", "system", "orphan", "entry"]
    index: int
    message: dict[str, Any]
    entry: dict[str, Any]
    parts: list[Part | Card] = field(default_factory=list)
    depth: int = 0
    turn: TurnStat | None = None
    lost_parent: bool = False
    """A subagent message whose delegating call is not in the transcript."""

    @property
    def dom(self) -> str:
        """The element id of this item on the page."""
        return f"e{self.index}"


@dataclass(slots=True)
class TurnStat:
    """One model turn of the main agent, for the per-turn line and the chart."""

    number: int
    tokens: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_ms: int | None


Op: TypeAlias = tuple[Literal["append"], str, Node] | tuple[Literal["card"], Card] | tuple[Literal["chart"]]
"""What changed: a node appended to a container (by element id), a card updated, the chart to redraw."""


def pretty(value: Any) -> str:
    """Indented JSON; a value too deep or odd to format is described instead of failing the page."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return "[this value cannot be shown: too deeply nested]"


def _result_values(content: Any) -> list[tuple[PartKind, str]]:
    """A tool result's content as parts: text, images (known types, base64 only) and anything else as JSON."""
    if content is None:
        return []
    if isinstance(content, str):
        return [("text", content)]
    if not isinstance(content, list):
        return [("json", pretty(content))]
    values: list[tuple[PartKind, str]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            values.append(("text", block["text"]))
        elif kind == "image" and (uri := _image_uri(block)):
            values.append(("image", uri))
        else:
            values.append(("json", pretty(block)))
    return values


def _image_uri(block: dict[str, Any]) -> str | None:
    """A data URI for an image block of a known type with base64 data (Anthropic's form or MCP's), or None."""
    source = mapping(block.get("source"))
    if source:  # {"type": "image", "source": {"type": "base64", "media_type": …, "data": …}}
        media, data = text_of(source.get("media_type")), text_of(source.get("data"))
        if source.get("type") != "base64":
            return None
    else:  # {"type": "image", "data": …, "mimeType": …}
        media, data = text_of(block.get("mimeType")), text_of(block.get("data"))
    if media not in IMAGE_TYPES or not data or len(data) > IMAGE_CHARS or not _BASE64.fullmatch(data):
        return None  # never let anything but base64 into an attribute
    return f"data:{media};base64,{data}"


def _block_values(block: Any) -> list[tuple[PartKind, str]]:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text" and isinstance(block.get("text"), str):
        return [("markdown", block["text"])]
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return [("thinking", block["thinking"])]
    if kind == "tool_use":
        return [("json", pretty(block.get("input")))]
    if kind == "tool_use_error":
        return [("text", text_of(block.get("raw_data")))]
    if kind == "tool_result":
        return _result_values(block.get("content"))
    return [("json", pretty(block))]


def full_values(entry: Any, block: int) -> list[tuple[PartKind, str]]:
    """The whole content at an entry's block (or at `PROMPT`, `TEXT`, `OTHER`), as the page's parts."""
    message = message_of(entry)
    if block == OTHER or message is None:
        return [("json", pretty(entry))]
    if block == PROMPT:
        return [("text", text_of(message.get("content")))]
    if block == TEXT:
        return [("markdown", text_of(message.get("result")))] if message.get("result") else []
    blocks = blocks_of(message)
    return _block_values(blocks[block]) if 0 <= block < len(blocks) else []


def _parts(values: list[tuple[PartKind, str]], index: int, block: int) -> list[Part]:
    parts = []
    for number_, (kind, value) in enumerate(values):
        if kind == "markdown" and len(value) > MARKDOWN_CHARS:
            kind = "text"
        limit = len(value) if kind in ("markdown", "image") else PREVIEW_CHARS
        parts.append(Part(kind, value[:limit], (index, block, number_), len(value)))
    return parts


class Timeline:
    """The timeline of one session, built entry by entry."""

    def __init__(self) -> None:
        self.roots: list[Node] = []
        self.cards: dict[str, Card] = {}
        self.turns: list[TurnStat] = []
        self.count = 0
        """Entries fed so far."""

    def feed(self, entry: Any) -> list[Op]:
        """Add the next entry; return what changed on the page."""
        index, self.count = self.count, self.count + 1
        kind, message = (entry.get("type"), message_of(entry)) if isinstance(entry, dict) else (None, None)
        if kind in ("permission_request", "tool_outcome"):
            return self._note(kind, entry)
        if kind == "stream_event":
            return []
        if message is None:  # not a message: an entry of a kind this page does not know, shown as it is
            node = Node("entry", index, {}, mapping(entry))
            node.parts.extend(_parts(full_values(entry, OTHER), index, OTHER))
            return self._place(node, None)
        parent = message.get("parent_tool_use_id")
        if kind == "system" and message.get("subtype") in TASK_SUBTYPES:  # a subagent task's start or end
            parent = mapping(message.get("data")).get("tool_use_id")
        if kind == "assistant":
            return self._assistant(index, entry, message, parent)
        if kind == "user":
            return self._user(index, entry, message, parent)
        return self._place(self._other(index, entry, message, kind), parent)

    @staticmethod
    def _other(index: int, entry: dict[str, Any], message: dict[str, Any], kind: Any) -> Node:
        """A run's start, a compaction boundary, a result, another system message or an unknown one."""
        subtype = message.get("subtype")
        if kind == "result":
            node = Node("result", index, message, entry)
            node.parts.extend(_parts(full_values(entry, TEXT), index, TEXT))
            return node
        if kind == "system" and subtype in ("init", "compact_boundary", *TASK_SUBTYPES):
            return Node(_SYSTEM_NODES[subtype], index, message, entry)
        node = Node("system" if kind == "system" else "entry", index, message, entry)
        node.parts.extend(_parts(full_values(entry, OTHER), index, OTHER))
        return node

    def _place(self, node: Node, parent: Any) -> list[Op]:
        card = self.cards.get(parent) if isinstance(parent, str) else None
        if card is not None and card.depth < MAX_DEPTH:
            node.depth = card.depth + 1
            card.children.append(node)
            return [("append", f"{card.dom}-children", node)]
        node.lost_parent = bool(parent) and card is None  # too deep stays flat, but is not lost
        self.roots.append(node)
        return [("append", "timeline", node)]

    def _note(self, kind: str, entry: Any) -> list[Op]:
        card = self.cards.get(text_of(entry.get("tool_use_id")))
        if card is None:
            return []
        if kind == "permission_request":
            card.waiting = text_of(entry.get("reason")) or "approval asked"
        else:
            card.waiting = None
            permission = entry.get("permission")
            card.permission = permission if isinstance(permission, dict) else None
            duration = number(entry.get("duration_ms"))
            card.duration_ms = int(duration) if duration is not None else None
        return [("card", card)]

    def _assistant(self, index: int, entry: dict[str, Any], message: dict[str, Any], parent: Any) -> list[Op]:
        node = Node("assistant", index, message, entry)
        ops = self._place(node, parent)
        for position, block in enumerate(blocks_of(message)):
            kind = block.get("type") if isinstance(block, dict) else None
            values = _block_values(block)
            if kind in ("tool_use", "tool_use_error"):
                card = Card(
                    dom=f"c{index}-{position}",
                    tool_use_id=text_of(block.get("id")),
                    name=text_of(block.get("name")) or "(no name)",
                    depth=node.depth,
                    input=_parts(values, index, position)[0],
                    invalid=text_of(block.get("error")) or "invalid call"
                    if kind == "tool_use_error"
                    else None,
                )
                if card.tool_use_id:
                    self.cards[card.tool_use_id] = card
                node.parts.append(card)
            else:
                node.parts.extend(_parts(values, index, position))
        if not parent:
            node.turn = self._turn(entry, message)
            ops.append(("chart",))
        return ops

    def _turn(self, entry: dict[str, Any], message: dict[str, Any]) -> TurnStat:
        usage = mapping(message.get("usage"))
        latency = number(entry.get("latency_ms"))
        stat = TurnStat(
            number=len(self.turns) + 1,
            tokens=usage_total(usage),
            input_tokens=int(number(usage.get("input_tokens")) or 0),
            output_tokens=int(number(usage.get("output_tokens")) or 0),
            cost_usd=number(entry.get("cost_usd")),
            latency_ms=int(latency) if latency is not None else None,
        )
        self.turns.append(stat)
        return stat

    def _user(self, index: int, entry: dict[str, Any], message: dict[str, Any], parent: Any) -> list[Op]:
        if isinstance(message.get("content"), str):
            node = Node("prompt", index, message, entry)
            node.parts.extend(_parts(full_values(entry, PROMPT), index, PROMPT))
            return self._place(node, parent)
        ops: list[Op] = []
        rest: list[Part | Card] = []
        for position, block in enumerate(blocks_of(message)):
            is_result = isinstance(block, dict) and block.get("type") == "tool_result"
            card = self.cards.get(text_of(block.get("tool_use_id"))) if is_result else None
            parts = _parts(_block_values(block), index, position)
            if card is not None:
                card.result, card.is_error, card.waiting = parts, block.get("is_error") is True, None
                ops.append(("card", card))
            elif is_result:  # an answer to a call this transcript does not have
                orphan = Node("orphan", index, message, entry)
                orphan.parts.extend(parts)
                ops += self._place(orphan, parent)
            else:
                rest += parts
        if rest or not ops:
            ops += self._place(Node("prompt", index, message, entry, rest), parent)
        return ops
