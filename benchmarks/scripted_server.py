"""A loopback model server that replays scripted turns, for benchmarks and fault-injection tests.

It speaks the OpenAI chat-completions (``POST …/chat/completions``), OpenAI Responses (``POST …/responses``)
and Anthropic messages (``POST …/messages``) wire formats, streaming (SSE over chunked HTTP/1.1) and not,
with keep-alive. It is
stdlib only (asyncio streams and a hand-written minimal HTTP/1.1), so the server costs little next to the
clients it measures.

A `Turn` is one model response: text deltas, thinking deltas, tool calls whose arguments arrive in
fragments, usage, a stop reason, an optional per-chunk delay, and optionally a fault (see `FAULTS`). A
`Script` is a list of turns, chosen per request by

1. the ``x-script`` request header, else
2. the request's ``model`` name, else
3. the default queue (`ScriptedServer.enqueue`).

A script in ``history`` mode picks the turn by the number of assistant turns in the request (assistant
messages; on the Responses wire, runs of assistant output items) (so any number of concurrent conversations
can share one script); in ``queue`` mode turns are consumed in order
(so ``[Turn(fault="429"), Turn(text=...)]`` means "rate-limit once, then answer").

Use it in-process (it runs its own asyncio loop in a background thread, so asyncio and trio tests alike can
talk to it)::

    with ScriptedServer() as server:                    # or: async with ScriptedServer() as server
        server.add_script("m", [Turn(text=["Hel", "lo"])])
        ...  # point a client at server.url (e.g. http://127.0.0.1:PORT/v1)
        server.requests[0].body                          # what the client sent

or as a process: ``python benchmarks/scripted_server.py --port 8123 --preset bench``; scripts are then
registered through ``POST /_control/scripts`` (``{"name", "mode", "turns": [turn-as-dict, …]}``), recorded
requests read from ``GET /_control/requests``, and everything cleared with ``POST /_control/reset``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "FAULTS",
    "RecordedRequest",
    "Script",
    "ScriptedServer",
    "ToolCall",
    "Turn",
    "bench_conversation",
    "closed_port",
    "main",
    "render",
]

FAULTS = (
    "drop",  # read the request, close the connection without any response (a connection error)
    "reset",  # send part of the response, then a TCP RST
    "stall",  # send nothing more (fault_after=None: not even a status line) until the server stops
    "garbage",  # a 200 stream whose events are not JSON
    "truncated_tool_json",  # tool-call arguments cut mid-JSON, the stream otherwise well formed
    "error_event",  # an error object / `event: error` inside a 200 stream, then the stream ends
    "empty",  # a 200 with an empty body
    "html",  # a 200 whose body is an HTML error page
    "eof",  # the stream ends cleanly but early: no finish reason, no [DONE] / message_stop
)
"""Fault names a `Turn` accepts; an HTTP status as a string ("429", "500", "503", "529") is one too."""


@dataclass
class ToolCall:
    """A tool call whose JSON arguments are streamed in ``fragments`` pieces (id and name on the first)."""

    name: str
    arguments: str | dict[str, Any] = "{}"
    id: str | None = None
    fragments: int = 1

    def argument_text(self) -> str:
        """The arguments as the JSON text the model "writes"."""
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)

    def pieces(self) -> list[str]:
        """The argument text split into ``fragments`` nearly equal, non-empty pieces."""
        text = self.argument_text()
        n = max(1, min(self.fragments, len(text)))
        size, extra = divmod(len(text), n)
        out, start = [], 0
        for i in range(n):
            end = start + size + (1 if i < extra else 0)
            out.append(text[start:end])
            start = end
        return out or [""]


@dataclass
class Turn:
    """One scripted model response (or failure)."""

    text: list[str] | str = field(default_factory=list)
    """Answer text deltas, in order (a plain string is one delta)."""
    thinking: list[str] | str = field(default_factory=list)
    """Reasoning deltas, streamed before the text."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop: str | None = None
    """Normalised stop reason (``end_turn``, ``tool_use``, ``max_tokens``); default from the content."""
    usage: tuple[int, int] | None = (10, 0)
    """(input tokens, output tokens); output 0 means "one per delta". ``None`` sends no usage."""
    fault: str | None = None
    """One of `FAULTS`, or an HTTP status such as ``"429"``."""
    fault_after: int | None = None
    """How many stream chunks go out before the fault; ``None`` means halfway (``stall``: before any)."""
    retry_after: float | None = None
    """``Retry-After`` seconds sent with a status fault (also as ``retry-after-ms``)."""
    message: str = "scripted failure"
    """The error message of a status or error-event fault."""
    delay: float | None = None
    """Seconds between stream chunks (``None``: the server's default)."""
    reasoning_field: str = "reasoning_content"
    """The OpenAI-format delta field that carries thinking (``reasoning_content`` or ``reasoning``)."""
    signature: str = ""
    """Anthropic-format signature of the thinking block."""

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            self.text = [self.text]
        if isinstance(self.thinking, str):
            self.thinking = [self.thinking]
        self.tool_calls = [tc if isinstance(tc, ToolCall) else ToolCall(**tc) for tc in self.tool_calls]
        if self.usage is not None:
            self.usage = (int(self.usage[0]), int(self.usage[1]))
        if self.fault is not None and self.fault not in FAULTS and not self.fault.isdigit():
            raise ValueError(f"unknown fault {self.fault!r}; expected one of {FAULTS} or an HTTP status")

    @property
    def stop_reason(self) -> str:
        """The normalised stop reason this turn ends with."""
        return self.stop or ("tool_use" if self.tool_calls else "end_turn")

    def output_tokens(self) -> int:
        """Output tokens reported in usage."""
        assert self.usage is not None
        if self.usage[1]:
            return self.usage[1]
        pieces = sum(len(tc.pieces()) for tc in self.tool_calls)
        return len(self.text) + len(self.thinking) + pieces


