"""The `ModelRequest` a conversation sends next: its history, system prompt, tools and options.

The system prompt is the options' own, then the project's memory files and skills, then what the run must
know: plan mode, the JSON schema of a structured answer (when the endpoint cannot enforce it), and the
token budget left (``task_budget``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .models import ModelRequest
from .permissions import PLAN_MODE_NOTE, denied_outright

if TYPE_CHECKING:
    from .loop import Conversation

__all__ = ["build_request"]


def _notes(conversation: Conversation, native_schema: bool, spent: int) -> list[str | None]:
    opts = conversation.options
    notes: list[str | None] = [conversation.settings.system_prompt(opts.system_prompt)]
    if opts.permission_mode == "plan":  # the model is told why its tool calls will be refused
        notes.append(PLAN_MODE_NOTE)
    if conversation.output is not None and not native_schema:
        notes.append(conversation.output.instructions())
    if opts.task_budget is not None:
        left = max(opts.task_budget - spent, 0)
        notes.append(
            f"Token budget for this task: {opts.task_budget} output tokens, about {left} left. "
            "Pace your work and finish within it."
        )
    return notes


def build_request(conversation: Conversation, spent: int = 0) -> ModelRequest:
    """The next request; ``spent`` is the output tokens this run has used (for ``task_budget``)."""
    opts = conversation.options
    profile = getattr(conversation.provider, "profile", None)
    output = conversation.output
    native = output is not None and bool(getattr(profile, "supports_json_schema", False))
    system = "\n\n".join(filter(None, _notes(conversation, native, spent))) or None
    disallowed = conversation.disallowed
    return ModelRequest(
        model=conversation.model,
        messages=list(conversation.history),
        system=system,
        tools=[t.spec for t in conversation.tools.values() if not denied_outright(t.name, disallowed)],
        max_tokens=opts.max_tokens,
        temperature=opts.temperature,
        top_p=opts.top_p,
        stop=list(opts.stop) if opts.stop else None,
        tool_choice=opts.tool_choice,
        parallel_tool_calls=opts.parallel_tool_calls,
        output_format=output.request_format() if native and output else None,
        extra_body=dict(opts.extra_body) if opts.extra_body else None,
        timeout=opts.timeout,
        metadata=dict(opts.metadata) if opts.metadata else None,
        thinking=dict(opts.thinking) if opts.thinking else None,
        effort=opts.effort,
        betas=list(opts.betas) if opts.betas else None,
        user=opts.user,
    )
