"""The Responses API stream (``POST /responses``, ``stream: true``) as `ModelEvent`s.

Every event of the stream is a JSON object whose ``type`` names it (the SSE ``event:`` line repeats it, and
is not relied on: some proxies drop it). The parser keeps a small state per output item and maps:

- ``response.output_text.delta`` (and ``response.refusal.delta``) → `TextDelta`;
- ``response.reasoning_summary_text.delta`` (OpenAI's reasoning models) and ``response.reasoning_text.delta``
  (open-weight models on vLLM and llama.cpp) → `ThinkingDelta`, summary parts separated by a blank line;
- a ``function_call`` item → `ToolCallStart`; its ``response.function_call_arguments.delta`` →
  `ToolCallDelta`;
- every finished item core has no block for — the opaque ``reasoning`` item (its ``encrypted_content``
  included), hosted tool calls (``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
  ``mcp_call``, ``mcp_list_tools`` …) and item types added later — → ``RawContent("openai-responses", item)``,
  verbatim from ``response.output_item.done``; messages and function calls that follow such an item, or
  that carry annotations, are kept whole too (their ids pair them with it when sent back: see
  `_responses_request`);
- ``response.completed`` / ``response.incomplete`` → `Usage` then `Stop` (``max_output_tokens`` →
  ``max_tokens``, ``content_filter`` → ``refusal``); ``response.failed`` and ``error`` → a typed
  `ProviderError` (`RateLimitError`, `ServerError`, `ContextWindowExceededError` by the error's code,
  `StreamError` otherwise), with the server's code and message.

Event types this module does not know are logged (debug) and ignored, as OpenAI adds them over time. A body
that ends before a terminal event is a truncated stream (`StreamError`). A server that ignores ``stream``
and answers with one response object is read through the same item handlers.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, ClassVar

from openagent._sse import json_data
from openagent.errors import (
    ContextWindowExceededError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
)
from openagent.models import ModelEvent, RawContent, Stop, TextDelta, ThinkingDelta, ToolCallDelta

from . import _chat
from ._chat import ChatStream, _Slot, _usage
from ._responses_request import RAW

__all__ = ["ResponsesStream"]

logger = logging.getLogger("openagent.openai")

# Events that carry nothing the turn needs (progress of hosted tools, lifecycle, the ".done" repeats of text
# already streamed): known, so not logged as unknown.
_QUIET = frozenset(
    {
        "response.created", "response.in_progress", "response.queued",
        "response.content_part.added", "response.content_part.done",
        "response.output_text.done", "response.output_text.annotation.added", "response.refusal.done",
        "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
        "response.web_search_call.in_progress", "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.file_search_call.in_progress", "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed", "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed",
        "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
        "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.image_generation_call.in_progress", "response.image_generation_call.generating",
        "response.image_generation_call.completed", "response.image_generation_call.partial_image",
        "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
        "response.audio.delta", "response.audio.done", "response.audio.transcript.delta",
        "response.audio.transcript.done",
        "response.shell_call_command.added", "response.shell_call_command.delta",
        "response.shell_call_command.done", "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done", "response.compaction.compacting",
    }
)  # fmt: skip
# In-stream error codes (``response.failed``'s ``error.code``, the ``error`` event's ``code``) with a typed
# error of their own: a context overflow lets the loop compact; the retryable ones are retried only when
# nothing has been handed on yet (the loop's rule).
_ERRORS: dict[str, type[ProviderError]] = {
    "context_length_exceeded": ContextWindowExceededError,
    "rate_limit_exceeded": RateLimitError,
    "server_error": ServerError,
    "server_is_overloaded": ServerError,
    "overloaded": ServerError,
}
_INCOMPLETE = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}


class _Item:
    """What one output item has said so far."""

    __slots__ = ("kind", "call", "texted", "thought", "part")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.call: _Slot | None = None
        self.texted = False  # text or refusal deltas were streamed for it
        self.thought = False  # summary or reasoning text was streamed for it
        self.part: Any = None  # the summary part being streamed


class ResponsesStream:
    """Turns the ``data:`` payloads of one Responses stream into `ModelEvent`s.

    `feed` takes one payload; `finish` is called at the end of the body and raises `StreamError` for a
    stream that never reached a terminal event.
    """

    _handlers: ClassVar[dict[str, Callable[[ResponsesStream, dict[str, Any]], list[ModelEvent]]]]

    def __init__(self, provider: str, *, new_id: Callable[[], str] | None = None) -> None:
        self.provider = provider
        self.done = False
        self.seen_data = False
        self._new_id = new_id or (lambda: _chat.new_call_id())  # looked up per call: tests fix the ids
        self._items: dict[Any, _Item] = {}  # by item id and by output index (servers send either or both)
        self._latest: dict[str, _Item] = {}  # the last item announced, per kind
        self._loose: dict[str, _Item] = {}  # deltas that named no item and came before any of their kind
        self._calls: list[_Slot] = []
        self._keep_whole = False  # an item kept whole came before: the items after it are kept whole too
        self._refused = False

    def feed(self, data: str, event: str = "message") -> list[ModelEvent]:
        """Events for one ``data:`` payload (``event``: the SSE event name, for error messages)."""
        self.seen_data = True
        if self.done:
            return []  # after the terminal event: nothing more belongs to this turn
        try:
            payload = json_data(data)
        except (ValueError, RecursionError):
            raise StreamError(
                f"the stream sent {event} data that is not JSON", provider=self.provider, body=data
            ) from None
        if type(payload) is not dict:
            raise StreamError(
                f"the stream sent {event} data that is not a JSON object", provider=self.provider, body=data
            )
        kind = payload.get("type")
        if kind == "response.output_text.delta" and type(delta := payload.get("delta")) is str:
            # The hot path: a piece of answer text, for the item it names (by id, else by index).
            key = payload.get("item_id")
            item = self._items.get(key) if type(key) is str else None
            (item if item is not None else self._delta_item(payload, "message")).texted = True
            return [TextDelta(delta)] if delta else []
        handler = self._handlers.get(kind) if type(kind) is str else None
        if handler is not None:
            return handler(self, payload)
        if kind is None and (payload.get("object") == "response" or "error" in payload):
            return self._whole(payload)  # a server that ignored `stream`: one response (or error) object
        if kind not in _QUIET:
            logger.debug("openai: ignoring Responses event %r", kind)
        return []

    def finish(self) -> list[ModelEvent]:
        """Nothing when the stream reached its end; `StreamError` when it was cut short."""
        if not self.seen_data:
            raise StreamError(
                "the server sent an empty response instead of an event stream", provider=self.provider
            )
        if not self.done:
            what = "in the middle of a tool call" if self._calls else "before the response was complete"
            raise StreamError(
                f"the stream ended {what} (no response.completed event)", provider=self.provider
            )
        return []

    # --- items ---------------------------------------------------------------------------------------------

    def _item(self, payload: dict[str, Any]) -> _Item | None:
        key = payload.get("item_id")
        item = self._items.get(key) if type(key) is str else None
        return item if item is not None else self._items.get(_index(payload))

    def _delta_item(self, payload: dict[str, Any], kind: str) -> _Item:
        """The item a delta belongs to: the one it names, else the last one of its kind announced, else one
        held for the next item of its kind to finish (so a finished item never repeats what was streamed).
        """  # noqa: D205
        item = self._item(payload) or self._latest.get(kind)
        return item if item is not None else self._loose.setdefault(kind, _Item(kind))

    def _register(self, state: _Item, item_id: Any, payload: dict[str, Any]) -> None:
        if isinstance(item_id, str) and item_id:
            self._items[item_id] = state
        if (index := _index(payload)) is not None:
            self._items[index] = state

    def _added(self, payload: dict[str, Any]) -> list[ModelEvent]:
        item = payload.get("item")
        if not isinstance(item, dict):
            raise StreamError(
                "response.output_item.added without an item", provider=self.provider, body=json.dumps(payload)
            )
        state = _Item(str(item.get("type")))
        self._register(state, item.get("id"), payload)
        self._latest[state.kind] = state
        events: list[ModelEvent] = []
        if state.kind == "function_call":
            self._call(state, item, events)
        return events

    def _call(self, state: _Item, item: dict[str, Any], events: list[ModelEvent]) -> None:
        """Open (or complete) the call an item describes; it starts once it has a name."""
        slot = state.call
        if slot is None:
            slot = state.call = _Slot(len(self._calls), "")
            self._calls.append(slot)
        if not slot.id and isinstance(call_id := item.get("call_id"), str) and call_id:
            slot.id = call_id
        if not slot.name and isinstance(name := item.get("name"), str):
            slot.name = name
        arguments = item.get("arguments")
        if not slot.sent and isinstance(arguments, str) and arguments:
            ChatStream._send(slot, arguments, events)
        if not slot.started and slot.name:
            slot.id = slot.id or self._new_id()
            ChatStream._start(slot, events)

    def _arguments(self, payload: dict[str, Any]) -> list[ModelEvent]:
        state = self._item(payload) or self._latest.get("function_call")
        delta = payload.get("delta")
        if state is None or state.call is None:
            # Arguments for an item never announced: open it; it starts when its name comes.
            state = _Item("function_call")
            self._register(state, payload.get("item_id"), payload)
            self._latest["function_call"] = state
            self._call(state, {}, [])
        if not isinstance(delta, str) or not delta:
            return []
        events: list[ModelEvent] = []
        assert state.call is not None
        ChatStream._send(state.call, delta, events)
        return events

    def _arguments_done(self, payload: dict[str, Any]) -> list[ModelEvent]:
        state = self._item(payload) or self._latest.get("function_call")
        events: list[ModelEvent] = []
        if state is not None and state.call is not None:
            self._call(state, {"arguments": payload.get("arguments")}, events)
        return events

    def _done(self, payload: dict[str, Any]) -> list[ModelEvent]:
        item = payload.get("item")
        if not isinstance(item, dict):
            raise StreamError(
                "response.output_item.done without an item", provider=self.provider, body=json.dumps(payload)
            )
        state = self._item({**payload, "item_id": item.get("id")})
        kind = item.get("type")
        if state is None:  # a server that sends only finished items, or deltas that named none
            state = self._loose.pop(str(kind), None) or _Item(str(kind))
        events: list[ModelEvent] = []
        if kind == "function_call":
            self._finish_call(state, item, events)
            whole = self._keep_whole
        elif kind == "message":
            if not state.texted:
                events += _message_text(item)
            self._refused = self._refused or any(_parts(item, "refusal"))
            whole = self._keep_whole or any(p.get("annotations") for p in _parts(item, "output_text"))
        else:  # reasoning, hosted tool calls, and item types added later
            if kind == "reasoning" and not state.thought:
                events += _reasoning_text(item)
            whole = self._keep_whole = True
        if whole:
            events.append(RawContent(RAW, item))
        return events

    def _finish_call(self, state: _Item, item: dict[str, Any], events: list[ModelEvent]) -> None:
        self._call(state, item, events)
        slot = state.call
        assert slot is not None
        if not slot.started:  # a call without a name: the loop reports it as a ToolUseError
            slot.id = slot.id or self._new_id()
            ChatStream._start(slot, events)
        if not slot.sent:
            slot.sent = True
            events.append(ToolCallDelta(slot.index, "{}"))  # no arguments at all means "no arguments"

    # --- text, thinking ------------------------------------------------------------------------------------

    def _thinking(self, payload: dict[str, Any]) -> list[ModelEvent]:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        state = self._delta_item(payload, "reasoning")
        part = payload.get("summary_index")
        # A new summary part is a new paragraph of the same thinking.
        new_part = state.thought and isinstance(part, int) and part != state.part
        state.thought, state.part = True, part
        return [ThinkingDelta("\n\n" + delta if new_part else delta)]

    def _refusal(self, payload: dict[str, Any]) -> list[ModelEvent]:
        self._refused = True
        self._delta_item(payload, "message").texted = True
        delta = payload.get("delta")
        return [TextDelta(delta)] if isinstance(delta, str) and delta else []

    # --- the end -------------------------------------------------------------------------------------------

    def _terminal(self, payload: dict[str, Any]) -> list[ModelEvent]:
        response = payload.get("response")
        return self._end(response if isinstance(response, dict) else {}, str(payload.get("type")))

    def _end(self, response: dict[str, Any], kind: str) -> list[ModelEvent]:
        self.done = True
        events: list[ModelEvent] = []
        for slot in self._calls:  # calls the stream never finished: close them as they are
            if not slot.started or not slot.sent:
                self._finish_call(_with(slot), {}, events)
        if isinstance(usage := response.get("usage"), dict):
            events.append(_usage(usage, ("input", "output", "input")))
        status = response.get("status")
        details = response.get("incomplete_details")
        if status == "incomplete" or kind == "response.incomplete":
            raw = details.get("reason") if isinstance(details, dict) else None
            events.append(Stop(_INCOMPLETE.get(str(raw), "max_tokens"), str(raw or "incomplete")))
        elif self._calls:
            events.append(Stop("tool_use", status if isinstance(status, str) else None))
        else:
            reason = "refusal" if self._refused else "end_turn"
            events.append(Stop(reason, status if isinstance(status, str) else None))
        return events

    def _failed(self, payload: dict[str, Any]) -> list[ModelEvent]:
        response = payload.get("response")
        error = response.get("error") if isinstance(response, dict) else None
        error = error if isinstance(error, dict) else {}
        raise self._error(error, json.dumps(payload), "the response failed")

    def _error_event(self, payload: dict[str, Any]) -> list[ModelEvent]:
        inner = payload.get("error")  # some servers nest it: {"type": "error", "error": {...}}
        raise self._error(inner if isinstance(inner, dict) else payload, json.dumps(payload), "error event")

    def _error(self, error: dict[str, Any], body: str, what: str) -> ProviderError:
        said = [str(v) for v in (error.get("code"), error.get("message")) if v]
        code = error.get("code")
        cls = _ERRORS.get(code, StreamError) if isinstance(code, str) else StreamError
        return cls(": ".join([what, *said]), provider=self.provider, body=body)

    def _whole(self, response: dict[str, Any]) -> list[ModelEvent]:
        """A whole response object (``stream`` ignored), or an error object in its place."""
        error = response.get("error")
        if response.get("object") != "response" or error or response.get("status") == "failed":
            what = "the response failed" if response.get("object") == "response" else "error"
            raise self._error(error if isinstance(error, dict) else {}, json.dumps(response), what)
        events: list[ModelEvent] = []
        output = response.get("output")
        for index, item in enumerate(output if isinstance(output, list) else []):
            if isinstance(item, dict):
                events += self._added({"item": item, "output_index": index})
                events += self._done({"item": item, "output_index": index})
        return events + self._end(response, "response.completed")


ResponsesStream._handlers = {
    "response.output_item.added": ResponsesStream._added,
    "response.output_item.done": ResponsesStream._done,
    "response.function_call_arguments.delta": ResponsesStream._arguments,
    "response.function_call_arguments.done": ResponsesStream._arguments_done,
    "response.reasoning_summary_text.delta": ResponsesStream._thinking,
    "response.reasoning_text.delta": ResponsesStream._thinking,
    "response.refusal.delta": ResponsesStream._refusal,
    "response.completed": ResponsesStream._terminal,
    "response.incomplete": ResponsesStream._terminal,
    "response.failed": ResponsesStream._failed,
    "error": ResponsesStream._error_event,
}


def _with(slot: _Slot) -> _Item:
    state = _Item("function_call")
    state.call = slot
    return state


def _parts(item: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = item.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == kind]


def _message_text(item: dict[str, Any]) -> list[ModelEvent]:
    """A finished message's text, for a server that streamed none of it."""
    pieces = [p.get("text") for p in _parts(item, "output_text")]
    pieces += [p.get("refusal") for p in _parts(item, "refusal")]
    text = "".join(p for p in pieces if isinstance(p, str))
    return [TextDelta(text)] if text else []


def _reasoning_text(item: dict[str, Any]) -> list[ModelEvent]:
    """A finished reasoning item's summary (or reasoning text), for a server that streamed none of it."""
    pieces = [
        p["text"]
        for key in ("summary", "content")
        if isinstance(item.get(key), list)
        for p in item[key]
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]
    ]
    return [ThinkingDelta("\n\n".join(pieces))] if pieces else []


def _index(payload: dict[str, Any]) -> tuple[str, int] | None:
    index = payload.get("output_index")
    return ("#", index) if type(index) is int else None
