"""The request body of the Responses API (``POST /responses``) for a `ModelRequest`.

History becomes input items: user text and tool results (``function_call_output``), assistant text and
function calls, and every `RawBlock` this wire produced (reasoning items with their encrypted content, hosted
tool calls, messages and calls that follow them) verbatim and in place, so the server sees its own output
items again with their ids: a reasoning item must be followed by the item it led to, matched by id.

Options ``ModelRequest`` has no field for travel in ``extra_body``, whose keys are Responses body fields:
``tools`` and ``include`` are added to the request's own, ``reasoning`` and ``text`` are merged key by key
(``{"reasoning": {"effort": "high"}}`` keeps the summary asked for), every other key is sent as given.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from openagent.models import ModelRequest, ToolSpec
from openagent.types import (
    AssistantMessage,
    RawBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)

from ._chat import _effort, _result_text, _tool_choice
from ._profiles import OpenAIProfile

__all__ = ["RAW", "build_body", "input_items", "strict_schema"]

logger = logging.getLogger("openagent.openai")

RAW = "openai-responses"
"""`RawBlock.provider` of the blocks this wire keeps verbatim (and the only ones it sends back)."""
_INCLUDE_REASONING = "reasoning.encrypted_content"
_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "max"})
"""The reasoning efforts the Responses API names."""
# JSON-schema keywords strict mode accepts (OpenAI structured outputs, "supported schemas"); a schema with any
# other keyword is sent with `strict: false` rather than refused.
_STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref",
        "$defs", "definitions", "description", "title", "pattern", "format", "multipleOf", "maximum",
        "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
    }
)  # fmt: skip
_NAME = re.compile(r"[^A-Za-z0-9_-]")


# --- the body ----------------------------------------------------------------------------------------------


def build_body(
    request: ModelRequest, model: str, profile: OpenAIProfile, *, summary: bool = True
) -> dict[str, Any]:
    """The JSON body of a streaming Responses request; ``summary=False`` leaves out the reasoning summary."""
    name = request.model or model
    reasoning = profile.is_reasoning(name)
    body: dict[str, Any] = {"model": name, "input": input_items(request.messages), "stream": True}
    if request.system:
        body["instructions"] = request.system
    if profile.store is not None:
        body["store"] = profile.store
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    _sampling(request, body, reasoning)
    _reasoning(request, profile, body, reasoning, summary)
    if request.tools:
        _tools(request, profile, body)
    if request.output_format and profile.supports_json_schema:
        body["text"] = {"format": _format(request.output_format)}
    if request.user:
        body["user"] = request.user
    if request.metadata:
        # Metadata values are strings on this API (at most 16 keys): other values are sent as JSON text.
        metadata = request.metadata.items()
        body["metadata"] = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in metadata}
    if request.extra_body:
        _merge(body, request.extra_body)
    return body


def _tools(request: ModelRequest, profile: OpenAIProfile, body: dict[str, Any]) -> None:
    body["tools"] = [function_tool(t) for t in request.tools]
    if (choice := _choice(request.tool_choice, profile)) is not None:
        body["tool_choice"] = choice
    if request.parallel_tool_calls is not None and profile.accepts_parallel_tool_calls:
        body["parallel_tool_calls"] = request.parallel_tool_calls


def _reasoning(
    request: ModelRequest, profile: OpenAIProfile, body: dict[str, Any], reasoning: bool, summary: bool
) -> None:
    """``reasoning`` {effort, summary} and the encrypted reasoning, for a model that reasons.

    The request's ``effort`` goes as it is when the API knows the word; a ``thinking`` budget becomes a level
    as on the chat wire. A server whose profile names no reasoning models gets the effort asked for too.
    """
    options: dict[str, Any] = {}
    effort = request.effort if request.effort in _EFFORTS else _effort(request)
    if effort is not None and (reasoning or not profile.reasoning_models):
        options["effort"] = "none" if effort == "off" else effort
    elif effort is not None:
        logger.debug("openai: %s is no reasoning model; reasoning effort not sent", request.model)
    if reasoning and summary and profile.reasoning_summary:
        options["summary"] = profile.reasoning_summary
    if options:
        body["reasoning"] = options
    if reasoning and profile.store is False:  # nothing kept on the server: the reasoning travels with history
        body["include"] = [_INCLUDE_REASONING]


def _sampling(request: ModelRequest, body: dict[str, Any], reasoning: bool) -> None:
    for field in ("temperature", "top_p"):
        if (value := getattr(request, field)) is not None:
            if reasoning:  # reasoning models refuse sampling parameters ("Unsupported parameter")
                logger.debug("openai: %s is not sent to a reasoning model", field)
            else:
                body[field] = value
    if request.stop:
        logger.debug("openai: the Responses API has no stop sequences; %r not sent", request.stop)


def _choice(choice: str | dict[str, Any] | None, profile: OpenAIProfile) -> Any:
    """`_chat._tool_choice`'s decision, in the Responses shape for a named function."""
    chosen = _tool_choice(choice, profile)
    if isinstance(chosen, dict):
        return {"type": "function", "name": chosen["function"]["name"]}
    return chosen


def _format(output_format: dict[str, Any]) -> dict[str, Any]:
    schema = output_format.get("schema", {})
    name = _NAME.sub("_", str(output_format.get("name") or "output"))[:64] or "output"
    strict = strict_schema(schema)
    return {"type": "json_schema", "name": name, "schema": strict or schema, "strict": strict is not None}


