"""`TurnBuilder`: one streamed model turn, accumulated into content blocks.

Providers yield normalised events; the builder joins text and argument fragments per block, keeps blocks in
arrival order, and (with partial messages on) makes the Anthropic-shaped stream events that
``include_partial_messages`` promises whatever the provider: ``message_start``, ``content_block_start`` /
``_delta`` / ``_stop`` per block, then (from `TurnBuilder.finish`, once the stream has ended and the usage
is final) ``message_delta`` with the stop reason and usage, and ``message_stop``. It runs once per
streamed chunk: keep it lean.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from .models import ModelEvent, RawContent, Stop, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallStart
from .types import ContentBlock, RawBlock, TextBlock, ThinkingBlock, ToolUseBlock, ToolUseError, Usage

__all__ = ["TurnBuilder"]

_TEXT, _THINKING, _TOOL, _RAW = 0, 1, 2, 3
_NONE: list[dict[str, Any]] = []  # what the hot path returns; never appended to
MAX_ARGUMENT_DEPTH = 100
"""Tool arguments nested deeper than this are refused (deep enough for any schema, far from recursion
limits in validation and persistence)."""
MAX_TOOL_NAME = 256
_SURROGATE = re.compile("[\ud800-\udfff]")


class TurnBuilder:
    """Accumulates one streamed model turn into content blocks (and, optionally, Anthropic-shaped events)."""

    __slots__ = (
        "blocks",
        "by_index",
        "kind",
        "parts",
        "signature",
        "stop",
        "usage",
        "partial",
        "model",
        "started",
    )

    def __init__(self, partial: bool, model: str = "") -> None:
        self.blocks: list[list[Any]] = []  # [kind, parts, meta] per content block, in arrival order
        self.by_index: dict[int, list[Any]] = {}  # provider tool-call index → its block
        self.kind = -1
        self.parts: list[str] = []
        self.stop: Stop | None = None
        self.usage: Usage | None = None
        self.partial = partial
        self.model = model
        self.started = False

    def feed(self, event: ModelEvent) -> list[dict[str, Any]]:
        """Add one event; return the Anthropic-shaped stream events it makes (only in partial mode)."""
        if self.kind == _TEXT and not self.partial and type(event) is TextDelta:  # the hot path: more text
            self.parts.append(event.text)
            return _NONE
        out: list[dict[str, Any]] = []
        if self.partial and not self.started:
            out.append(self._message_start())
        if isinstance(event, TextDelta):
            self._switch(_TEXT, None, {"type": "text", "text": ""}, out)
            self.parts.append(event.text)
            if self.partial:
                out.append(self._delta({"type": "text_delta", "text": event.text}))
        elif isinstance(event, ThinkingDelta):
            self._thinking(event, out)
        elif isinstance(event, ToolCallStart):
            start = {"type": "tool_use", "id": event.id, "name": event.name, "input": {}}
            self.by_index[event.index] = self._switch(_TOOL, (event.id, event.name), start, out, new=True)
        elif isinstance(event, ToolCallDelta):
            self._arguments(event, out)
        elif isinstance(event, RawContent):
            self._switch(_RAW, (event.provider, event.data), event.data, out, new=True)
        elif isinstance(event, Usage):
            self.usage = event if self.usage is None else self.usage.merge(event)
        elif isinstance(event, Stop):
            self.stop = event
            self._close(out)
        return out

    def _message_start(self) -> dict[str, Any]:
        self.started = True
        message: dict[str, Any] = {
            "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": _usage(self.usage),
        }  # fmt: skip
        return {"type": "message_start", "message": message}

    def finish(self) -> list[dict[str, Any]]:
        """The events that close the message (partial mode): ``message_delta``, ``message_stop``.

        Call it once the stream has ended: some endpoints report usage after the stop reason.
        """
        if not self.partial:
            return _NONE
        out = [] if self.started else [self._message_start()]
        self._close(out)
        reason = self.stop.reason if self.stop is not None else None
        delta = {"stop_reason": reason, "stop_sequence": None}
        out.append({"type": "message_delta", "delta": delta, "usage": _usage(self.usage)})
        out.append({"type": "message_stop"})
        return out

    def _switch(
        self, kind: int, meta: Any, start: dict[str, Any], out: list[dict[str, Any]], new: bool = False
    ) -> list[Any]:
        """Continue the current block if it is of ``kind`` (and not ``new``), else close it and open one."""
        if self.kind == kind and not new:
            return self.blocks[-1]
        self._close(out)
        block = [kind, [], meta]
        self.blocks.append(block)
        self.kind, self.parts = kind, block[1]
        if self.partial:
            out.append({"type": "content_block_start", "index": len(self.blocks) - 1, "content_block": start})
        return block

    def _thinking(self, event: ThinkingDelta, out: list[dict[str, Any]]) -> None:
        # reasoning after a signature is a new thinking block: each is signed (and replayed) on its own
        signed = self.kind == _THINKING and bool(self.blocks[-1][2]) and bool(event.thinking)
        start = {"type": "thinking", "thinking": "", "signature": ""}
        block = self._switch(_THINKING, [], start, out, new=signed)
        if event.thinking:
            self.parts.append(event.thinking)
            if self.partial:
                out.append(self._delta({"type": "thinking_delta", "thinking": event.thinking}))
        if event.signature:
            block[2].append(event.signature)
            if self.partial:
                out.append(self._delta({"type": "signature_delta", "signature": event.signature}))

    def _arguments(self, event: ToolCallDelta, out: list[dict[str, Any]]) -> None:
        block = self.by_index.get(event.index)
        if block is None:  # arguments before any start: keep them visible rather than drop them
            start = {"type": "tool_use", "id": f"call_{uuid.uuid4().hex[:12]}", "name": "", "input": {}}
            block = self.by_index[event.index] = self._switch(_TOOL, (start["id"], ""), start, out, new=True)
        block[1].append(event.arguments)
        if self.partial:
            delta = {"type": "input_json_delta", "partial_json": event.arguments}
            out.append({"type": "content_block_delta", "index": self.blocks.index(block), "delta": delta})

    def _delta(self, delta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": len(self.blocks) - 1, "delta": delta}

    def _close(self, out: list[dict[str, Any]]) -> None:
        if self.partial and self.kind != -1:
            out.append({"type": "content_block_stop", "index": len(self.blocks) - 1})
        self.kind = -1

    def content(self) -> list[ContentBlock]:
        """The finished blocks; tool calls whose arguments are not a JSON object become `ToolUseError`."""
        content: list[ContentBlock] = []
        for kind, parts, meta in self.blocks:
            if kind == _TEXT:
                if text := "".join(parts):
                    content.append(TextBlock(text=_text(text)))
            elif kind == _THINKING:
                content.append(ThinkingBlock(thinking=_text("".join(parts)), signature="".join(meta)))
            elif kind == _RAW:
                content.append(RawBlock(provider=meta[0], data=meta[1]))
            else:
                content.append(_tool_block(meta[0], meta[1], "".join(parts)))
        return content


def _usage(usage: Usage | None) -> dict[str, int]:
    return usage.model_dump() if usage is not None else {"input_tokens": 0, "output_tokens": 0}


def _text(value: str) -> str:
    """``value`` with lone surrogates (which no UTF-8 file or store can hold) replaced by U+FFFD."""
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def _tool_block(call_id: str, name: str, raw: str) -> ToolUseBlock | ToolUseError:
    name, raw = _text(name), _text(raw)
    error = None
    if not name:
        error = "the tool call has no tool name"
    elif len(name) > MAX_TOOL_NAME:
        error, name = (
            f"the tool name is {len(name)} characters long; no tool has such a name",
            name[:64] + "…",
        )
    else:
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            error = f"the arguments are not valid JSON ({exc}); send a JSON object matching the tool's schema"
        except RecursionError:
            error = f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
        else:
            if not isinstance(arguments, dict):
                error = f"the arguments must be a JSON object, not {type(arguments).__name__}"
            else:
                error = _unusable(arguments)
    if error is not None:
        return ToolUseError(id=call_id, name=name, error=error, raw_data=raw)
    return ToolUseBlock(id=call_id, name=name, input=arguments)


def _unusable(arguments: dict[str, Any]) -> str | None:
    """Why parsed arguments cannot be used: nested too deep, or a string with a lone surrogate."""
    stack: list[tuple[Any, int]] = [(arguments, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
        if isinstance(value, dict):
            stack += [(k, depth) for k in value]
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
        elif isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
            return (
                "the arguments hold a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not text"
            )
    return None
