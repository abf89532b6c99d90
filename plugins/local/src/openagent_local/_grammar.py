"""Tool calls a small model cannot get wrong: the engine's sampler is held to a grammar of valid calls.

The local provider speaks the text tool-call protocol (tools described in the system prompt, a call written
as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, parsed by the openai plugin). When a turn
must call a tool, the request carries a grammar (llguidance's Lark syntax, which the ``xllamacpp`` build
of llama.cpp takes in the request's ``grammar`` field) that admits only such a block whose JSON names one
of the offered tools and matches that tool's input schema: even a 135M model then writes a valid call.
"""

from __future__ import annotations

import json
from typing import Any

from openagent.models import ModelRequest
from openagent.types import ToolResultBlock, UserMessage

__all__ = ["forced_call_grammar", "must_call"]


def must_call(request: ModelRequest) -> str | None:
    """The tool this turn must call (``""``: any offered one), or ``None`` when the model may answer.

    ``tool_choice`` ``"required"``/``"any"`` or a named tool forces a call — on a turn that answers the
    user, not on one that answers tool results: forcing every turn would leave the model no way to finish
    (the reset-after-use rule of the OpenAI Agents SDK).
    """
    choice = request.tool_choice
    if not request.tools or choice is None or choice in ("auto", "none"):
        return None
    last = request.messages[-1] if request.messages else None
    if isinstance(last, UserMessage) and not isinstance(last.content, str):
        if any(isinstance(block, ToolResultBlock) for block in last.content):
            return None
    if isinstance(choice, dict):
        name = choice.get("name") or choice.get("function", {}).get("name")
        return str(name) if name else ""
    return "" if choice in ("required", "any") else None


def forced_call_grammar(request: ModelRequest, name: str = "") -> str:
    """A grammar admitting exactly one ``<tool_call>`` block for ``name`` (or any offered tool)."""
    tools = [t for t in request.tools if not name or t.name == name] or list(request.tools)
    calls: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": _closed(t.input_schema)},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    # Compact JSON and no undeclared arguments: with free whitespace or free keys a small model can pad a
    # call (newlines, invented "type" keys) until max_tokens cuts it in half, and a cut call is no call.
    top: dict[str, Any] = calls[0] if len(calls) == 1 else {"anyOf": calls}
    top = {"x-guidance": {"whitespace_flexible": False}, **top}
    schema = json.dumps(top, separators=(",", ":"))
    return f'%llguidance {{}}\nstart: "<tool_call>\\n" call "\\n</tool_call>"\ncall: %json {schema}\n'


def _closed(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's argument schema, admitting no argument it does not declare unless it says otherwise."""
    if not schema:
        return {"type": "object"}
    if schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema:
        return {**schema, "additionalProperties": False}
    return schema
