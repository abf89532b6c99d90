"""One-line descriptions of tool calls and tool results, shared by ``run`` (stderr) and ``chat``."""

from __future__ import annotations

import json
from typing import Any

from openagent import ResultMessage, ToolResultBlock, ToolUseBlock, ToolUseError

__all__ = ["call_line", "failure_line", "result_line", "short"]

WIDTH = 100


def short(text: str, width: int = WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _arguments(arguments: dict[str, Any]) -> str:
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={shown!r}" if isinstance(value, str) else f"{key}={shown}")
    return ", ".join(parts)


def call_line(block: ToolUseBlock | ToolUseError) -> str:
    """``→ Read(file_path='a.py')``, or ``✗ Read: garbled call: …`` for a call the model garbled."""
    if isinstance(block, ToolUseError):
        return short(f"✗ {block.name or '?'}: garbled call {short(block.raw_data, 40)!r}: {block.error}")
    return short(f"→ {block.name}({_arguments(block.input)})")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = [
        part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
    ]
    return "\n".join(texts) if texts else json.dumps(content, ensure_ascii=False)


def result_line(block: ToolResultBlock, name: str = "") -> str:
    """``← Read: first line … (12 lines)``, or ``✗ Read: the error`` for an error result."""
    text = _content_text(block.content)
    lines = text.count("\n") + 1 if text else 0
    label = name or block.tool_use_id
    if block.is_error:
        return short(f"✗ {label}: {text or 'failed'}")
    more = f" ({lines} lines)" if lines > 1 else ""
    first = text.splitlines()[0] if text else "(no output)"
    return short(f"← {label}: {short(first, 60)}{more}")


_WHY = {
    "error_max_turns": "stopped after reaching the turn limit (--max-turns)",
    "error_max_budget_usd": "stopped after reaching the budget",
    "error_max_structured_output_retries": "the model never produced output matching --output-schema",
}


def failure_line(result: ResultMessage) -> str:
    """The one line a failed run prints on stderr."""
    why = _WHY.get(result.subtype) or result.result or result.subtype
    return f"openagent: error: {short(why, 300)}"
