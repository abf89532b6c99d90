"""The chat-completions wire format: a `ModelRequest` as a request body, and the SSE stream as `ModelEvent`s.

The stream is parsed from its bytes (core's `SSEDecoder`, one ``json.loads`` per ``data:`` line, no typed
object per chunk). Every server quirk the parser absorbs is named where it is handled; the tests in
tests/openai/test_quirks.py replay each one, whole and re-chunked.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from openagent import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)
from openagent.plugin import (
    ModelEvent,
    ModelRequest,
    Stop,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    json_data,
)

from ._profiles import OpenAIProfile
from ._text_tools import TextToolCalls, text_tools_prompt

__all__ = ["ChatStream", "build_body", "new_call_id"]

_FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",  # the legacy single-function protocol
    "length": "max_tokens",
    "content_filter": "refusal",
    "eos": "end_turn",  # some vLLM/TGI builds
}


def new_call_id() -> str:
    """An id for a tool call the server sent without one."""
    return f"call_{uuid.uuid4().hex[:24]}"


# --- request -----------------------------------------------------------------------------------------------


def build_body(request: ModelRequest, model: str, profile: OpenAIProfile) -> dict[str, Any]:
    """The JSON body of a streaming chat-completions request for ``request``."""
    capabilities = request.capabilities(profile)  # per model: the run's resolved profile, else the endpoint's
    text_protocol = capabilities.tool_call_protocol == "text" and bool(request.tools)
    system = request.system
    if text_protocol:
        system = "\n\n".join(s for s in (system, text_tools_prompt(request.tools)) if s)
    body: dict[str, Any] = {
        "model": request.model or model,
        "messages": messages(request.messages, system, profile, text_protocol=text_protocol),
        "stream": True,
    }
    if profile.supports_stream_options:
        body["stream_options"] = {"include_usage": True}
    if request.max_tokens is not None:
        body[profile.max_tokens_field] = request.max_tokens
    for name in ("temperature", "top_p", "stop"):
        if (value := getattr(request, name)) is not None:
            body[name] = value
    if request.tools and not text_protocol:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
            }
            for t in request.tools
        ]
        if (choice := _tool_choice(request.tool_choice, profile)) is not None:
            body["tool_choice"] = choice
        if request.parallel_tool_calls is not None and profile.accepts_parallel_tool_calls:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.output_format and capabilities.supports_json_schema:
        schema = request.output_format.get("schema", {})
        name = request.output_format.get("name", "output")
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    _reasoning(request, profile, body)
    if request.user:
        body["user"] = request.user
    if request.extra_body:
        body.update(request.extra_body)
    return body


_EFFORTS = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


def _effort(request: ModelRequest) -> str | None:
    """``off``, ``low``, ``medium`` or ``high`` from ``effort`` / ``thinking`` (a budget maps to a level)."""
    thinking = request.thinking or {}
    if thinking.get("type") == "disabled":
        return "off"
    if request.effort:
        return _EFFORTS.get(request.effort, "medium")
    budget = thinking.get("budget_tokens")
    if isinstance(budget, int):
        return "low" if budget <= 4096 else "medium" if budget <= 16384 else "high"
    return "medium" if thinking.get("type") == "adaptive" else None


def _reasoning(request: ModelRequest, profile: OpenAIProfile, body: dict[str, Any]) -> None:
    """Map ``thinking`` / ``effort`` onto the endpoint's reasoning parameter (nothing when neither is set)."""
    effort = _effort(request)
    if effort is None or profile.reasoning_param is None:
        return
    if profile.reasoning_param == "reasoning_effort":
        body["reasoning_effort"] = "none" if effort == "off" else effort
    elif profile.reasoning_param == "reasoning":
        budget = (request.thinking or {}).get("budget_tokens")
        body["reasoning"] = (
            {"enabled": False}
            if effort == "off"
            else {"max_tokens": budget}
            if isinstance(budget, int)
            else {"effort": effort}
        )
    else:
        body["chat_template_kwargs"] = {"enable_thinking": effort != "off"}


def _tool_choice(choice: str | dict[str, Any] | None, profile: OpenAIProfile) -> Any:
    if choice is None:
        return None
    if isinstance(choice, dict):
        name = choice.get("name") or choice.get("function", {}).get("name")
        return (
            {"type": "function", "function": {"name": name}} if "named" in profile.tool_choice_forms else None
        )
    form = "required" if choice == "any" else choice  # Anthropic's "any" is OpenAI's "required"
    return form if form in profile.tool_choice_forms else None


