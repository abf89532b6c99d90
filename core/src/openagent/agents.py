"""Subagents: `AgentDefinition`, the ``Task`` tool that runs them, and `as_tool` for agents built in code.

A subagent is a child `Conversation` with its own history. It inherits the parent's tools (narrowed by the
definition's ``tools``), permissions and hooks; its messages reach the caller with ``parent_tool_use_id``
set to the delegating call's id, and its final text is that call's result::

    options = AgentOptions(
        model="ollama:qwen3",
        tools=[read_file],
        agents={"reviewer": AgentDefinition("Reviews code", "You review code.", tools=["read_file"])},
    )
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import anyio

from .errors import ConfigError, ToolError
from .hooks import merge_hooks, run_hooks
from .tools import Tool, ToolContext, tool
from .types import AssistantMessage, ResultMessage, TextBlock, ThinkingBlock, ToolUseBlock, UserMessage

if TYPE_CHECKING:
    from .models import Provider
    from .options import AgentOptions

__all__ = ["MAX_DEPTH", "AgentDefinition", "as_tool", "task_tool"]

logger = logging.getLogger("openagent.agents")

MAX_DEPTH = 3
"""How deep subagents may nest (a subagent calling a subagent …) before the call is refused."""

_INHERIT = frozenset({"inherit", "sonnet", "opus", "haiku"})
"""Model names that mean "the parent's model" (Claude's aliases name models no other provider has)."""


@dataclass
class AgentDefinition:
    """A subagent the ``Task`` tool can run (the Claude Agent SDK's fields)."""

    description: str
    """When to use this agent, for the model choosing one."""
    prompt: str
    """The agent's system prompt."""
    tools: Sequence[str] | None = None
    """Names of the parent's tools the agent may use; ``None`` means all of them."""
    model: str | Provider | None = None
    """``None`` or ``"inherit"``: the parent's model; else a ``"provider:model"`` string or a provider."""
    max_turns: int | None = None
    """The agent's own turn limit; ``None`` keeps the parent's."""
    disallowed_tools: Sequence[str] = ()
    """Tools removed from the agent's set."""

    def __post_init__(self) -> None:
        for name in ("tools", "disallowed_tools"):  # a string would be read per character: fail open
            if isinstance(getattr(self, name), str):
                raise ConfigError(f"AgentDefinition.{name} must be a list of tool names, not a string")


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


def _child_options(parent: AgentOptions, definition: AgentDefinition) -> AgentOptions:
    from .options import AgentOptions

    values = {f.name: getattr(parent, f.name) for f in fields(AgentOptions)}
    model = definition.model
    if model is None or (isinstance(model, str) and model in _INHERIT):
        model = parent.model
    hooks = {k: v for k, v in (parent.hooks or {}).items() if k not in ("SessionStart", "SessionEnd")}
    values.update(
        model=model,
        system_prompt=definition.prompt,
        max_turns=definition.max_turns if definition.max_turns is not None else parent.max_turns,
        hooks=hooks or None,
        persist_session=False,  # the parent persists what the child hands it
        resume=None,
        continue_conversation=False,
        fork_session=False,
        session_id=None,
        include_partial_messages=False,
        output_format=None,
    )
    return AgentOptions(**values)


def _hooks_of(context: ToolContext) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parent's hooks as its run sees them (plugins' and its options'), and their common input keys."""
    from .plugins import registry

    options = context.options
    hooks = merge_hooks(registry().hooks, options.hooks if options is not None else None)
    hook_input = {
        "session_id": context.session_id,
        "cwd": context.cwd,
        "transcript_path": None,
        "permission_mode": options.permission_mode if options is not None else "default",
        "agent_id": context.tool_use_id,
    }
    return hooks, hook_input


def _narrow(
    child_tools: dict[str, Tool],
    inherited: Mapping[str, Tool] | None,
    tools: Sequence[str] | None,
    disallowed: Sequence[str],
) -> dict[str, Tool]:
    """The child's tools: the parent's live ones when given, narrowed by the definition."""
    chosen = (
        dict(inherited) if inherited is not None else child_tools
    )  # the parent's MCP servers, not new ones
    if tools is not None:
        chosen = {name: t for name, t in chosen.items() if name in set(tools)}
    return {name: t for name, t in chosen.items() if name not in set(disallowed)}


async def _delegate(
    options: AgentOptions,
    prompt: str,
    context: ToolContext,
    agent_type: str,
    tools: Sequence[str] | None = None,
    disallowed: Sequence[str] = (),
    inherited: Mapping[str, Tool] | None = None,
) -> dict[str, Any]:
    """Run ``prompt`` in a child conversation and return its final text as a tool result."""
    from .loop import Conversation  # the loop imports this module: import it when first needed

    if context.depth + 1 > MAX_DEPTH:
        raise ToolError(f"subagents may nest {MAX_DEPTH} deep; {agent_type!r} was not started")
    parent_hooks, hook_input = _hooks_of(context)
    started = await run_hooks(parent_hooks, "SubagentStart", {**hook_input, "agent_type": agent_type})
    if started.is_blocked:
        raise ToolError(started.block_reason or started.stop_reason or f"subagent {agent_type!r} was blocked")
    if started.additional_context:
        prompt = "\n\n".join([prompt, *started.additional_context])
    child = Conversation(options, parent_tool_use_id=context.tool_use_id, depth=context.depth + 1)
    try:
        await child.start()
        child.tools = _narrow(child.tools, inherited, tools, disallowed)
        result, last_text = await _run_child(child, prompt, context, agent_type)
    finally:
        with anyio.CancelScope(shield=True):
            await child.aclose()
    stop_input = {"agent_type": agent_type, "stop_hook_active": False, "last_assistant_message": last_text}
    await run_hooks(parent_hooks, "SubagentStop", {**hook_input, **stop_input, "agent_transcript_path": None})
    if result is None or result.is_error:
        subtype = result.subtype if result is not None else "no result"
        text = f"subagent {agent_type!r} stopped ({subtype}): {last_text}".rstrip()
        return {"content": text, "is_error": True}
    return {"content": result.result or last_text}


def _task(subtype: str, context: ToolContext, **data: Any) -> Any:
    from .types import system_message

    data = {"task_id": context.tool_use_id, "tool_use_id": context.tool_use_id, **data}
    return system_message(subtype, {**data, "session_id": context.session_id, "uuid": uuid.uuid4().hex})


async def _run_child(
    child: Any, prompt: str, context: ToolContext, agent_type: str
) -> tuple[ResultMessage | None, str]:
    """Run the child, handing its messages on (between task messages); its result and last text.

    The child is registered as a running task under its ``Task`` call's id, for ``Client.stop_task``.
    """
    emit = context.emit or (lambda message: None)
    forward_text = getattr(context.options, "forward_subagent_text", True)
    tasks = context.tasks if context.tasks is not None else {}
    result: ResultMessage | None = None
    last_text, started = "", time.monotonic()
    emit(_task("task_started", context, description=agent_type, task_type="local_agent"))
    emit(UserMessage(content=prompt, parent_tool_use_id=context.tool_use_id))
    tasks[context.tool_use_id] = child
    try:
        async with aclosing(child.run(prompt)) as messages:
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
    stopped = result is not None and result.stop_reason == "interrupted"
    status = "stopped" if stopped else "failed" if result is None or result.is_error else "completed"
    usage = {
        "total_tokens": result.usage.total_tokens if result and result.usage else 0,
        "tool_uses": sum(
            isinstance(block, ToolUseBlock)
            for message in child.history
            if isinstance(message, AssistantMessage)
            for block in message.content
        ),
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    emit(_task("task_notification", context, status=status, summary=last_text, output_file="", usage=usage))
    return result, last_text


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
        options = _child_options(context.options, definition)
        inherited = getattr(context, "tools", None)  # set by loops whose ToolContext carries the tools
        if inherited is not None:
            options.mcp_servers = None
        return await _delegate(
            options, prompt, context, subagent_type, definition.tools, definition.disallowed_tools, inherited
        )

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
    from .options import AgentOptions

    values = {f.name: getattr(options, f.name) for f in fields(AgentOptions)}
    values.update(
        persist_session=False, resume=None, continue_conversation=False, include_partial_messages=False
    )
    child_options = AgentOptions(**values)

    async def delegate(prompt: str, context: ToolContext) -> dict[str, Any]:
        """Delegate a task.

        Args:
            prompt: The task, with all the context the agent needs.
            context: The calling run (given by the loop, not by the model).
        """
        return await _delegate(child_options, prompt, context, name)

    return tool(name, description)(delegate)
