"""One tool call through the pipeline: PreToolUse hooks → permissions → the tool → PostToolUse hooks.

`tool_call` is a step of its own: a `ToolEnv` (what the pipeline needs from the run: tools, hooks, rules,
mode, where it runs; never the conversation) and one call in, a `ToolCallResult` out — serialisable both
ways, so a workflow engine can run it as an activity. The loop runs a turn's calls (concurrently, in order,
interruptibly) through it.

Two bare session entries record what the messages do not say (through `ToolEnv.record`, when the run
keeps a session): ``permission_request`` when ``can_use_tool`` is about to be asked (the run waits for an
approval), and ``tool_outcome`` with the permission decision and the call's duration once it is decided and
run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._checkpoints import EDIT_TOOLS, FileCheckpoints
from ._hooks import HookEvent, HookMatcher, HookOutcome, run_hooks
from ._permissions import (
    PathPolicy,
    PermissionResult,
    PermissionResultDeny,
    PermissionState,
    ToolPermissionContext,
    apply_update,
    check_permission,
)
from ._policy import path_arguments
from ._tools import Tool, ToolContext
from ._types import Message, ToolResultBlock, ToolUseBlock, ToolUseError, json_adapter

if TYPE_CHECKING:
    from ._options import AgentOptions
    from ._permissions import CanUseTool

__all__ = ["ToolCallResult", "ToolEnv", "tool_call"]


@dataclass(frozen=True, slots=True)
class ToolEnv:
    """What the tool pipeline needs from a run: tools, hooks, permission rules and mode, where it runs."""

    tools: Mapping[str, Tool]
    hooks: Mapping[str, Sequence[HookMatcher]]
    options: AgentOptions
    session_id: str
    cwd: Path
    permissions: PermissionState
    """The rules and mode in force; an allowed call's permission updates are applied to it at once."""
    depth: int = 0
    """How many subagents deep the run is (0 for the top-level agent)."""
    parent_tool_use_id: str | None = None
    hook_base: Mapping[str, Any] = field(default_factory=dict)
    """The keys every hook input of the run has (session, cwd, permission mode, parent)."""
    checkpoints: FileCheckpoints | None = None
    """Where an edit tool's file is saved before it changes (``enable_file_checkpointing``)."""
    tasks: dict[str, Any] | None = None
    """The run's subagents running now, by task id (for ``Client.stop_task``)."""
    record: Callable[..., Awaitable[None]] | None = field(default=None, compare=False)
    """Appends a bare entry (type, fields) to the run's session, for what messages do not say (``None``:
    nothing is recorded, as when the run keeps no session)."""

    @property
    def can_use_tool(self) -> CanUseTool | None:
        """The user's permission callback."""
        return self.options.can_use_tool


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    """What one call produced: its result, whether it ended the turn, and messages it handed on."""

    result: ToolResultBlock
    ends_turn: bool = False
    """A hook said stop (``continue: false``) or a denial interrupted the turn."""
    denial: dict[str, Any] | None = None
    """The refused call (tool name, id, input), for the result's ``permission_denials``."""
    messages: list[Message] = field(default_factory=list)
    """Messages the tool emitted (a subagent's), yielded before the turn's results."""

    def to_json(self) -> dict[str, Any]:
        """The result as JSON data."""
        return json_adapter(ToolCallResult).dump_python(self, mode="json", exclude_none=True)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCallResult:
        """Rebuild a result from `to_json`'s data."""
        return json_adapter(ToolCallResult).validate_python(dict(data))


def _policy(env: ToolEnv) -> PathPolicy:
    """The rules a tool asks again when it opens a path or follows a redirect."""
    rules, cwd = env.permissions, env.cwd.absolute()
    return PathPolicy(cwd, rules.allowed, rules.disallowed, rules.ask, rules.permission_mode)


async def _decide(
    env: ToolEnv, call: ToolUseBlock, arguments: dict[str, Any], found: Tool, pre: HookOutcome
) -> tuple[PermissionResult, bool]:
    """The permission decision for one call, and whether ``can_use_tool`` was asked for it (the
    Notification hook fires, and a ``permission_request`` entry is recorded, just before it is asked).
    """  # noqa: D205
    asked: list[str] = []

    async def notify(message: str) -> None:
        asked.append(message)
        if env.record is not None:
            await env.record("permission_request", tool_use_id=call.id, tool_name=call.name, reason=message)
        data = {**env.hook_base, "message": message, "notification_type": "permission_prompt"}
        await run_hooks(
            env.hooks, "Notification", {**data, "title": "Permission needed"}, target="permission_prompt"
        )

    rules = env.permissions
    decision = await check_permission(
        call.name,
        arguments,
        requires_permission=found.requires_permission,
        sandboxed=found.sandboxed is not None and found.sandboxed(arguments, env.options),
        paths=path_arguments(found.paths, found.is_read_only, arguments),
        mode=rules.permission_mode,  # type: ignore[arg-type]
        allowed=rules.allowed,
        disallowed=rules.disallowed,
        ask=rules.ask,
        hook_decision=pre.permission_decision,
        hook_reason=pre.permission_decision_reason,
        can_use_tool=env.can_use_tool,
        context=ToolPermissionContext(tool_use_id=call.id),
        cwd=env.cwd,
        on_ask=notify,
    )
    return decision, bool(asked)