def messages(
    history: list[UserMessage | AssistantMessage],
    system: str | None,
    profile: OpenAIProfile,
    *,
    text_protocol: bool,
) -> list[dict[str, Any]]:
    """Core messages as chat-completions messages (tool results become ``tool`` messages)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in history:
        if isinstance(message, AssistantMessage):
            out.append(_assistant(message, profile, text_protocol))
        elif isinstance(message.content, str):
            out.append({"role": "user", "content": message.content})
        else:
            out.extend(_user(message.content, text_protocol))
    return out


def _assistant(message: AssistantMessage, profile: OpenAIProfile, text_protocol: bool) -> dict[str, Any]:
    text: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thinking.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            calls.append(_call(block.id, block.name, json.dumps(block.input)))
        elif isinstance(block, ToolUseError):
            # Sent back as the model wrote it, so the error result the loop added answers a call it knows.
            calls.append(_call(block.id, block.name, block.raw_data))
    if text_protocol:  # the model wrote its calls as text; show them to it the same way
        text.extend(f"<tool_call>{json.dumps(_text_call(c))}</tool_call>" for c in calls)
        calls = []
    out: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if calls:
        out["tool_calls"] = calls
    if thinking and profile.reasoning_field:
        out[profile.reasoning_field] = "".join(thinking)
    return out


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _text_call(call: dict[str, Any]) -> dict[str, Any]:
    try:
        arguments = json.loads(call["function"]["arguments"])
    except ValueError:
        arguments = call["function"]["arguments"]
    return {"name": call["function"]["name"], "arguments": arguments}


def _user(blocks: list[Any], text_protocol: bool) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    text: list[str] = []
    for block in blocks:
        if isinstance(block, ToolResultBlock):
            content = _result_text(block)
            if text_protocol:
                text.append(f"<tool_response>{content}</tool_response>")
            else:
                results.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": content})
        elif isinstance(block, TextBlock):
            text.append(block.text)
    # Tool results first: they must directly follow the assistant message that made the calls.
    return [*results, *([{"role": "user", "content": "\n".join(text)}] if text else [])]


def _result_text(block: ToolResultBlock) -> str:
    if block.content is None:
        content = ""
    elif isinstance(block.content, str):
        content = block.content
    else:
        content = "\n".join(
            part["text"] if part.get("type") == "text" else json.dumps(part) for part in block.content
        )
    return f"Error: {content}" if block.is_error else content


# --- stream ------------------------------------------------------------------------------------------------


class _Slot:
    """One tool call being streamed: held back until it has a name and an id."""

    __slots__ = ("index", "id", "name", "started", "pending", "sent")

    def __init__(self, index: int, call_id: str) -> None:
        self.index = index
        self.id = call_id
        self.name = ""
        self.started = False
        self.pending: list[str] = []
        self.sent = False  # any argument text sent


class ChatStream:
    """Turns the ``data:`` payloads of one response into `ModelEvent`s.

    `feed` takes one payload; `finish` is called at the end of the body and raises `StreamError` for a
    stream that never completed.
    """

    def __init__(
        self,
        provider: str,
        *,
        tool_names: frozenset[str] = frozenset(),
        text_protocol: bool = False,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self.provider = provider
        self.done = False
        self.seen_data = False
        self._new_id = new_id or (lambda: new_call_id())  # looked up per call: tests fix the ids
        self._text = ""
        self._held: str | None = None  # a second piece that extends the first: cumulative or not, undecided
        self._cumulative: bool | None = None
        self._finish: str | None = None
        self._slots: list[_Slot] = []
        self._by_wire: dict[Any, _Slot] = {}
        self._text_calls = TextToolCalls(tool_names) if text_protocol else None
        self._plain = False
        """Text goes straight out: no text protocol, and the text is known not to be cumulative."""

    def feed(self, data: str) -> list[ModelEvent]:
        """Events for one ``data:`` payload."""
        self.seen_data = True
        if data == "[DONE]":
            self.done = True
            return []
        if self.done:
            return []  # trailing data after [DONE]: vLLM sends usage there in some versions, ignored
        try:
            chunk = json_data(data)
        except (ValueError, RecursionError):
            raise StreamError(
                "the stream sent a data line that is not JSON", provider=self.provider, body=data
            ) from None
        if not isinstance(chunk, dict):
            raise StreamError(
                "the stream sent a data line that is not a JSON object", provider=self.provider, body=data
            )
        if error := chunk.get("error"):  # an error reported inside a 200 stream (OpenAI, vLLM, OpenRouter)
            raise self._error(error, data)
        events: list[ModelEvent] = []
        choices = chunk.get("choices")
        if choices and type(choices) is list and type(choice := choices[0]) is dict:
            delta = choice.get("delta") or choice.get("message")  # "message": a whole, non-streamed answer
            if type(delta) is dict:
                content = delta.get("content")
                if (
                    type(content) is str
                    and self._plain
                    and len(delta) <= 2
                    and (len(delta) == 1 or "role" in delta)
                    and content
                ):
                    events.append(TextDelta(content))  # the hot path: a piece of text, nothing else
                elif delta:
                    self._delta(delta, events)
            if finish := choice.get("finish_reason"):
                self._finish = str(finish)
        # Usage: in a last chunk with empty choices (stream_options), or on every chunk (some servers).
        if type(usage := chunk.get("usage")) is dict:
            events.append(_usage(usage))
        return events

    def _error(self, error: Any, data: str) -> StreamError:
        message = error.get("message") if isinstance(error, dict) else error
        return StreamError(f"error inside the stream: {message or data}", provider=self.provider, body=data)

    def _delta(self, delta: dict[str, Any], events: list[ModelEvent]) -> None:
        # Reasoning: `reasoning_content` (llama.cpp, vLLM, DeepSeek, LM Studio) or `reasoning` (Ollama,
        # OpenRouter); servers that send both send the same text, so the first one present wins.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if self._held is not None and (reasoning or delta.get("tool_calls") or delta.get("function_call")):
            self._release(events)
        if reasoning and isinstance(reasoning, str):
            events.append(ThinkingDelta(reasoning))
        content = delta.get("content")
        if content and isinstance(content, str):
            self._content(content, events)
        if tool_calls := delta.get("tool_calls"):
            for position, call in enumerate(tool_calls if isinstance(tool_calls, list) else [tool_calls]):
                if isinstance(call, dict):
                    self._tool_call(call, position, events)
        elif isinstance(function_call := delta.get("function_call"), dict):
            # The legacy `function_call` protocol: one call per turn, no id, no index. A delta that also
            # carries `tool_calls` is one call told twice (llama-cpp-python mirrors every fragment into both
            # fields: cassettes/openai/test_quirks/llama-cpp-python-tool-calls-and-function-call.sse).
            self._fragment(
                "function_call", None, function_call.get("name"), function_call.get("arguments"), events
            )

    def _content(self, content: str, events: list[ModelEvent]) -> None:
        # Cumulative text: some servers repeat all the text so far in every chunk. Both readings emit the
        # first piece; a second piece that extends the first is held until the third decides, because delta
        # streams do that too ("1" then "10"): cumulative only when the third extends the second as well. A
        # stream of two such pieces, or one interrupted by anything but text, is read as deltas (the default).
        if self._cumulative is None:
            if not self._text:
                self._text = content
                return self._emit(content, events)
            if self._held is None:
                if len(content) > len(self._text) and content.startswith(self._text):
                    self._held = content
                    return None
                self._decide(False)
                return self._emit(content, events)
            if not (len(content) > len(self._held) and content.startswith(self._held)):
                self._release(events)
                return self._emit(content, events)
            self._decide(True)
            self._emit(self._held[len(self._text) :], events)
            self._text, self._held = self._held, None
        if self._cumulative:
            if not content.startswith(self._text):
                raise StreamError(
                    "cumulative text stream went back on itself", provider=self.provider, body=content
                )
            content, self._text = content[len(self._text) :], content
            if not content:
                return None
        return self._emit(content, events)

    def _decide(self, cumulative: bool) -> None:
        self._cumulative = cumulative
        self._plain = self._text_calls is None and not cumulative

    def _release(self, events: list[ModelEvent]) -> None:
        """Something other than a third extending piece came: the held piece was a delta."""
        if self._held is not None:
            held, self._held = self._held, None
            self._decide(False)
            self._emit(held, events)

    def _emit(self, content: str, events: list[ModelEvent]) -> None:
        if self._text_calls is None:
            events.append(TextDelta(content))
        else:
            self._text_calls.feed(content, events, self._emit_text_call)

    def _emit_text_call(self, name: str, arguments: str, events: list[ModelEvent]) -> None:
        slot = _Slot(len(self._slots), self._new_id())
        self._slots.append(slot)
        slot.name = name
        self._send(slot, arguments, events)
        self._close(slot, events)

    def _tool_call(self, call: dict[str, Any], position: int, events: list[ModelEvent]) -> None:
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        # Servers that leave out `index` (some Gemini and Mistral gateways) number calls by position.
        wire = call.get("index", position)
        wire = wire if isinstance(wire, int | str) else position
        self._fragment(wire, call.get("id") or None, function.get("name"), function.get("arguments"), events)

    def _fragment(self, wire: Any, call_id: Any, name: Any, arguments: Any, events: list[ModelEvent]) -> None:
        slot = self._by_wire.get(wire)
        if slot is None or (call_id and slot.id and call_id != slot.id):
            # A new call; or Ollama's parallel calls, which all say `index: 0`: a new id means a new call.
            slot = _Slot(len(self._slots), str(call_id) if call_id else "")
            self._slots.append(slot)
            self._by_wire[wire] = slot
        elif call_id and not slot.id:
            slot.id = str(call_id)  # the id arrived after the first fragment
        if name and not slot.name:
            slot.name = str(name)  # later repeats of the name (some servers repeat it) change nothing
        if arguments is None or arguments == "":
            pass  # `null` / `""` arguments in a fragment: nothing to add (a call with none gets "{}")
        elif isinstance(arguments, str):
            self._send(slot, arguments, events)
        else:
            # A JSON object instead of a string (Ollama, some vLLM parsers): unambiguous, re-encode it.
            self._send(slot, json.dumps(arguments), events)
        if not slot.started and slot.name and slot.id:
            self._start(slot, events)

    @staticmethod
    def _send(slot: _Slot, arguments: str, events: list[ModelEvent]) -> None:
        if slot.started:
            events.append(ToolCallDelta(slot.index, arguments))
        else:
            slot.pending.append(arguments)
        slot.sent = True

    @staticmethod
    def _start(slot: _Slot, events: list[ModelEvent]) -> None:
        slot.started = True
        events.append(ToolCallStart(slot.index, slot.id, slot.name))
        if slot.pending:
            events.append(ToolCallDelta(slot.index, "".join(slot.pending)))
            slot.pending = []

    def _close(self, slot: _Slot, events: list[ModelEvent]) -> None:
        if not slot.id:
            slot.id = self._new_id()  # the server never sent an id: a stable one for this call
        if not slot.started:
            self._start(slot, events)  # a call without a name: the loop reports it as a ToolUseError
        if not slot.sent:
            events.append(ToolCallDelta(slot.index, "{}"))  # no arguments at all means "no arguments"
            slot.sent = True

    def finish(self) -> list[ModelEvent]:
        """Events at the end of the body: close the calls, then `Stop`; `StreamError` if it was cut short."""
        if not self.seen_data:
            raise StreamError(
                "the server sent an empty response instead of an event stream", provider=self.provider
            )
        if not self.done and self._finish is None:
            what = "in the middle of a tool call" if self._slots else "before the end of the answer"
            raise StreamError(
                f"the stream ended {what} (no finish_reason, no [DONE])", provider=self.provider
            )
        events: list[ModelEvent] = []
        self._release(events)
        if self._text_calls is not None:
            self._text_calls.flush(events, self._emit_text_call)
        for slot in self._slots:
            self._close(slot, events)
        raw = self._finish
        reason = _FINISH.get(raw, "end_turn") if raw else "end_turn"
        if self._slots and reason == "end_turn":
            reason = "tool_use"  # finish_reason "stop" (Ollama, LM Studio) or none although tools were called
        events.append(Stop(reason, raw))
        return events


def _usage(usage: dict[str, Any], names: tuple[str, str, str] = ("prompt", "completion", "prompt")) -> Usage:
    """OpenAI's usage (``prompt_tokens``…, or the Responses API's ``input_tokens``…) as the core counts it.

    OpenAI counts cached prompt tokens inside the prompt's count; the core counts them apart. Reasoning tokens
    are inside the output count, as they are billed.
    """
    prompt, output, details_of = names
    details = usage.get(f"{details_of}_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return Usage(
        input_tokens=max(_count(usage.get(f"{prompt}_tokens")) - cached, 0),
        output_tokens=_count(usage.get(f"{output}_tokens")),
        cache_read_input_tokens=cached,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