@dataclass
class Script:
    """Turns served to the requests that select this script."""

    turns: list[Turn]
    mode: Literal["history", "queue"] = "history"
    """``history``: turn = number of assistant messages in the request; ``queue``: consume in order."""
    _queue: deque[Turn] = field(default_factory=deque, repr=False)

    def __post_init__(self) -> None:
        self.turns = [t if isinstance(t, Turn) else Turn(**t) for t in self.turns]
        if self.mode not in ("history", "queue"):
            raise ValueError(f"unknown script mode {self.mode!r}")
        self._queue = deque(self.turns)

    def next_turn(self, body: dict[str, Any]) -> Turn | None:
        """The turn that answers ``body``, or ``None`` when the script has none left."""
        if self.mode == "queue":
            return self._queue.popleft() if self._queue else None
        messages = body.get("messages")
        if isinstance(messages, list):
            index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        else:
            index = _responses_turns(body.get("input"))
        return self.turns[index] if index < len(self.turns) else None


def _responses_turns(items: Any) -> int:
    """Assistant turns in a Responses ``input``: runs of output items (messages, calls, reasoning …)."""
    turns, inside = 0, False
    for item in items if isinstance(items, list) else []:
        mine = isinstance(item, dict) and (
            item.get("role") == "assistant"
            or item.get("type") not in (None, "message", "function_call_output", "item_reference")
        )
        turns += mine and not inside
        inside = bool(mine)
    return turns


@dataclass
class RecordedRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The JSON body (the raw text when it was not JSON, ``None`` when empty)."""
    script: str | None
    """Name of the script that answered it (``""`` for the default queue, ``None`` for none)."""


def bench_conversation(deltas: int = 300, fragments: int = 8) -> list[Turn]:
    """The benchmark conversation: a tool call in fragments, then (after the tool ran) a ``deltas`` answer."""
    call = ToolCall(
        "lookup", {"city": "Paris", "units": "metric", "days": 3}, id="call_bench_1", fragments=fragments
    )
    words = [f"word{i} " for i in range(deltas)]
    return [Turn(tool_calls=[call], usage=(50, 20)), Turn(text=words, usage=(80, deltas))]


Wire = Literal["openai", "anthropic", "responses"]


def render(turn: Turn, wire: Wire = "openai", model: str = "scripted") -> bytes:
    """The event-stream body the server sends for ``turn`` (what a parser sees after HTTP de-chunking)."""
    return b"".join(_CHUNKS[wire](turn, model, turn.fault == "truncated_tool_json"))


def closed_port() -> int:
    """A loopback port with nothing listening on it (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- rendering turns into wire bytes ----------------------------------------------------------------------

_OPENAI_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _sse(data: str, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def _openai_chunks(turn: Turn, model: str, truncate_tools: bool) -> list[bytes]:
    base = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(_dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({turn.reasoning_field: piece}) for piece in turn.thinking]
    out += [chunk({"content": piece}) for piece in turn.text]
    for index, call in enumerate(turn.tool_calls):
        pieces = call.pieces()
        if truncate_tools:
            pieces = _truncate(pieces)
        call_id = call.id or f"call_scripted_{index}"
        for n, piece in enumerate(pieces):
            if n == 0:
                fn = {"name": call.name, "arguments": piece}
                out.append(
                    chunk(
                        {"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": fn}]}
                    )
                )
            else:
                out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, _OPENAI_FINISH.get(turn.stop_reason, turn.stop_reason)))
    if turn.usage is not None:
        inp, outp = turn.usage[0], turn.output_tokens()
        usage = {"prompt_tokens": inp, "completion_tokens": outp, "total_tokens": inp + outp}
        out.append(_sse(_dumps({**base, "choices": [], "usage": usage})))
    out.append(b"data: [DONE]\n\n")
    return out


