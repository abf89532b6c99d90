"""The text tool-call protocol, for models or servers without native tool calling.

Tools are described in the system prompt; the model writes a call as ``<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`` (the Hermes / Qwen convention) or as a fenced JSON block naming a known tool. The
parser streams the surrounding text through and holds back only what might be the start of a call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from openagent.plugin import ModelEvent, TextDelta, ToolSpec

__all__ = ["TextToolCalls", "text_tools_prompt"]

_OPEN, _CLOSE, _FENCE = "<tool_call>", "</tool_call>", "```"
Emit = Callable[[str, str, list[ModelEvent]], None]
"""``emit(name, arguments_json_text, events)``: report one call."""


def text_tools_prompt(tools: Sequence[ToolSpec]) -> str:
    """The system-prompt section that teaches the model the protocol."""
    specs = "\n".join(
        json.dumps({"name": t.name, "description": t.description, "parameters": t.input_schema})
        for t in tools
    )
    return (
        "You can call the tools below. To call one, write exactly\n"
        '<tool_call>{"name": "<tool name>", "arguments": {<the arguments as a JSON object>}}</tool_call>\n'
        "then stop and wait: each result comes back inside <tool_response></tool_response>.\n"
        f"<tools>\n{specs}\n</tools>"
    )


def _partial_marker(text: str) -> int:
    """Length of the longest end of ``text`` that could begin a marker (held back until more arrives)."""
    for size in range(min(len(_OPEN) - 1, len(text)), 0, -1):
        tail = text[-size:]
        if _OPEN.startswith(tail) or _FENCE.startswith(tail):
            return size
    return 0


class TextToolCalls:
    """Splits streamed text into text deltas and tool calls."""

    def __init__(self, tool_names: frozenset[str]) -> None:
        self._names = tool_names
        self._buffer = ""
        self._block: str | None = None  # the marker of the block being read, if any

    def feed(self, text: str, events: list[ModelEvent], emit: Emit) -> None:
        """Add ``text``; append the text deltas and calls it completes to ``events``."""
        self._buffer += text
        while self._buffer:
            if self._block is None:
                starts = [i for i in (self._buffer.find(_OPEN), self._buffer.find(_FENCE)) if i >= 0]
                if not starts:
                    keep = _partial_marker(self._buffer)
                    self._text(self._buffer[: len(self._buffer) - keep], events)
                    self._buffer = self._buffer[len(self._buffer) - keep :]
                    return
                self._text(self._buffer[: min(starts)], events)
                self._buffer = self._buffer[min(starts) :]
                self._block = _OPEN if self._buffer.startswith(_OPEN) else _FENCE
            end_marker = _CLOSE if self._block == _OPEN else _FENCE
            end = self._buffer.find(end_marker, len(self._block))
            if end < 0:
                return
            block, self._buffer = self._buffer[: end + len(end_marker)], self._buffer[end + len(end_marker) :]
            self._finish_block(block[len(self._block) : end], block, events, emit)

    def flush(self, events: list[ModelEvent], emit: Emit) -> None:
        """End of the answer: an unclosed ``<tool_call>`` is still a call (models often drop the tag)."""
        if self._block is not None:
            self._finish_block(self._buffer[len(self._block) :], self._buffer, events, emit)
        else:
            self._text(self._buffer, events)
        self._buffer = ""

    def _finish_block(self, inner: str, whole: str, events: list[ModelEvent], emit: Emit) -> None:
        marker, self._block = self._block, None
        call = _parse(inner.removeprefix("json").strip() if marker == _FENCE else inner.strip())
        if marker == _OPEN:
            # A tagged call is a call even when garbled: the raw text goes on, the loop reports it.
            name, arguments = call if call is not None else ("", inner.strip())
            emit(name, arguments, events)
        elif call is not None and call[0] in self._names:
            emit(call[0], call[1], events)
        else:
            self._text(whole, events)  # an ordinary code block

    @staticmethod
    def _text(text: str, events: list[ModelEvent]) -> None:
        if text:
            events.append(TextDelta(text))


def _parse(text: str) -> tuple[str, str] | None:
    """``(name, arguments JSON text)`` of a call object, or ``None``."""
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    return value["name"], arguments if isinstance(arguments, str) else json.dumps(arguments)
