"""The Anthropic messages request body: core history and options in, the JSON the API takes out.

See `openagent_anthropic._messages` for how options travel in ``ModelRequest.extra_body``. Blocks core has
no type of its own for (``redacted_thinking``, server tool blocks) come back as `RawBlock`s and are sent
back verbatim, in their place; a `RawBlock` from another provider is left off the wire.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from openagent.errors import ConfigError
from openagent.models import ModelRequest
from openagent.types import (
    AssistantMessage,
    RawBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)

__all__ = ["build_body", "default_max_tokens"]

logger = logging.getLogger("openagent.anthropic")
_EPHEMERAL = {"type": "ephemeral"}
# Tool ids must match ^[a-zA-Z0-9_-]+$; ids minted by other providers (``functions.get:0``) are rewritten.
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def default_max_tokens(model: str) -> int:
    """``max_tokens`` is required by the API: a default that every model of the family accepts."""
    name = model.lower()
    if name.startswith(("claude-3-haiku", "claude-3-opus", "claude-3-sonnet")):
        return 4096
    if name.startswith(("claude-3-5", "claude-3-7")):
        return 8192
    if "claude-" in name:
        return 32_000
    return 4096  # compatible servers (llama.cpp …): their context is the real limit


# --- request ------------------------------------------------------------------------------------------------


def build_body(request: ModelRequest) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON body and extra headers for ``request`` (see the module docstring for ``extra_body``)."""
    extra = {**_native(request), **(request.extra_body or {})}
    betas = [*(request.betas or ()), *(extra.pop("betas", None) or ())]
    headers = {"anthropic-beta": ",".join(dict.fromkeys(betas))} if betas else {}
    # No cache_control key: our own breakpoints; a value: the API's automatic caching; None: no caching.
    marker: dict[str, Any] | None = _EPHEMERAL if "cache_control" not in extra else None
    if extra.get("cache_control", 0) is None:
        del extra["cache_control"]
    body: dict[str, Any] = {"model": request.model, "messages": _messages(request.messages, marker)}
    max_tokens = request.max_tokens
    if max_tokens is None:
        max_tokens = default_max_tokens(request.model)
        budget = (extra.get("thinking") or {}).get("budget_tokens")
        if isinstance(budget, int) and budget >= max_tokens:
            max_tokens = budget + default_max_tokens(request.model)  # the API wants budget < max_tokens
    body["max_tokens"] = max_tokens
    if request.system:
        body["system"] = (
            [{"type": "text", "text": request.system, "cache_control": marker}] if marker else request.system
        )
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        if marker:
            tools[-1]["cache_control"] = marker
        body["tools"] = tools
    _sampling(request, body)
    for key, value in extra.items():  # verbatim, but merged with what the request itself set:
        if key == "output_config" and isinstance(value, dict) and "output_config" in body:
            body["output_config"] = {**body["output_config"], **value}  # format + effort
        elif key == "tools" and isinstance(value, list):
            body["tools"] = [*body.get("tools", ()), *value]  # server tools (web_search …) after ours
        else:
            body[key] = value
    return body, headers


def _native(request: ModelRequest) -> dict[str, Any]:
    """The request's reasoning and user fields as Messages API body fields (``extra_body`` wins)."""
    fields: dict[str, Any] = {}
    if request.thinking:
        fields["thinking"] = dict(request.thinking)
    if request.effort:
        fields["output_config"] = {"effort": request.effort}
    if request.user:
        fields["metadata"] = {"user_id": request.user}
    return fields


def _sampling(request: ModelRequest, body: dict[str, Any]) -> None:
    choice = _tool_choice(request.tool_choice, request.parallel_tool_calls)
    if choice is not None:
        body["tool_choice"] = choice
    for key, value in (("temperature", request.temperature), ("top_p", request.top_p)):
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if request.output_format is not None:
        schema = request.output_format.get("schema", request.output_format)
        body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}


def _tool_choice(choice: str | dict[str, Any] | None, parallel: bool | None) -> dict[str, Any] | None:
    if choice is None:
        result: dict[str, Any] | None = {"type": "auto"} if parallel is False else None
    elif isinstance(choice, dict):
        result = dict(choice)
        if result.get("type") == "function":  # the OpenAI form {"type": "function", "function": {"name"}}
            result = {"type": "tool", "name": result.get("function", {}).get("name", "")}
    elif choice in ("auto", "none", "any"):
        result = {"type": choice}
    elif choice == "required":
        result = {"type": "any"}
    else:  # a bare tool name
        result = {"type": "tool", "name": choice}
    if result is not None and parallel is False and result["type"] != "none":
        result["disable_parallel_tool_use"] = True
    return result


def _messages(
    history: list[UserMessage | AssistantMessage], marker: dict[str, Any] | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in history:
        role = "user" if isinstance(message, UserMessage) else "assistant"
        blocks = _user_blocks(message) if isinstance(message, UserMessage) else _assistant_blocks(message)
        if not blocks:
            continue  # the API rejects empty content; an empty turn carries nothing to replay
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # consecutive same-role turns are one turn on this API
            if role == "user":  # tool_result blocks must open a user turn, before any text
                out[-1]["content"].sort(key=lambda b: b.get("type") != "tool_result")
        else:
            out.append({"role": role, "content": blocks})
    if marker and out:
        for block in reversed(out[-1]["content"]):
            if block["type"] not in ("thinking", "redacted_thinking"):  # thinking cannot carry cache_control
                block["cache_control"] = marker
                break
    return out


def _user_blocks(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    results: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": _safe_id(block.tool_use_id)}
            if block.content is not None:
                result["content"] = block.content
            if block.is_error is not None:
                result["is_error"] = block.is_error
            results.append(result)
        elif isinstance(block, TextBlock):
            if block.text:
                texts.append({"type": "text", "text": block.text})
        else:
            raise ConfigError(f"a user message cannot carry a {block.type!r} block to the Anthropic API")
    return results + texts  # tool_result blocks first: the API rejects text before them


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            # Reasoning without a signature (from another provider's model) cannot be replayed as thinking:
            # the API verifies signatures. It stays in the transcript and is left off the wire.
            if block.signature:
                blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif isinstance(block, RawBlock):
            if block.provider == "anthropic":
                blocks.append(dict(block.data))  # verbatim: redacted_thinking, server tool blocks, …
            else:  # another wire format's block means nothing to this API
                logger.debug("anthropic: leaving a %s raw block off the wire", block.provider)
        elif isinstance(block, ToolUseBlock):
            call = {"type": "tool_use", "id": _safe_id(block.id), "name": block.name, "input": block.input}
            blocks.append(call)
        elif isinstance(block, ToolUseError):
            # A garbled call is replayed as a call with empty input, so the loop's error tool_result that
            # follows has its tool_use to answer; the raw text stays in the transcript, not on the wire.
            name = _BAD_ID_CHARS.sub("_", block.name) or "invalid_tool_call"
            blocks.append({"type": "tool_use", "id": _safe_id(block.id), "name": name, "input": {}})
        else:
            raise ConfigError(f"an assistant message cannot carry a {block.type!r} block to this API")
    return blocks


def _safe_id(tool_id: str) -> str:
    return _BAD_ID_CHARS.sub("_", tool_id) or "toolu_empty"
