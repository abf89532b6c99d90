"""Anthropic messages streams, one per quirk: the documented shapes and what compatible servers send."""

from __future__ import annotations

import json
from typing import Any


def sse(*events: tuple[str | None, Any], crlf: bool = False) -> bytes:
    """Serialise ``(event name or None, data)`` pairs as a server-sent-event stream."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    body = "".join(out)
    return (body.replace("\n", "\r\n") if crlf else body).encode()


def start(usage: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    message: dict[str, Any] = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-test",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 25, "output_tokens": 1},
    }
    return "message_start", {"type": "message_start", "message": message}


def block(index: int, content: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": fields}


def text(index: int, value: str) -> tuple[str, dict[str, Any]]:
    return delta(index, type="text_delta", text=value)


def args(index: int, value: str) -> tuple[str, dict[str, Any]]:
    return delta(index, type="input_json_delta", partial_json=value)


def stop_block(index: int) -> tuple[str, dict[str, Any]]:
    return "content_block_stop", {"type": "content_block_stop", "index": index}


def end(
    reason: str | None, output: int = 15, sequence: str | None = None, **usage: Any
) -> list[tuple[str, Any]]:
    return [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": sequence},
                "usage": {"output_tokens": output, **usage},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


PING = ("ping", {"type": "ping"})


def assemble(events: list[Any]) -> list[Any]:
    """Content blocks from a turn's events, built by the loop's own turn builder."""
    from openagent._turn import TurnBuilder

    builder = TurnBuilder(partial=False)
    for event in events:
        builder.feed(event)
    return builder.content()
