"""The activities: everything a run does that touches the outside world, on whichever worker takes it.

- ``openagent.start``: rebuild the session's history from the store, the init message, the prompt's hooks.
- ``openagent.model_turn``: one model turn (``ModelRequest`` → assistant message, its cost).
- ``openagent.tool_call``: one call through hooks, permissions and the tool; a call that needs a person's
  answer comes back as ``ask`` (the workflow waits for the answer, then runs the call again with it). The
  notes the loop keeps of a call (``tool_outcome``, ``permission_request``) come back with it, for the
  workflow's next session write.
- ``openagent.decide``: the decision after a turn when the agent has Stop hooks or a JSON schema (hooks may
  do I/O; without them the workflow decides itself).
- ``openagent.persist``: append messages to the session store (uuids make a retried append harmless in the
  stores that deduplicate by uuid).
- ``openagent.compact``: the history, compacted.
- ``openagent.model_window``: the context window the model's server reports (asked once per run, when the
  history grows long enough for it to matter).

Every queued activity heartbeats while it runs (the first beat after a third of the timeout: the timeout
runs from the start), so a worker that dies is noticed within the agent's ``heartbeat_timeout`` (not at the
end of the activity's start-to-close timeout). Provider errors keep the
in-process loop's classification: what `ProviderError` says is not retryable (a 400, bad credentials, a
context overflow) fails at once; a ``Retry-After`` sets the next attempt's delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import anyio
from temporalio import activity
from temporalio.exceptions import ApplicationError

from openagent import AssistantMessage, PermissionResultAllow, PermissionResultDeny
from openagent.plugin import (
    ModelRequest,
    ProviderError,
    RunState,
    Runtime,
    decide,
    entry_for,
    hook_input,
    model_turn,
    new_state,
    parse_message,
    reported_window,
    restore_session,
    run_hooks,
    submit,
    tool_call,
    turn_cost,
)

from . import _registry
from ._outcomes import call_from_json, outcome_to_json
from ._payloads import expand_messages, stash
from ._spec import RunSpec, ToolInput, TurnInput

__all__ = ["ACTIVITIES"]


@contextlib.asynccontextmanager
async def _heartbeating(every: timedelta) -> AsyncIterator[None]:
    """Heartbeat in the background while the body runs (a tool need not know it runs in an activity)."""
    if activity.info().is_local:  # a local activity lives in its workflow task: it has nothing to beat
        yield
        return
    period = max(every.total_seconds() / 3, 0.2)

    async def beat() -> None:
        # The heartbeat timeout runs from the activity's start, so the first beat can wait one period: an
        # activity shorter than that (most tool calls, most turns) sends none, and costs the server nothing.
        while True:
            await asyncio.sleep(period)  # noqa: TID251 - an activity runs on asyncio (temporalio)
            activity.heartbeat()

    # A bare task, not a task group: the body's own error must leave as itself (a task group would wrap it
    # in an exception group, and the provider error's classification would be lost).
    beating = asyncio.create_task(beat())
    try:
        yield
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating


def _failure(exc: ProviderError) -> ApplicationError:
    """A provider error as Temporal's retry policy should see it."""
    delay = timedelta(seconds=exc.retry_after) if exc.retry_after else None
    return ApplicationError(
        str(exc), type=type(exc).__name__, non_retryable=not exc.is_retryable, next_retry_delay=delay
    )


@activity.defn(name="openagent.start")
async def start(spec: RunSpec) -> dict[str, Any]:
    """Where a run begins: its state (the session's history when it resumes), init message, first outcome."""
    async with _heartbeating(_registry.agent(spec.agent).heartbeat_timeout):
        return await _start(spec)


async def _start(spec: RunSpec) -> dict[str, Any]:
    runtime = await _registry.opened_runtime(spec)
    state = new_state(runtime, spec.session_id)
    if spec.parent_permission_mode is not None:
        state.set_permission_mode(spec.parent_permission_mode)
    if runtime.store is not None and spec.subagent is None:
        key, history = await restore_session(runtime.store, runtime.cwd, spec.session_id, runtime.options)
        state.start_session(key, history)
    state.begin_prompt()
    init = runtime.init_message(state.session_id, state.permission_mode)
    outcome = await submit(runtime, state, spec.prompt, first=True)
    return {
        "state": state.to_json(),
        "init": init.model_dump(mode="json"),
        "outcome": outcome_to_json(outcome),
    }


