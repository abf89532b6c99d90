"""One tool call through the pipeline: PreToolUse hooks → permissions → the tool → PostToolUse hooks.

The loop runs a turn's calls (concurrently, in order, interruptibly); this module decides and runs each.
Two bare session entries record what the messages do not say: ``permission_request`` when ``can_use_tool``
is about to be asked (the run waits for an approval), and ``tool_outcome`` with the permission decision and
the call's duration once the call is decided and run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._checkpoints import EDIT_TOOLS
from ._policy import path_arguments
from .hooks import HookEvent, HookOutcome, run_hooks
from .permissions import (
    PathPolicy,
    PermissionResult,
    PermissionResultDeny,
    ToolPermissionContext,
    apply_update,
    check_permission,
)
from .tools import Tool, ToolContext
from .types import Message, ToolResultBlock, ToolUseBlock, ToolUseError

if TYPE_CHECKING:
    from .loop import Conversation

__all__ = ["run_tool_call"]


async def _decide(
    conversation: Conversation,
    call: ToolUseBlock,
    arguments: dict[str, Any],
    found: Tool,
    pre: HookOutcome,
) -> tuple[PermissionResult, bool]:
    """The permission decision for one call, and whether ``can_use_tool`` was asked for it (the
    Notification hook fires, and a ``permission_request`` entry is persisted, just before it is asked).
    """  # noqa: D205
    asked: list[str] = []
    call_id, name = call.id, call.name

    async def notify(message: str) -> None:
        asked.append(message)
        await conversation.persist("permission_request", tool_use_id=call_id, tool_name=name, reason=message)
        data = conversation.hook_input(
            message=message, notification_type="permission_prompt", title="Permission needed"
        )
        await run_hooks(conversation.hooks, "Notification", data, target="permission_prompt")

    decision = await check_permission(
        name,
        arguments,
        requires_permission=found.requires_permission,
        sandboxed=found.sandboxed is not None and found.sandboxed(arguments, conversation.options),
        mode=conversation.options.permission_mode,
        allowed=conversation.allowed,
        disallowed=conversation.disallowed,
        ask=conversation.ask,
        hook_decision=pre.permission_decision,
        hook_reason=pre.permission_decision_reason,
        can_use_tool=conversation.options.can_use_tool,
        context=ToolPermissionContext(tool_use_id=call_id),
        cwd=conversation.cwd,
        on_ask=notify,
        paths=path_arguments(found.paths, found.is_read_only, arguments),
    )
    return decision, bool(asked)


def _post_input(hook_input: dict[str, Any], arguments: Any, result: ToolResultBlock) -> dict[str, Any]:
    """What PostToolUse / PostToolUseFailure hooks get: the call, its response, structured content, error."""
    post_input = {**hook_input, "tool_input": arguments, "tool_response": result.content}
    if result.structured_content is not None:
        post_input["tool_structured_content"] = result.structured_content
    if result.is_error:
        content = result.content
        post_input["error"] = content if isinstance(content, str) else json.dumps(content)
    return post_input


def _notifier(
    conversation: Conversation, call: dict[str, Any]
) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
    """What a tool calls to run the Notification hooks about itself (its progress, for one), if any listen."""
    if not conversation.hooks.get("Notification"):
        return None
    fields = {k: call[k] for k in ("tool_name", "tool_use_id")}

    async def notify(data: dict[str, Any]) -> None:
        kind = data.get("notification_type")
        await run_hooks(
            conversation.hooks,
            "Notification",
            {**conversation.hook_input(**data), **fields},
            tool_use_id=call["tool_use_id"],
            target=kind if isinstance(kind, str) else None,
        )

    return notify


def _policy(conversation: Conversation) -> PathPolicy:
    """The rules a tool asks again when it opens a path or follows a redirect."""
    mode = conversation.options.permission_mode
    allowed, disallowed, ask = conversation.allowed, conversation.disallowed, conversation.ask
    return PathPolicy(conversation.cwd.absolute(), allowed, disallowed, ask, mode)


def _error(call_id: str, message: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call_id, content=message, is_error=True)


async def _outcome(
    conversation: Conversation,
    call: ToolUseBlock,
    decision: PermissionResult,
    asked: bool,
    started: float | None = None,
) -> None:
    """Persist the call's ``tool_outcome``: its permission decision and, when it ran, how long it took."""
    permission: dict[str, Any] = {"behavior": decision.behavior, "asked": asked}
    if isinstance(decision, PermissionResultDeny):
        permission["message"] = decision.message
    duration = None if started is None else int((time.monotonic() - started) * 1000)
    await conversation.persist(
        "tool_outcome", tool_use_id=call.id, tool_name=call.name, permission=permission, duration_ms=duration
    )


