"""Subagents: the ``Task`` tool that runs them, and `as_tool` for agents built in code.

A subagent is a child `Conversation` with its own history, made by one function, `child`. A ``Task`` child
takes its parent's live tools (narrowed by its definition's ``tools``), permissions and hooks; an agent built
in code keeps its own options. Either way its messages reach the caller with ``parent_tool_use_id`` set to
the delegating call's id, and its final text is that call's result::

    options = AgentOptions(
        model="ollama:qwen3",
        tools=[read_file],
        agents={"reviewer": AgentDefinition("Reviews code", "You review code.", tools=["read_file"])},
    )
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import aclosing
from typing import Any

import anyio

from ._errors import ToolError
from ._hooks import HookMatcher, run_hooks
from ._loop import Conversation
from ._options import AgentDefinition, AgentOptions
from ._runtime import Inherited, Runtime, merged_hooks
from ._tools import Tool, ToolContext, tool
from ._types import (
    AssistantMessage,
    ResultMessage,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
    system_message,
)

__all__ = ["MAX_DEPTH", "AgentDefinition", "as_tool", "child", "child_runtime", "task_tool"]

logger = logging.getLogger("openagent.agents")

MAX_DEPTH = 3
"""How deep subagents may nest (a subagent calling a subagent …) before the call is refused."""

_INHERIT = frozenset({"inherit", "sonnet", "opus", "haiku"})
"""Model names that mean "the parent's model" (Claude's aliases name models no other provider has)."""
_SESSION_EVENTS = frozenset({"SessionStart", "SessionEnd"})
"""Hooks a child does not fire: its session is its parent's."""


def _definition(value: Any) -> AgentDefinition:
    """An `AgentDefinition` from one, a look-alike object (Claude's), or a dict with either spelling."""
    if isinstance(value, AgentDefinition):
        return value

    def get(*names: str) -> Any:
        for name in names:
            found = value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)
            if found is not None:
                return found
        return None

    if get("description") is None or get("prompt") is None:
        raise ToolError(f"a subagent definition needs a description and a prompt, got {value!r}")
    return AgentDefinition(
        description=get("description"),
        prompt=get("prompt"),
        tools=get("tools"),
        model=get("model"),
        max_turns=get("max_turns", "maxTurns"),
        disallowed_tools=get("disallowed_tools", "disallowedTools") or (),
    )


def _hooks(context: ToolContext) -> Mapping[str, Sequence[HookMatcher]]:
    """The calling run's merged hooks (merged from its options only for a context built by hand)."""
    if context.hooks is not None:
        return context.hooks
    return merged_hooks(context.options or AgentOptions(model="test:echo"))


def child(context: ToolContext, definition: AgentDefinition | AgentOptions) -> Conversation:
    """The one way a subagent is made: a child conversation of the run that ``context`` belongs to.

    An `AgentDefinition` derives the child's options from its parent's (its prompt, model, turn limit)
    and inherits the parent's live tools and merged hooks; `AgentOptions` (an agent built in code) are
    the child's own. Children never persist on their own (the parent records what they hand it), never
    resume, and never stream partial messages.
    """
    quiet = {"persist_session": False, "resume": None, "continue_conversation": False}
    quiet |= {"fork_session": False, "include_partial_messages": False, "include_hook_events": False}
    parent_id, depth = context.tool_use_id, context.depth + 1
    if isinstance(definition, AgentOptions):
        return Conversation(definition.replace(**quiet), inherit=Inherited(parent_id, depth))
    parent = context.options or AgentOptions()
    model = definition.model
    if model is None or (isinstance(model, str) and model in _INHERIT):
        model = parent.model
    mode = context.permission_mode or parent.permission_mode
    options = parent.replace(
        **quiet,
        model=model,
        system_prompt=definition.prompt,
        max_turns=definition.max_turns if definition.max_turns is not None else parent.max_turns,
        session_id=None,
        output_format=None,
        permission_mode=mode,
    )
    hooks = {k: v for k, v in _hooks(context).items() if k not in _SESSION_EVENTS}
    inherit = Inherited(
        parent_id,
        depth,
        tools=context.tools,
        hooks=hooks,
        only=tuple(definition.tools) if definition.tools is not None else None,
        without=tuple(definition.disallowed_tools),
    )
    return Conversation(options, inherit=inherit)


def child_runtime(context: ToolContext, definition: AgentDefinition | AgentOptions) -> Runtime:
    """The runtime (not yet opened) of the subagent `child` would make: for an engine that runs the child
    conversation itself, as a workflow of its own.
    """  # noqa: D205
    return child(context, definition).runtime