def function_tool(spec: ToolSpec) -> dict[str, Any]:
    """A function tool, strict when its schema allows it (the API's default is strict and refuses others)."""
    strict = strict_schema(spec.input_schema)
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": strict or spec.input_schema,
        "strict": strict is not None,
    }


def _merge(body: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if key == "tools" and isinstance(value, list):
            body["tools"] = [*body.get("tools", []), *value]
        elif key == "include" and isinstance(value, list):
            have = body.get("include", [])
            body["include"] = [*have, *(v for v in value if v not in have)]
        elif key in ("reasoning", "text") and isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value


# --- strict schemas ----------------------------------------------------------------------------------------


class _NotStrict(Exception):
    pass


def strict_schema(schema: Any) -> dict[str, Any] | None:
    """``schema`` in the form strict mode takes, or ``None`` when it cannot be without changing its meaning.

    Strict mode needs every object closed (``additionalProperties: false``) with every property required, and
    only the keywords it supports. A schema that says nothing about extra properties is closed here (a call
    with arguments the tool does not declare is no call the tool can take); one with an optional property,
    an open object or another keyword is left as it is, and sent with ``strict: false``.
    """
    try:
        result = _strict(schema, root=True)
    except (_NotStrict, RecursionError):
        return None
    return result if isinstance(result, dict) else None


def _strict(node: Any, *, root: bool = False) -> Any:
    if not isinstance(node, dict) or not node.keys() <= _STRICT_KEYWORDS:
        raise _NotStrict
    out = dict(node)
    if "properties" in node or node.get("type") == "object":
        properties = node.get("properties", {} if root else None)
        required = node.get("required", [])
        closed = node.get("additionalProperties", False) is False
        if not isinstance(properties, dict) or not isinstance(required, list) or not closed:
            raise _NotStrict
        if set(required) != set(properties):
            raise _NotStrict  # an optional property: strict mode would make the model always send it
        out["properties"] = {key: _strict(value) for key, value in properties.items()}
        out["required"], out["additionalProperties"] = list(properties), False
    if "items" in node:
        out["items"] = _strict(node["items"])
    if "anyOf" in node:
        if not isinstance(node["anyOf"], list):
            raise _NotStrict
        out["anyOf"] = [_strict(option) for option in node["anyOf"]]
    for defs in ("$defs", "definitions"):
        if defs in node:
            if not isinstance(node[defs], dict):
                raise _NotStrict
            out[defs] = {key: _strict(value) for key, value in node[defs].items()}
    return out


# --- history as input items --------------------------------------------------------------------------------


def input_items(history: Sequence[UserMessage | AssistantMessage]) -> list[dict[str, Any]]:
    """Core messages as Responses input items, in order."""
    items: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            items += _assistant(message.content)
        elif isinstance(message.content, str):
            items.append(_message("user", message.content))
        else:
            items += _user(message.content)
    return items


def _user(blocks: Sequence[Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    text: list[str] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            text.append(block.text)
            continue
        if text:  # the text so far, before what follows it
            items.append(_message("user", "\n".join(text)))
            text = []
        if isinstance(block, ToolResultBlock):
            items.append(
                {"type": "function_call_output", "call_id": block.tool_use_id, "output": _result_text(block)}
            )
    if text:
        items.append(_message("user", "\n".join(text)))
    return items


def _assistant(content: Sequence[Any]) -> list[dict[str, Any]]:
    raw = [b.data for b in content if isinstance(b, RawBlock) and b.provider == RAW]
    # Calls kept whole (they followed a reasoning item: their ids pair them with it) go as kept, once.
    kept_calls = {d.get("call_id") for d in raw if d.get("type") == "function_call"}
    items: list[dict[str, Any]] = []
    for position, block in enumerate(content):
        if isinstance(block, RawBlock):
            if block.provider == RAW:
                items.append(block.data)
        elif isinstance(block, TextBlock):
            after = content[position + 1] if position + 1 < len(content) else None
            if _is_raw(after, "message"):
                continue  # the message item right after it holds this text, with its id
            if block.text:
                items.append(_message("assistant", block.text))
        elif isinstance(block, ToolUseBlock | ToolUseError) and block.id not in kept_calls:
            # A garbled call goes back as the model wrote it, so the error result answers a call it knows.
            arguments = json.dumps(block.input) if isinstance(block, ToolUseBlock) else block.raw_data
            call = {"type": "function_call", "call_id": block.id, "name": block.name, "arguments": arguments}
            items.append(call)
    return _paired(items)


def _message(role: str, text: str) -> dict[str, Any]:
    # `type` is optional for OpenAI; llama.cpp's server refuses an assistant item without it ("Cannot
    # determine type of 'item'", tests/integration/test_responses.py).
    return {"type": "message", "role": role, "content": text}


def _is_raw(block: Any, kind: str) -> bool:
    return isinstance(block, RawBlock) and block.provider == RAW and block.data.get("type") == kind


def _paired(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Leave out a reasoning item that nothing follows (a turn cut short while reasoning): the API refuses a
    reasoning item without the item it led to.
    """  # noqa: D205
    last = max((n for n, item in enumerate(items) if item.get("type") != "reasoning"), default=-1)
    return [item for n, item in enumerate(items) if n < last or item.get("type") != "reasoning"]