def _error(call_id: str, message: str, ends_turn: bool = False) -> ToolCallResult:
    return ToolCallResult(ToolResultBlock(tool_use_id=call_id, content=message, is_error=True), ends_turn)


async def _outcome(
    env: ToolEnv, call: ToolUseBlock, decision: PermissionResult, asked: bool, started: float | None = None
) -> None:
    """Record the call's ``tool_outcome``: its permission decision and, when it ran, how long it took."""
    if env.record is None:
        return
    permission: dict[str, Any] = {"behavior": decision.behavior, "asked": asked}
    if isinstance(decision, PermissionResultDeny):
        permission["message"] = decision.message
    duration = None if started is None else int((time.monotonic() - started) * 1000)
    await env.record(
        "tool_outcome", tool_use_id=call.id, tool_name=call.name, permission=permission, duration_ms=duration
    )


def _post_input(hook_input: dict[str, Any], arguments: Any, result: ToolResultBlock) -> dict[str, Any]:
    """What PostToolUse / PostToolUseFailure hooks get: the call, its response, structured content, error."""
    post_input = {**hook_input, "tool_input": arguments, "tool_response": result.content}
    if result.structured_content is not None:
        post_input["tool_structured_content"] = result.structured_content
    if result.is_error:
        content = result.content
        post_input["error"] = content if isinstance(content, str) else json.dumps(content)
    return post_input


def _notifier(env: ToolEnv, call: dict[str, Any]) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
    """What a tool calls to run the Notification hooks about itself (its progress, for one), if any listen."""
    if not env.hooks.get("Notification"):
        return None
    fields = {k: call[k] for k in ("tool_name", "tool_use_id")}

    async def notify(data: dict[str, Any]) -> None:
        kind = data.get("notification_type")
        await run_hooks(
            env.hooks,
            "Notification",
            {**env.hook_base, **data, **fields},
            tool_use_id=call["tool_use_id"],
            target=kind if isinstance(kind, str) else None,
        )

    return notify


async def tool_call(env: ToolEnv, call: ToolUseBlock | ToolUseError) -> ToolCallResult:
    """Run one call of a tool with a handler (client-side calls never come here: `decide` parks them)."""
    if isinstance(call, ToolUseError):
        return _error(call.id, f"Error: {call.error}")
    found = env.tools.get(call.name)
    if found is None or found.handler is None:
        known = ", ".join(env.tools) or "none"
        return _error(call.id, f"Error: no tool named {call.name!r}. Available tools: {known}")
    hook_input = {**env.hook_base, "tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id}
    pre = await run_hooks(env.hooks, "PreToolUse", hook_input, tool_use_id=call.id, target=call.name)
    arguments = pre.updated_input if pre.updated_input is not None else call.input
    if pre.block_reason or not pre.continue_:
        blocked = pre.block_reason or pre.stop_reason or "blocked by a hook"
        await _outcome(env, call, PermissionResultDeny(message=blocked), False)
        return _error(call.id, blocked, not pre.continue_)
    decision, asked = await _decide(env, call, arguments, found, pre)
    if isinstance(decision, PermissionResultDeny):
        await _outcome(env, call, decision, asked)
        refused = _error(call.id, decision.message, decision.interrupt)
        denial = {"tool_name": call.name, "tool_use_id": call.id, "tool_input": arguments}
        return ToolCallResult(refused.result, refused.ends_turn, denial=denial)
    if decision.updated_input is not None:
        arguments = decision.updated_input
    for update in [*(decision.updated_permissions or ()), *pre.updated_permissions]:
        apply_update(env.permissions, update)
    if env.checkpoints is not None and isinstance(path := arguments.get(EDIT_TOOLS.get(call.name, "")), str):
        env.checkpoints.save(path, env.cwd)
    emitted: list[Message] = []
    context = ToolContext(
        tool_use_id=call.id,
        session_id=env.session_id,
        cwd=str(env.cwd),
        options=env.options,
        emit=emitted.append,
        depth=env.depth,
        tools=env.tools,
        hooks=env.hooks,
        permission_mode=env.permissions.permission_mode,
        tasks=env.tasks,
        policy=_policy(env),
        notify=_notifier(env, hook_input),
    )
    started = time.monotonic()
    result = await found.call(call.id, arguments, context)
    await _outcome(env, call, decision, asked, started)
    result, ends_turn = await _after(env, call, hook_input, arguments, result, pre)
    return ToolCallResult(result, ends_turn, messages=emitted)


async def _after(
    env: ToolEnv,
    call: ToolUseBlock,
    hook_input: dict[str, Any],
    arguments: dict[str, Any],
    result: ToolResultBlock,
    pre: HookOutcome,
) -> tuple[ToolResultBlock, bool]:
    """The PostToolUse (or PostToolUseFailure) hooks: they may replace the output or add context."""
    event: HookEvent = "PostToolUseFailure" if result.is_error else "PostToolUse"
    post_input = _post_input(hook_input, arguments, result)
    post = await run_hooks(env.hooks, event, post_input, tool_use_id=call.id, target=call.name)
    if post.has_updated_output:
        result = result.model_copy(update={"content": post.updated_output})
    notes = [*pre.additional_context, *post.additional_context]
    notes += [post.block_reason] if post.block_reason else []
    if notes and isinstance(result.content, str):
        result = result.model_copy(update={"content": "\n\n".join([result.content, *notes])})
    return result, not post.continue_