def _truncate(pieces: list[str]) -> list[str]:
    text = "".join(pieces)
    cut = text[: max(1, len(text) // 2)]
    size = max(1, len(cut) // max(1, len(pieces)))
    return [cut[i : i + size] for i in range(0, len(cut), size)]


def _openai_message(turn: Turn, model: str, truncate_tools: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(turn.text) or None}
    if turn.thinking:
        message[turn.reasoning_field] = "".join(turn.thinking)
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_scripted_{i}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": "".join(_truncate(call.pieces()))
                    if truncate_tools
                    else call.argument_text(),
                },
            }
            for i, call in enumerate(turn.tool_calls)
        ]
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _OPENAI_FINISH.get(turn.stop_reason)}],
    }
    if turn.usage is not None:
        inp, outp = turn.usage[0], turn.output_tokens()
        body["usage"] = {"prompt_tokens": inp, "completion_tokens": outp, "total_tokens": inp + outp}
    return body


def _anthropic_chunks(turn: Turn, model: str, truncate_tools: bool) -> list[bytes]:
    inp = turn.usage[0] if turn.usage is not None else 0
    start = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": inp, "output_tokens": 1},
    }
    out = [_sse(_dumps({"type": "message_start", "message": start}), "message_start")]
    index = 0

    def block(content_block: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append(
            _sse(
                _dumps({"type": "content_block_start", "index": index, "content_block": content_block}),
                "content_block_start",
            )
        )
        for delta in deltas:
            out.append(
                _sse(
                    _dumps({"type": "content_block_delta", "index": index, "delta": delta}),
                    "content_block_delta",
                )
            )
        out.append(_sse(_dumps({"type": "content_block_stop", "index": index}), "content_block_stop"))
        index += 1

    if turn.thinking:
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in turn.thinking]
        if turn.signature:
            deltas.append({"type": "signature_delta", "signature": turn.signature})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if turn.text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": piece} for piece in turn.text])
    for i, call in enumerate(turn.tool_calls):
        pieces = _truncate(call.pieces()) if truncate_tools else call.pieces()
        block(
            {"type": "tool_use", "id": call.id or f"toolu_scripted_{i}", "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": piece} for piece in pieces],
        )
    usage = {"output_tokens": turn.output_tokens() if turn.usage is not None else 0}
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
        "usage": usage,
    }
    out.append(_sse(_dumps(delta), "message_delta"))
    out.append(_sse(_dumps({"type": "message_stop"}), "message_stop"))
    return out


