"""Responses API event streams, built as OpenAI sends them (the shapes of ``openai.types.responses``).

``sse(*events)`` encodes events the way the API does (``event: <type>`` then ``data: <json>``, a
``sequence_number`` on each); the builders return the events of one output item, from its
``response.output_item.added`` to its ``response.output_item.done``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "RESPONSE",
    "completed",
    "created",
    "error_event",
    "failed",
    "function_call",
    "hosted_call",
    "incomplete",
    "message",
    "reasoning",
    "sse",
    "usage",
]

RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1741290958, "model": "gpt-5"}


def sse(*events: dict[str, Any], named: bool = True) -> bytes:
    """The event-stream body of ``events`` (``named=False``: no ``event:`` lines, as some proxies send)."""
    out = []
    for n, event in enumerate(events):
        data = json.dumps({**event, "sequence_number": n})
        out.append(f"event: {event['type']}\ndata: {data}\n\n" if named else f"data: {data}\n\n")
    return "".join(out).encode()


def created() -> list[dict[str, Any]]:
    start = {**RESPONSE, "status": "in_progress", "output": [], "usage": None}
    return [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]


def usage(input_tokens: int, output_tokens: int, *, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def _item(
    index: int, item: dict[str, Any], opened: dict[str, Any], middle: list[dict[str, Any]]
) -> list[Any]:
    ids = {"item_id": item["id"], "output_index": index}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": opened},
        *({**ids, **event} for event in middle),
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def message(
    index: int, pieces: list[str], *, item_id: str = "msg_1", annotations: list[Any] | None = None
) -> list[dict[str, Any]]:
    text = "".join(pieces)
    part = {"type": "output_text", "text": text, "annotations": annotations or [], "logprobs": []}
    item = {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
    opened = {**item, "status": "in_progress", "content": []}
    middle = [
        {"type": "response.content_part.added", "content_index": 0, "part": {**part, "text": ""}},
        *(
            {"type": "response.output_text.delta", "content_index": 0, "delta": p, "logprobs": []}
            for p in pieces
        ),
        {"type": "response.output_text.done", "content_index": 0, "text": text, "logprobs": []},
        {"type": "response.content_part.done", "content_index": 0, "part": part},
    ]
    return _item(index, item, opened, middle)


def function_call(
    index: int, call_id: str, name: str, pieces: list[str], *, item_id: str | None = None
) -> list[dict[str, Any]]:
    arguments = "".join(pieces)
    item = {
        "id": item_id or f"fc_{call_id}",
        "type": "function_call",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }
    opened = {**item, "status": "in_progress", "arguments": ""}
    middle = [
        *({"type": "response.function_call_arguments.delta", "delta": p} for p in pieces),
        {"type": "response.function_call_arguments.done", "arguments": arguments},
    ]
    return _item(index, item, opened, middle)


def reasoning(
    index: int, parts: list[list[str]], *, item_id: str = "rs_1", encrypted: str | None = "gAAAAABo-enc"
) -> list[dict[str, Any]]:
    """A reasoning item whose summary streams in ``parts`` (each a list of deltas)."""
    summary = [{"type": "summary_text", "text": "".join(p)} for p in parts]
    item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": summary}
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    opened = {**item, "summary": []}
    middle: list[dict[str, Any]] = []
    for n, pieces in enumerate(parts):
        empty = {"type": "summary_text", "text": ""}
        middle.append({"type": "response.reasoning_summary_part.added", "summary_index": n, "part": empty})
        middle += [
            {"type": "response.reasoning_summary_text.delta", "summary_index": n, "delta": p} for p in pieces
        ]
        middle.append(
            {"type": "response.reasoning_summary_text.done", "summary_index": n, "text": "".join(pieces)}
        )
        middle.append(
            {"type": "response.reasoning_summary_part.done", "summary_index": n, "part": summary[n]}
        )
    return _item(index, item, opened, middle)


def hosted_call(index: int, item: dict[str, Any], progress: list[str]) -> list[dict[str, Any]]:
    """A hosted tool's call: its progress events (``in_progress``, ``searching``, ``completed`` …)."""
    opened = {**item, "status": "in_progress"}
    kind = item["type"]
    return _item(index, item, opened, [{"type": f"response.{kind}.{step}"} for step in progress])


def _final(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e.get("type") == "response.output_item.done"]


def completed(items: list[dict[str, Any]], used: dict[str, Any] | None) -> dict[str, Any]:
    """``response.completed`` with the output of the item events in ``items``."""
    response = {**RESPONSE, "status": "completed", "output": _final(items), "usage": used}
    return {"type": "response.completed", "response": response}


def incomplete(items: list[dict[str, Any]], used: dict[str, Any] | None, reason: str) -> dict[str, Any]:
    response = {
        **RESPONSE,
        "status": "incomplete",
        "incomplete_details": {"reason": reason},
        "output": _final(items),
        "usage": used,
    }
    return {"type": "response.incomplete", "response": response}


def failed(code: str, text: str) -> dict[str, Any]:
    response = {**RESPONSE, "status": "failed", "error": {"code": code, "message": text}, "output": []}
    return {"type": "response.failed", "response": response}


def error_event(code: str | None, text: str) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": text, "param": None}