@activity.defn(name="openagent.model_turn")
async def turn(given: TurnInput) -> dict[str, Any]:
    """One model turn: the request → the assistant message, the seconds it took, and its cost."""
    spec = given.spec
    runtime = await _registry.opened_runtime(spec, fallback=given.fallback)
    store = runtime.store
    data = {
        **given.request,
        "messages": await expand_messages(store, given.session_key, given.request["messages"]),
    }
    request = ModelRequest.from_json(data)
    request = dataclasses.replace(request, model_profile=runtime.profile)
    began = time.monotonic()
    try:
        async with _heartbeating(_registry.agent(spec.agent).heartbeat_timeout):
            await _append(runtime, given.session_key, given.entries)  # what came before
            message = await _hooked_turn(runtime, request, given.hook_base)
    except ProviderError as exc:
        raise _failure(exc) from exc
    return {
        "message": message.model_dump(mode="json"),
        "seconds": time.monotonic() - began,
        "cost": turn_cost(runtime, message),
    }


async def _hooked_turn(
    runtime: Runtime, request: ModelRequest, hook_base: dict[str, Any]
) -> AssistantMessage:
    """The turn as the in-process loop takes it: PreModelRequest hooks may replace the request,
    PostModelResponse hooks the response.
    """  # noqa: D205
    provider = getattr(getattr(runtime.provider, "profile", None), "name", None)
    pre = {**hook_base, "request": request, "provider": provider}
    asked = await run_hooks(runtime.hooks, "PreModelRequest", pre)
    if isinstance(asked.updated_request, ModelRequest):
        request = asked.updated_request
    message = await model_turn(runtime.provider, request, parent_tool_use_id=runtime.parent_tool_use_id)
    answered = await run_hooks(runtime.hooks, "PostModelResponse", {**hook_base, "response": message})
    updated = answered.updated_response
    return updated if isinstance(updated, AssistantMessage) else message