async def run_tool_call(
    conversation: Conversation, call: ToolUseBlock | ToolUseError, emit: Callable[[Message], None]
) -> tuple[ToolResultBlock | None, bool]:
    """The call's result and whether the turn must end; ``None`` when the caller answers it (client-side)."""
    if isinstance(call, ToolUseError):
        return _error(call.id, f"Error: {call.error}"), False
    found = conversation.tools.get(call.name)
    if found is None:
        known = ", ".join(conversation.tools) or "none"
        return _error(call.id, f"Error: no tool named {call.name!r}. Available tools: {known}"), False
    if found.handler is None:
        conversation.pending[call.id] = call
        return None, False
    opts, hooks = conversation.options, conversation.hooks
    hook_input = conversation.hook_input(tool_name=call.name, tool_input=call.input, tool_use_id=call.id)
    pre = await run_hooks(hooks, "PreToolUse", hook_input, tool_use_id=call.id, target=call.name)
    arguments = pre.updated_input if pre.updated_input is not None else call.input
    if pre.block_reason or not pre.continue_:
        blocked = pre.block_reason or pre.stop_reason or "blocked by a hook"
        await _outcome(conversation, call, PermissionResultDeny(message=blocked), False)
        return _error(call.id, blocked), not pre.continue_

    decision, asked = await _decide(conversation, call, arguments, found, pre)
    if isinstance(decision, PermissionResultDeny):
        await _outcome(conversation, call, decision, asked)
        conversation.denials.append({"tool_name": call.name, "tool_use_id": call.id, "tool_input": arguments})
        return _error(call.id, decision.message), decision.interrupt
    if decision.updated_input is not None:
        arguments = decision.updated_input
    for update in [*(decision.updated_permissions or ()), *pre.updated_permissions]:
        apply_update(conversation, update)
    if conversation.checkpoints is not None and isinstance(arguments.get(EDIT_TOOLS.get(call.name, "")), str):
        conversation.checkpoints.save(arguments[EDIT_TOOLS[call.name]], conversation.cwd)
    context = ToolContext(
        tool_use_id=call.id,
        session_id=conversation.session_id,
        cwd=str(conversation.cwd),
        options=opts,
        emit=emit,
        depth=conversation.depth,
        tools=conversation.tools,
        tasks=conversation.tasks,
        policy=_policy(conversation),
        notify=_notifier(conversation, hook_input),
    )
    started = time.monotonic()
    result = await found.call(call.id, arguments, context)
    await _outcome(conversation, call, decision, asked, started)
    event: HookEvent = "PostToolUseFailure" if result.is_error else "PostToolUse"
    post_input = _post_input(hook_input, arguments, result)
    post = await run_hooks(hooks, event, post_input, tool_use_id=call.id, target=call.name)
    if post.has_updated_output:
        result = result.model_copy(update={"content": post.updated_output})
    notes = [*pre.additional_context, *post.additional_context]
    notes += [post.block_reason] if post.block_reason else []
    if notes and isinstance(result.content, str):
        result = result.model_copy(update={"content": "\n\n".join([result.content, *notes])})
    return result, not post.continue_
