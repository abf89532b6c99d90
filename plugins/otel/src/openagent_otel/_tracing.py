"""Spans for runs, model calls and tool calls, opened and closed by openagent's run-time hooks.

Hooks do not share objects between a ``Pre`` event and its ``Post`` event, so the open spans are kept here,
keyed by session id (a run and its model call) and by tool-use id (a tool call). A subagent's run is
nested under the span of the ``Task`` call that started it: ``SubagentStart`` fires inside that call, in the
task that then runs the subagent, so a context variable carries the call id to the subagent's first hook.
Names and attributes follow the OpenTelemetry GenAI semantic conventions (development status):
https://opentelemetry.io/docs/specs/semconv/gen-ai/
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from openagent import (
    AssistantMessage,
    HookContext,
    HookMatcher,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from openagent.models import ModelRequest

__all__ = ["CAPTURE_CONTENT_ENV", "Tracing", "tracing_hooks"]

CAPTURE_CONTENT_ENV = "OPENAGENT_OTEL_CAPTURE_CONTENT"
"""Set to ``1``/``true`` to record prompts, answers, tool arguments and results on the spans."""
_OTEL_CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"  # the OpenTelemetry-wide switch


@dataclass
class _Run:
    span: Span
    chat: Span | None = None
    tools: set[str] = field(default_factory=set)
    """Tool calls started by this run and not finished yet."""
    input_tokens: int = 0
    output_tokens: int = 0


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class Tracing:
    """The state of the spans a set of hooks opened; `hooks` gives the hook table to install.

    Args:
        tracer_provider: Where spans go; ``None`` uses the global provider (looked up at each span, so a
            provider configured after import is honoured).
        capture_content: Record message content, tool arguments and results. ``None`` reads
            ``OPENAGENT_OTEL_CAPTURE_CONTENT`` (or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)
            when each run starts.
        agent_name: ``gen_ai.agent.name`` of top-level runs (subagents are named by their type).
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool | None = None,
        agent_name: str = "openagent",
    ) -> None:
        self.tracer_provider = tracer_provider
        self.capture_content = capture_content
        self.agent_name = agent_name
        self._runs: dict[str, _Run] = {}
        self._tools: dict[str, tuple[Span, str]] = {}  # tool-use id -> (span, session id)
        self._children: dict[str, list[str]] = {}  # Task call id -> session ids of the runs under it
        self._agent_types: dict[str, str] = {}  # Task call id -> subagent type
        self._previous_call: dict[str, str | None] = {}  # Task call id -> the context variable before it
        self._call: ContextVar[str | None] = ContextVar(f"openagent_otel_call_{id(self)}", default=None)
        """The ``Task`` call whose subagent runs in this task (set by ``SubagentStart``)."""

    # -- plumbing --

    def _tracer(self) -> trace.Tracer:
        from . import __version__

        provider = self.tracer_provider or trace.get_tracer_provider()
        return provider.get_tracer("openagent_otel", __version__)

    def _capture(self) -> bool:
        if self.capture_content is not None:
            return self.capture_content
        return _env_flag(CAPTURE_CONTENT_ENV) or _env_flag(_OTEL_CAPTURE_ENV)

    def hooks(self) -> dict[str, list[HookMatcher]]:
        """The hook table to merge into ``AgentOptions.hooks`` (or that the plugin registers)."""
        table = {
            "UserPromptSubmit": self._on_prompt,
            "PreModelRequest": self._on_request,
            "PostModelResponse": self._on_response,
            "PreToolUse": self._on_tool_start,
            "PostToolUse": self._on_tool_end,
            "PostToolUseFailure": self._on_tool_end,
            "SubagentStart": self._on_subagent_start,
            "SubagentStop": self._on_subagent_stop,
            "Stop": self._on_stop,
            "SessionEnd": self._on_session_end,
            "PreCompact": self._on_compact,
            "Notification": self._on_notification,
        }
        # No timeout: ending spans is quick, and a timed-out hook would leave a span open.
        return {event: [HookMatcher(hooks=[callback], timeout=None)] for event, callback in table.items()}

    # -- runs --

    def _start_run(self, session_id: str, data: Mapping[str, Any]) -> _Run:
        call = data.get("parent_tool_use_id") or self._call.get()
        parent = self._tools.get(call) if call else None
        if parent is not None:
            assert call is not None
            name = self._agent_types.get(call, "subagent")
            ctx = trace.set_span_in_context(parent[0])
            self._children.setdefault(call, []).append(session_id)
        else:
            name = self.agent_name
            ctx = otel_context.get_current()  # the caller's span, when it has one
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": session_id,
        }
        span = self._tracer().start_span(
            f"invoke_agent {name}", context=ctx, kind=SpanKind.INTERNAL, attributes=attributes
        )
        run = self._runs[session_id] = _Run(span)
        return run

    def _run(self, session_id: str, data: Mapping[str, Any]) -> _Run:
        return self._runs.get(session_id) or self._start_run(session_id, data)

    def _end_run(self, session_id: str, *, error: str | None = None) -> None:
        run = self._runs.pop(session_id, None)
        if run is None:
            return
        for call in list(run.tools):
            self._end_tool(call, error="the tool call never finished (blocked, denied or cut off)")
        if run.chat is not None:
            error = error or "the run ended before the model answered"
            _fail(run.chat, error)
            run.chat.end()
        run.span.set_attribute("gen_ai.usage.input_tokens", run.input_tokens)
        run.span.set_attribute("gen_ai.usage.output_tokens", run.output_tokens)
        if error is not None:
            _fail(run.span, error)
        run.span.end()

    async def _on_prompt(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        session_id = data["session_id"]
        if session_id in self._runs:  # the previous prompt's run stopped without a Stop (turn limit …)
            self._end_run(session_id)
        run = self._start_run(session_id, data)
        if self._capture():
            message = [{"role": "user", "parts": [{"type": "text", "content": data.get("prompt", "")}]}]
            run.span.set_attribute("gen_ai.input.messages", json.dumps(message, ensure_ascii=False))
        return {}

    async def _on_stop(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        self._end_run(data["session_id"])
        return {}

    async def _on_session_end(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        self._end_run(data["session_id"])
        return {}

    async def _on_compact(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        run = self._runs.get(data["session_id"])
        if run is not None:  # a manual compaction between prompts has no run to mark
            run.span.add_event("openagent.compaction", {"trigger": str(data.get("trigger", "auto"))})
        return {}

    async def _on_notification(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        found = self._tools.get(data.get("tool_use_id") or tool_use_id or "")
        if found is not None and data.get("notification_type") == "tool_progress":  # a long call's progress
            fields = {k: data[k] for k in ("progress", "total", "message") if data.get(k) is not None}
            found[0].add_event("openagent.tool.progress", fields)
        return {}

    # -- model calls --

    async def _on_request(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        run = self._run(data["session_id"], data)
        for call in list(run.tools):  # a new request: earlier calls without a result never ran
            self._end_tool(call, error="the tool call never ran (blocked or denied)")
        if run.chat is not None:  # the previous request failed before answering and is being retried
            _fail(run.chat, "the request was sent again")
            run.chat.end()
        request = data.get("request")
        model = request.model if isinstance(request, ModelRequest) else "unknown"
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        if isinstance(request, ModelRequest):
            for key, value in (
                ("gen_ai.request.max_tokens", request.max_tokens),
                ("gen_ai.request.temperature", request.temperature),
                ("gen_ai.request.top_p", request.top_p),
                ("gen_ai.request.stop_sequences", request.stop),
            ):
                if value is not None:
                    attributes[key] = value
            if self._capture():
                attributes["gen_ai.input.messages"] = _dumps([_message(m) for m in request.messages])
                if request.system:
                    attributes["gen_ai.system_instructions"] = _dumps(
                        [{"type": "text", "content": request.system}]
                    )
        run.chat = self._tracer().start_span(
            f"chat {model}",
            context=trace.set_span_in_context(run.span),
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        return {}

    async def _on_response(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        run = self._runs.get(data["session_id"])
        response = data.get("response")
        if run is None or run.chat is None or not isinstance(response, AssistantMessage):
            return {}
        span, run.chat = run.chat, None
        span.set_attribute("gen_ai.response.model", response.model)
        if response.stop_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [response.stop_reason])
        if response.usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
            run.input_tokens += response.usage.input_tokens
            run.output_tokens += response.usage.output_tokens
        if self._capture():
            span.set_attribute("gen_ai.output.messages", _dumps([_message(response)]))
        span.end()
        return {}

    # -- tool calls --

    async def _on_tool_start(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        call = data.get("tool_use_id") or tool_use_id
        if not call:
            return {}
        session_id = data["session_id"]
        run = self._run(session_id, data)
        name = str(data.get("tool_name", "unknown"))
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call,
            "gen_ai.tool.type": "function",
        }
        if self._capture():
            attributes["gen_ai.tool.call.arguments"] = _dumps(data.get("tool_input"))
        span = self._tracer().start_span(
            f"execute_tool {name}",
            context=trace.set_span_in_context(run.span),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._tools[call] = (span, session_id)
        run.tools.add(call)
        return {}

    async def _on_tool_end(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        call = data.get("tool_use_id") or tool_use_id
        if not call or call not in self._tools:
            return {}
        span = self._tools[call][0]
        if self._capture():
            span.set_attribute("gen_ai.tool.call.result", _dumps(data.get("tool_response")))
        error = None
        if data.get("hook_event_name") == "PostToolUseFailure":
            error = str(data.get("error") or _text(data.get("tool_response")) or "the tool failed")
        self._end_tool(call, error=error, error_type="tool_error")
        return {}

    def _end_tool(self, call: str, *, error: str | None = None, error_type: str = "_OTHER") -> None:
        found = self._tools.pop(call, None)
        if found is None:
            return
        span, session_id = found
        for child in self._children.pop(call, []):  # a subagent that never reached Stop
            self._end_run(child, error="the subagent did not finish")
        self._agent_types.pop(call, None)
        if call in self._previous_call:
            self._call.set(self._previous_call.pop(call))
        run = self._runs.get(session_id)
        if run is not None:
            run.tools.discard(call)
        if error is not None:
            _fail(span, error, error_type)
        span.end()

    # -- subagents --

    async def _on_subagent_start(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        call = data.get("agent_id")
        if call and call in self._tools:
            self._agent_types[call] = str(data.get("agent_type") or "subagent")
            self._previous_call[call] = self._call.get()
            self._call.set(call)
        return {}

    async def _on_subagent_stop(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        call = data.get("agent_id")
        for child in self._children.pop(call, []) if call else []:
            self._end_run(child)
        if call in self._previous_call:
            self._call.set(self._previous_call.pop(call))
        return {}


def tracing_hooks(
    tracer_provider: TracerProvider | None = None, capture_content: bool | None = None
) -> dict[str, list[HookMatcher]]:
    """Hooks that trace runs, model calls and tool calls; merge them into ``AgentOptions.hooks``.

    Use this instead of installing the plugin, not in addition to it (each would record its own spans).

    Args:
        tracer_provider: Where spans go; ``None`` uses the global provider.
        capture_content: Record message content; ``None`` reads ``OPENAGENT_OTEL_CAPTURE_CONTENT``.
    """
    return Tracing(tracer_provider, capture_content).hooks()


def _fail(span: Span, message: str, error_type: str = "_OTHER") -> None:
    span.set_status(Status(StatusCode.ERROR, message))
    span.set_attribute("error.type", error_type)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(b.get("text", "")) for b in value if isinstance(b, Mapping))
    return "" if value is None else str(value)


def _message(message: UserMessage | AssistantMessage) -> dict[str, Any]:
    """A message in the conventions' JSON shape: ``{"role", "parts": [...]}``."""
    if isinstance(message.content, str):
        return {"role": message.type, "parts": [{"type": "text", "content": message.content}]}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "content": block.text})
        elif isinstance(block, ThinkingBlock):
            parts.append({"type": "reasoning", "content": block.thinking})
        elif isinstance(block, ToolUseBlock):
            parts.append({"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.input})
        elif isinstance(block, ToolResultBlock):
            parts.append({"type": "tool_call_response", "id": block.tool_use_id, "response": block.content})
        else:  # a garbled tool call (ToolUseError) and anything newer: kept whole
            kind = str(getattr(block, "type", "unknown"))
            parts.append({"type": kind, "content": _dumps(block.model_dump())})
    return {"role": message.type, "parts": parts}