async def delegate(
    context: ToolContext, definition: AgentDefinition | AgentOptions, prompt: str, agent_type: str
) -> dict[str, Any]:
    """Run ``prompt`` in a `child` conversation and return its final text as a tool result."""
    if context.depth + 1 > MAX_DEPTH:
        raise ToolError(f"subagents may nest {MAX_DEPTH} deep; {agent_type!r} was not started")
    hooks = _hooks(context)
    options = context.options
    mode = context.permission_mode or (options.permission_mode if options is not None else "default")
    hook_input = {
        "session_id": context.session_id,
        "cwd": context.cwd,
        "transcript_path": None,
        "permission_mode": mode,
        "agent_id": context.tool_use_id,
    }
    started = await run_hooks(hooks, "SubagentStart", {**hook_input, "agent_type": agent_type})
    if started.is_blocked:
        raise ToolError(started.block_reason or started.stop_reason or f"subagent {agent_type!r} was blocked")
    if started.additional_context:
        prompt = "\n\n".join([prompt, *started.additional_context])
    conversation = child(context, definition)
    result, last_text = await _drive(conversation, prompt, context, agent_type)
    stop_input = {"agent_type": agent_type, "stop_hook_active": False, "last_assistant_message": last_text}
    await run_hooks(hooks, "SubagentStop", {**hook_input, **stop_input, "agent_transcript_path": None})
    if result is None or result.is_error:
        subtype = result.subtype if result is not None else "no result"
        text = f"subagent {agent_type!r} stopped ({subtype}): {last_text}".rstrip()
        return {"content": text, "is_error": True}
    return {"content": result.result or last_text}


def _task(subtype: str, context: ToolContext, **data: Any) -> Any:
    data = {"task_id": context.tool_use_id, "tool_use_id": context.tool_use_id, **data}
    return system_message(subtype, {**data, "session_id": context.session_id, "uuid": os.urandom(16).hex()})


async def _drive(
    conversation: Conversation, prompt: str, context: ToolContext, agent_type: str
) -> tuple[ResultMessage | None, str]:
    """Run the child, handing its messages on (between task messages): its result and last text.

    The child is registered as a running task under its ``Task`` call's id, for ``Client.stop_task``.
    """
    emit = context.emit or (lambda message: None)
    forward_text = getattr(context.options, "forward_subagent_text", True)
    tasks = context.tasks if context.tasks is not None else {}
    result: ResultMessage | None = None
    last_text, started = "", time.monotonic()
    try:
        await conversation.start()
        emit(_task("task_started", context, description=agent_type, task_type="local_agent"))
        emit(UserMessage(content=prompt, parent_tool_use_id=context.tool_use_id))
        tasks[context.tool_use_id] = conversation
        async with aclosing(conversation.run(prompt)) as messages:
            async for message in messages:
                if isinstance(message, ResultMessage):
                    result = message
                elif isinstance(message, AssistantMessage):
                    last_text = "".join(getattr(b, "text", "") for b in message.content) or last_text
                    calls = [b for b in message.content if not isinstance(b, TextBlock | ThinkingBlock)]
                    if forward_text or calls:
                        emit(message if forward_text else message.model_copy(update={"content": calls}))
                elif isinstance(message, UserMessage):
                    emit(message)
    finally:
        tasks.pop(context.tool_use_id, None)
        with anyio.CancelScope(shield=True):
            await conversation.aclose()
    emit(_task("task_notification", context, **_summary(conversation, result, last_text, started)))
    return result, last_text


def _summary(
    conversation: Conversation, result: ResultMessage | None, last_text: str, started: float
) -> dict[str, Any]:
    stopped = result is not None and result.stop_reason == "interrupted"
    status = "stopped" if stopped else "failed" if result is None or result.is_error else "completed"
    calls = sum(
        isinstance(block, ToolUseBlock)
        for message in conversation.history
        if isinstance(message, AssistantMessage)
        for block in message.content
    )
    usage = {
        "total_tokens": result.usage.total_tokens if result and result.usage else 0,
        "tool_uses": calls,
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    return {"status": status, "summary": last_text, "output_file": "", "usage": usage}


def task_tool(agents: Mapping[str, Any]) -> Tool:
    """The ``Task`` tool: runs the subagent named by ``subagent_type`` on ``prompt``.

    Args:
        agents: Subagent name → `AgentDefinition` (or Claude's `AgentDefinition`, or a dict).
    """
    definitions = {name: _definition(value) for name, value in agents.items()}
    listing = "\n".join(f"- {name}: {d.description}" for name, d in definitions.items())

    async def run_task(
        description: str, prompt: str, subagent_type: str, context: ToolContext
    ) -> dict[str, Any]:
        """Run a subagent.

        Args:
            description: A short (3-5 word) description of the task.
            prompt: The task for the agent to perform, with all the context it needs.
            subagent_type: The type of specialized agent to use.
            context: The calling run (given by the loop, not by the model).
        """
        definition = definitions.get(subagent_type)
        if definition is None:
            known = ", ".join(sorted(definitions)) or "none"
            raise ToolError(f"unknown subagent_type {subagent_type!r}; available agents: {known}")
        return await delegate(context, definition, prompt, subagent_type)

    summary = f"Launch a subagent to handle a task on its own. Available agents:\n{listing}"
    return tool("Task", summary)(run_task)


def as_tool(options: AgentOptions, name: str, description: str) -> Tool:
    """An agent built in code, as a tool another agent can call with a ``prompt``.

    The child runs with ``options`` as given (its own model, tools and prompt), in memory only; its
    messages reach the caller with ``parent_tool_use_id`` set, like a ``Task`` subagent's.

    Args:
        options: The child agent's options.
        name: The tool name the calling model sees.
        description: When to use it, for the calling model.
    """

    async def delegate_to_agent(prompt: str, context: ToolContext) -> dict[str, Any]:
        """Delegate a task.

        Args:
            prompt: The task, with all the context the agent needs.
            context: The calling run (given by the loop, not by the model).
        """
        return await delegate(context, options, prompt, name)

    return tool(name, description)(delegate_to_agent)