def _anthropic_message(turn: Turn, model: str, truncate_tools: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.thinking:
        content.append({"type": "thinking", "thinking": "".join(turn.thinking), "signature": turn.signature})
    if turn.text:
        content.append({"type": "text", "text": "".join(turn.text)})
    for i, call in enumerate(turn.tool_calls):
        args: Any = (
            call.arguments if isinstance(call.arguments, dict) else json.loads(call.argument_text() or "{}")
        )
        if truncate_tools:
            args = "".join(_truncate(call.pieces()))  # not an object: the garbling this fault is about
        content.append(
            {"type": "tool_use", "id": call.id or f"toolu_scripted_{i}", "name": call.name, "input": args}
        )
    usage = {
        "input_tokens": turn.usage[0] if turn.usage else 0,
        "output_tokens": turn.output_tokens() if turn.usage else 0,
    }
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": turn.stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


# The Responses API's stream, shaped as OpenAI sends it (openai.types.responses: every event with its
# `type` and `sequence_number`, items announced, streamed and finished, the whole output in the last event).


def _responses_items(turn: Turn, truncate_tools: bool) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The turn's output items, each with the events that stream it (between its added and done events)."""
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if turn.thinking:
        summary = [{"type": "summary_text", "text": "".join(turn.thinking)}]
        item = {"id": "rs_scripted", "type": "reasoning", "summary": summary}
        if turn.signature:
            item["encrypted_content"] = turn.signature
        part = {"type": "summary_text", "text": ""}
        deltas = [{"type": "response.reasoning_summary_part.added", "summary_index": 0, "part": part}]
        deltas += [
            {"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": piece}
            for piece in turn.thinking
        ]
        text = summary[0]["text"]
        deltas.append({"type": "response.reasoning_summary_text.done", "summary_index": 0, "text": text})
        deltas.append(
            {"type": "response.reasoning_summary_part.done", "summary_index": 0, "part": summary[0]}
        )
        out.append((item, deltas))
    if turn.text:
        text = "".join(turn.text)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        item = {"id": "msg_scripted", "type": "message", "status": "completed", "role": "assistant"}
        empty = {**part, "text": ""}
        deltas = [{"type": "response.content_part.added", "content_index": 0, "part": empty}]
        deltas += [
            {"type": "response.output_text.delta", "content_index": 0, "delta": piece, "logprobs": []}
            for piece in turn.text
        ]
        deltas.append({"type": "response.output_text.done", "content_index": 0, "text": text, "logprobs": []})
        deltas.append({"type": "response.content_part.done", "content_index": 0, "part": part})
        out.append(({**item, "content": [part]}, deltas))
    for index, call in enumerate(turn.tool_calls):
        pieces = _truncate(call.pieces()) if truncate_tools else call.pieces()
        item = {
            "id": f"fc_scripted_{index}",
            "type": "function_call",
            "status": "completed",
            "call_id": call.id or f"call_scripted_{index}",
            "name": call.name,
            "arguments": "".join(pieces),
        }
        deltas = [{"type": "response.function_call_arguments.delta", "delta": piece} for piece in pieces]
        deltas.append({"type": "response.function_call_arguments.done", "arguments": item["arguments"]})
        out.append((item, deltas))
    return out


def _responses_object(turn: Turn, model: str, truncate_tools: bool) -> dict[str, Any]:
    """The finished response (the non-streamed answer, and the body of the last streamed event)."""
    incomplete = turn.stop_reason == "max_tokens"
    body: dict[str, Any] = {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 1700000000,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "model": model,
        "output": [item for item, _ in _responses_items(turn, truncate_tools)],
        "usage": None,
    }
    if turn.usage is not None:
        inp, outp = turn.usage[0], turn.output_tokens()
        body["usage"] = {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": outp,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + outp,
        }
    return body


def _responses_chunks(turn: Turn, model: str, truncate_tools: bool) -> list[bytes]:
    events: list[dict[str, Any]] = []
    start = {"id": "resp_scripted", "object": "response", "created_at": 1700000000, "model": model}
    start |= {"status": "in_progress", "output": [], "usage": None}
    events += [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, (item, deltas) in enumerate(_responses_items(turn, truncate_tools)):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opened["content"] = []
        elif item["type"] == "function_call":
            opened["arguments"] = ""
        events.append({"type": "response.output_item.added", "output_index": index, "item": opened})
        events += [{**d, "item_id": item["id"], "output_index": index} for d in deltas]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    final = _responses_object(turn, model, truncate_tools)
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    events.append({"type": kind, "response": final})
    return [_sse(_dumps({**event, "sequence_number": n}), event["type"]) for n, event in enumerate(events)]


_CHUNKS = {"openai": _openai_chunks, "anthropic": _anthropic_chunks, "responses": _responses_chunks}
_WHOLE = {"openai": _openai_message, "anthropic": _anthropic_message, "responses": _responses_object}


def _error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    if wire == "anthropic":
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"), "message": message},
        }
    kind = (
        "rate_limit_exceeded"
        if status == 429
        else ("server_error" if status >= 500 else "invalid_request_error")
    )
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _error_event(wire: str, message: str) -> bytes:
    if wire == "anthropic":
        return _sse(
            _dumps({"type": "error", "error": {"type": "overloaded_error", "message": message}}), "error"
        )
    if wire == "responses":
        error = {"type": "error", "code": "server_error", "message": message, "param": None}
        return _sse(_dumps({**error, "sequence_number": 999}), "error")
    return _sse(_dumps({"error": {"message": message, "type": "server_error", "param": None, "code": None}}))


def _garbage(wire: str) -> list[bytes]:
    event = {"anthropic": "content_block_delta", "responses": "response.output_text.delta"}.get(wire)
    return [_sse("{this is not json", event), b"\x00\xff\xfe garbage \xc3\x28\n\n", _sse("[1, 2", event)]


# --- the HTTP/1.1 server ----------------------------------------------------------------------------------


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


_LAST_CHUNK = b"0\r\n\r\n"


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


_STREAM_HEAD = _head(
    200, {"content-type": "text/event-stream", "cache-control": "no-cache", "transfer-encoding": "chunked"}
)


class _Dropped(Exception):
    """The connection is to be closed without finishing the response (a fault)."""


class ScriptedServer:
    """The scripted model server. See the module docstring for selection rules and usage."""

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, delay: float = 0.0, record: bool = True
    ) -> None:
        self.host = host
        self.port = port
        self.delay = delay
        """Default seconds between stream chunks."""
        self.record = record
        """Whether to keep every request in `requests` (turn off for long benchmarks)."""
        self.requests: list[RecordedRequest] = []
        self.open_connections = 0
        """Connections currently open (a test can check a client left none behind)."""
        self.total_connections = 0
        self._scripts: dict[str, Script] = {}
        self._default: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._cache: dict[tuple[int, str, bool, str], tuple[list[bytes], bytes]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # --- scripts ---

    def add_script(
        self, name: str, turns: list[Turn], *, mode: Literal["history", "queue"] = "history"
    ) -> None:
        """Serve ``turns`` to requests whose ``x-script`` header or ``model`` is ``name``."""
        script = Script(list(turns), mode)
        with self._lock:
            self._scripts[name] = script

    def enqueue(self, *turns: Turn) -> None:
        """Append turns to the default queue (used when no script matches a request)."""
        with self._lock:
            self._default.extend(turns)

    def reset(self) -> None:
        """Forget scripts, the default queue and recorded requests."""
        with self._lock:
            self._scripts.clear()
            self._default.clear()
            self.requests.clear()
            self._cache.clear()

    def bodies(self, path_suffix: str = "") -> list[Any]:
        """The JSON bodies of recorded requests whose path ends with ``path_suffix``."""
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith(path_suffix)]

    @property
    def url(self) -> str:
        """The base URL clients use, ending in ``/v1`` (``{url}/chat/completions``, ``{url}/messages``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The server's root URL (Anthropic clients append ``/v1/messages`` themselves)."""
        return f"http://{self.host}:{self.port}"

    def _select(self, headers: dict[str, str], body: Any) -> tuple[Turn | None, str | None]:
        with self._lock:
            name = headers.get("x-script")
            if name is None and isinstance(body, dict) and isinstance(body.get("model"), str):
                name = body["model"] if body["model"] in self._scripts else None
            if name is not None:
                script = self._scripts.get(name)
                return (script.next_turn(body) if script else None), name
            if self._default:
                return self._default.popleft(), ""
            return None, None

    # --- lifecycle (in the current asyncio loop) ---

    async def start(self) -> None:
        """Listen on ``host:port`` (port 0 picks a free one; `port` is updated)."""
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(
            self._connection, self.host, self.port, backlog=4096, limit=2**20
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and end every connection (stalled ones included)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def serve_forever(self) -> None:
        """Run until cancelled."""
        assert self._server is not None
        try:
            await self._server.serve_forever()
        finally:
            await self.stop()

    # --- lifecycle (in a background thread with its own loop) ---

    def start_in_thread(self) -> ScriptedServer:
        """Start on a private asyncio loop in a daemon thread (usable from sync, asyncio and trio code)."""
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the starting thread below
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="scripted-server", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]
        return self

    def stop_thread(self) -> None:
        """Stop the background thread started by `start_in_thread` and wait for it."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start_in_thread()

    def __exit__(self, *exc_info: object) -> None:
        self.stop_thread()

    async def __aenter__(self) -> ScriptedServer:
        return self.start_in_thread()  # a few milliseconds of blocking; works under any event loop

    async def __aexit__(self, *exc_info: object) -> None:
        self.stop_thread()

    # --- connections ---

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.open_connections += 1
        self.total_connections += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (_Dropped, ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self.open_connections -= 1
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # the client closed a kept-alive connection
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        path = target.split("?", 1)[0]  # Claude Code's CLI posts to /v1/messages?beta=true
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        raw = await self._read_body(reader, headers)
        keep_alive = headers.get("connection", "").lower() != "close"
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", errors="replace")
        if path.startswith("/_control/"):
            await self._control(writer, method, path, body)
            return keep_alive
        turn, script = self._select(headers, body) if method == "POST" else (None, None)
        if self.record:
            with self._lock:
                self.requests.append(RecordedRequest(method, path, headers, body, script))
        route = path.rstrip("/")
        wire = (
            "anthropic"
            if route.endswith("/messages")
            else "responses"
            if route.endswith("/responses")
            else "openai"
        )
        if method != "POST" or not route.endswith(("/chat/completions", "/messages", "/responses")):
            await self._json(writer, 404, _error_body(wire, 404, f"no route for {method} {path}"))
            return keep_alive
        if turn is None:
            what = (
                f"script {script!r} has no turn left"
                if script is not None
                else "no script matches this request"
            )
            await self._json(writer, 400, _error_body(wire, 400, f"scripted server: {what}"))
            return keep_alive
        stream = isinstance(body, dict) and bool(body.get("stream"))
        model = body.get("model", "scripted") if isinstance(body, dict) else "scripted"
        await self._respond(reader, writer, turn, wire, stream, str(model))
        return keep_alive

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if "content-length" in headers:
            length = int(headers["content-length"])
            return await reader.readexactly(length) if length else b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    return b"".join(parts)
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
        return b""

    async def _json(
        self, writer: asyncio.StreamWriter, status: int, obj: Any, extra: dict[str, str] | None = None
    ) -> None:
        data = _dumps(obj).encode()
        headers = {"content-type": "application/json", "content-length": str(len(data)), **(extra or {})}
        writer.write(_head(status, headers) + data)
        await writer.drain()

    async def _respond(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        turn: Turn,
        wire: str,
        stream: bool,
        model: str,
    ) -> None:
        fault = turn.fault
        if fault is not None and fault.isdigit():
            status = int(fault)
            extra = {}
            if turn.retry_after is not None:
                extra = {
                    "retry-after": f"{turn.retry_after:g}",
                    "retry-after-ms": f"{turn.retry_after * 1000:g}",
                }
            await self._json(writer, status, _error_body(wire, status, turn.message), extra)
            return
        if fault == "drop":
            raise _Dropped
        if fault == "stall" and turn.fault_after is None:
            await _stall(reader)
            raise _Dropped
        if fault in ("empty", "html"):
            ctype = "text/event-stream" if stream else "application/json"
            data = b"" if fault == "empty" else b"<html><body><h1>502 Bad Gateway</h1></body></html>"
            if fault == "html":
                ctype = "text/html"
            writer.write(_head(200, {"content-type": ctype, "content-length": str(len(data))}) + data)
            await writer.drain()
            return
        if not stream:
            await self._respond_whole(reader, writer, turn, wire, model)
            return
        chunks, joined = self._render(turn, wire, model)
        delay = self.delay if turn.delay is None else turn.delay
        head = _STREAM_HEAD
        if fault in (None, "truncated_tool_json"):
            if delay <= 0:
                writer.write(head + joined + _LAST_CHUNK)
                await writer.drain()
                return
            writer.write(head)
            await self._send(writer, chunks, delay)
            writer.write(_LAST_CHUNK)
            await writer.drain()
            return
        writer.write(head)
        after = len(chunks) // 2 if turn.fault_after is None else turn.fault_after
        await self._send(writer, chunks[:after], delay)
        if fault == "reset":
            _reset(writer)
            raise _Dropped
        if fault == "stall":
            await writer.drain()
            await _stall(reader)
            raise _Dropped
        tails = {"garbage": _garbage(wire), "error_event": [_error_event(wire, turn.message)], "eof": []}
        await self._send(writer, [_chunked(c) for c in tails[fault]], delay)
        writer.write(_LAST_CHUNK)
        await writer.drain()

    async def _respond_whole(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, turn: Turn, wire: str, model: str
    ) -> None:
        fault = turn.fault
        truncate = fault == "truncated_tool_json"
        obj = _WHOLE[wire](turn, model, truncate)
        data = _dumps(obj).encode()
        if fault in ("garbage", "eof", "error_event", "reset", "stall"):
            if fault == "garbage":
                data = b"{this is not json"
            elif fault == "error_event":
                data = _dumps(_error_body(wire, 500, turn.message)).encode()
            else:
                cut = data[: len(data) // 2]
                writer.write(
                    _head(200, {"content-type": "application/json", "content-length": str(len(data))}) + cut
                )
                await writer.drain()
                if fault == "reset":
                    _reset(writer)
                elif fault == "stall":
                    await _stall(reader)
                raise _Dropped  # eof: fewer bytes than content-length, then close
        writer.write(
            _head(200, {"content-type": "application/json", "content-length": str(len(data))}) + data
        )
        await writer.drain()

    def _render(self, turn: Turn, wire: str, model: str) -> tuple[list[bytes], bytes]:
        """The turn's stream as HTTP chunks, and all of them joined (for one write when there is no delay)."""
        truncate = turn.fault == "truncated_tool_json"
        key = (id(turn), wire, truncate, model)
        with self._lock:
            cached = self._cache.get(key)
        if cached is None:
            chunks = [_chunked(c) for c in _CHUNKS[wire](turn, model, truncate)]
            cached = (chunks, b"".join(chunks))
            with self._lock:
                self._cache[key] = cached
        return cached

    async def _send(self, writer: asyncio.StreamWriter, chunks: list[bytes], delay: float) -> None:
        if delay <= 0:
            writer.write(b"".join(chunks))
            await writer.drain()
            return
        for chunk in chunks:
            writer.write(chunk)
            await writer.drain()
            await asyncio.sleep(delay)  # noqa: TID251 -- the server runs its own asyncio loop

    async def _control(self, writer: asyncio.StreamWriter, method: str, path: str, body: Any) -> None:
        if method == "GET" and path == "/_control/health":
            await self._json(writer, 200, {"ok": True})
        elif method == "GET" and path == "/_control/requests":
            with self._lock:
                data = [asdict(r) for r in self.requests]
            await self._json(writer, 200, data)
        elif method == "POST" and path == "/_control/reset":
            self.reset()
            await self._json(writer, 200, {"ok": True})
        elif method == "POST" and path == "/_control/scripts" and isinstance(body, dict):
            try:
                self.add_script(
                    body["name"], [Turn(**t) for t in body["turns"]], mode=body.get("mode", "history")
                )
            except (KeyError, TypeError, ValueError) as exc:
                await self._json(writer, 400, {"error": {"message": f"bad script: {exc}"}})
                return
            await self._json(writer, 200, {"ok": True})
        elif method == "POST" and path == "/_control/queue" and isinstance(body, dict):
            try:
                self.enqueue(*[Turn(**t) for t in body["turns"]])
            except (KeyError, TypeError, ValueError) as exc:
                await self._json(writer, 400, {"error": {"message": f"bad turns: {exc}"}})
                return
            await self._json(writer, 200, {"ok": True})
        else:
            await self._json(writer, 404, {"error": {"message": f"no control route {method} {path}"}})


async def _stall(reader: asyncio.StreamReader) -> None:
    """Send nothing until the client hangs up (or the server stops, which cancels this)."""
    while await reader.read(65536):
        pass


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort the connection with a TCP RST (SO_LINGER 0), after flushing what was written."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


# --- as a process -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """``python benchmarks/scripted_server.py --port N``: serve until interrupted; prints its URL first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on the first line)")
    parser.add_argument("--delay", type=float, default=0.0, help="default seconds between stream chunks")
    parser.add_argument(
        "--record", action="store_true", help="record request bodies (GET /_control/requests)"
    )
    parser.add_argument(
        "--preset",
        choices=["bench"],
        action="append",
        default=[],
        help="bench: the benchmark conversation under the model name 'bench'",
    )
    parser.add_argument("--deltas", type=int, default=300, help="answer deltas of the bench preset")
    args = parser.parse_args(argv)

    async def serve() -> None:
        server = ScriptedServer(host=args.host, port=args.port, delay=args.delay, record=args.record)
        if "bench" in args.preset:
            server.add_script("bench", bench_conversation(args.deltas))
        await server.start()
        print(f"listening on {server.root_url}", flush=True)
        await server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