@activity.defn(name="openagent.tool_call")
async def call_tool(given: ToolInput) -> dict[str, Any]:
    """One tool call; ``{"ask": …}`` when it waits for a person, else its result and the rules after it."""
    spec = given.spec
    runtime = await _registry.opened_runtime(spec)
    rules = RunState(
        session_id=given.session_id,
        permission_mode=given.permission_mode,
        allowed=list(given.allowed),
        disallowed=list(given.disallowed),
        ask=list(given.ask),
    )
    asked: list[dict[str, Any]] = []
    scope = anyio.CancelScope()

    async def approver(tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        answer = given.approval
        if answer is None:  # nobody has answered yet: the workflow waits for a person, durably
            reason = getattr(context, "decision_reason", None)
            asked.append({"tool_name": tool_name, "tool_input": tool_input, "reason": reason})
            scope.cancel()
            await anyio.sleep_forever()
        assert answer is not None
        if answer.behavior == "allow":
            return PermissionResultAllow(updated_input=answer.updated_input)
        return PermissionResultDeny(
            message=answer.message or "denied by a person", interrupt=answer.interrupt
        )

    options = runtime.options
    if options.can_use_tool is None:
        options = options.replace(can_use_tool=approver)
    store, key = runtime.store, given.session_key
    records: list[dict[str, Any]] = []

    async def record(kind: str, **fields: Any) -> None:
        # Handed to the workflow, which writes it with the run's next batch, in order (and, being in the
        # activity's result, with the same uuid on a replay): one write less per call.
        records.append({**entry_for(kind, given.session_id), **fields})

    env = dataclasses.replace(runtime, options=options).tool_env(
        given.session_id, rules, given.hook_base, record=record if store is not None and key else None
    )
    call = call_from_json(given.call)
    with scope:
        async with _heartbeating(_registry.agent(spec.agent).heartbeat_timeout):
            result = await tool_call(env, call)
            result = await stash(store, key, result, _registry.agent(spec.agent).inline_limit)
        rules_after = {
            "permission_mode": rules.permission_mode,
            "allowed": rules.allowed,
            "disallowed": rules.disallowed,
            "ask": rules.ask,
        }
        return {"result": result.to_json(), "rules": rules_after, "records": records}
    return {"ask": asked[0], "records": records}


@activity.defn(name="openagent.decide")
async def decide_turn(spec: RunSpec, state: dict[str, Any], last: dict[str, Any]) -> dict[str, Any]:
    """The decision after a turn, for an agent whose Stop hooks or schema need running (they may do I/O)."""
    runtime = await _registry.opened_runtime(spec)
    run_state = RunState.from_json(state)
    message = parse_message(last)
    async with _heartbeating(_registry.agent(spec.agent).heartbeat_timeout):
        outcome = await decide(runtime, run_state, message, interrupted=False)  # type: ignore[arg-type]
    return {"state": run_state.to_json(), "outcome": outcome_to_json(outcome)}


@activity.defn(name="openagent.persist")
async def persist(spec: RunSpec, key: dict[str, str], session_id: str, entries: list[dict[str, Any]]) -> None:
    """Append messages (JSON data, with entry fields under ``_entry``) to the run's session."""
    runtime = await _registry.opened_runtime(spec)
    async with _heartbeating(_registry.agent(spec.agent).heartbeat_timeout):
        await _append(runtime, {**key, "session_id": session_id}, entries)


async def _append(runtime: Runtime, key: dict[str, str] | None, entries: list[dict[str, Any]]) -> None:
    """Write messages to the session: every one has a uuid, so writing them again (a retried activity)
    changes nothing (the store skips a uuid it holds).
    """  # noqa: D205
    if runtime.store is None or key is None or not entries:
        return
    rows = []
    for item in await expand_messages(runtime.store, key, entries):
        if "_record" in item:  # a note the loop keeps (a tool call's outcome), already an entry
            rows.append(item["_record"])
            continue
        data = dict(item)
        fields = data.pop("_entry", {})
        rows.append({**entry_for(parse_message(data), key["session_id"]), **fields})
    await runtime.store.append(key, rows)  # type: ignore[arg-type]


@activity.defn(name="openagent.compact")
async def compact_history(
    spec: RunSpec, state: dict[str, Any], window: int | None, force: bool
) -> dict[str, Any]:
    """Compact the history (the agent's compaction policy): the new state and the boundary message."""
    from openagent.plugin import compact

    runtime = await _registry.opened_runtime(spec)
    history = await expand_messages(runtime.store, state.get("session_key"), state["history"])
    run_state = RunState.from_json({**state, "history": history})
    policy = runtime.options.compaction
    assert policy is not None
    async with _heartbeating(_registry.agent(spec.agent).heartbeat_timeout):
        data = hook_input(runtime, run_state, trigger="auto", custom_instructions=None)
        await run_hooks(runtime.hooks, "PreCompact", data)
        history, boundary = await compact(
            run_state.history, runtime.provider, policy, model=runtime.model, trigger="auto", window=window,
            extra=runtime.extra_tokens(), force=force,
        )  # fmt: skip
    run_state.use_history(history)
    return {"state": run_state.to_json(), "boundary": boundary.model_dump(mode="json")}


@activity.defn(name="openagent.model_window")
async def model_window(spec: RunSpec, fallback: bool) -> int | None:
    """The context window the model's server reports (``None`` when it cannot say), as the in-process
    loop asks it: once per run, when the history grows long enough for the answer to matter.
    """  # noqa: D205
    runtime = await _registry.opened_runtime(spec, fallback=fallback)
    return await reported_window(runtime.provider)


@activity.defn(name="openagent.subagent_hook")
async def subagent_hook(spec: RunSpec, event: str, data: dict[str, Any]) -> dict[str, Any]:
    """The parent's SubagentStart or SubagentStop hooks (they may do I/O): whether one blocked the
    subagent, and the context they add to its prompt.
    """  # noqa: D205
    runtime = await _registry.opened_runtime(spec)
    said = await run_hooks(runtime.hooks, event, data)  # type: ignore[arg-type]
    blocked = (said.block_reason or said.stop_reason or "blocked by a hook") if said.is_blocked else None
    return {"blocked": blocked, "context": list(said.additional_context)}


ACTIVITIES = [start, turn, call_tool, decide_turn, persist, compact_history, model_window, subagent_hook]
"""Every activity a worker registers."""
