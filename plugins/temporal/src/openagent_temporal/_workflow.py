"""The workflow: one durable run of an agent, deciding with the core's steps and acting through activities.

The workflow holds what a run decides (the core step's typed outcomes: `decide`, `after_tools`,
`turn_limit`, `result_message`) and the run's state; every model turn, tool call, session write, hook that
may do I/O, and compaction is an activity, so replaying the history after a crash repeats none of them.

Outside the run, through Temporal:

- update ``approve(tool_use_id, answer)``: a person's answer to a call that asked (validated: only a call
  that is waiting can be answered); the run may wait for it for days, across worker restarts.
- signal ``interrupt``: stop the turn in flight (its activities are cancelled) and finish as `query()` does
  (``error_during_execution``, stop reason ``interrupted``).
- update ``wait_messages(after)``: the messages after the first ``after``, as soon as there are any (a
  long poll: a follower never polls a file); query ``messages(after)``: the same without waiting (also on a
  finished run); query ``pending_approvals``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
)

with workflow.unsafe.imports_passed_through():
    from openagent import (
        AssistantMessage,
        Compaction,
        SystemMessage,
        ToolResultBlock,
        ToolUseBlock,
        UserMessage,
    )
    from openagent.plugin import (
        ConfigError,
        Finish,
        FollowUp,
        ModelRequest,
        Outcome,
        Pause,
        RunState,
        Runtime,
        RunTools,
        ToolCallResult,
        after_tools,
        count_turn,
        decide,
        hook_input,
        parse_message,
        prepare_request,
        result_message,
        tool_results,
        turn_limit,
    )

    from . import _activities, _registry
    from ._outcomes import outcome_from_json
    from ._spec import WORKFLOW, Approval, RunSpec, ToolInput, TurnInput

__all__ = ["AgentWorkflow"]

_QUICK = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30), maximum_attempts=20,
    non_retryable_error_types=["ConfigError", "SessionError", "ValidationError", "TypeError", "KeyError"],
)  # fmt: skip
"""Session reads and writes, hooks: retried through a store's or a hook's passing trouble, not for a fault
that would recur (a missing session, a prompt that is not one)."""

_ONCE = RetryPolicy(maximum_attempts=1)
"""A question whose answer the run can do without: asked once."""


@workflow.defn(name=WORKFLOW)
class AgentWorkflow:
    """One durable run of one prompt (a subagent's run is a child workflow of the same type)."""

    def __init__(self) -> None:
        self._messages: list[dict[str, Any]] = []
        self._unsaved: list[dict[str, Any]] = []
        self._asks: dict[str, dict[str, Any]] = {}
        self._answers: dict[str, Approval] = {}
        self._interrupted = False
        self._done = False
        self._running: set[asyncio.Task[Any]] = set()
        self._fell_back = False
        self._overflowed = False  # the last model turn failed with a context overflow
        self._window: int | None = None  # what the model's server reported, once asked
        self._asked_window = False

    # -- the run --------------------------------------------------------------------------------------

    @workflow.run
    async def run(self, spec: RunSpec) -> dict[str, Any]:
        """Drive the prompt to its result (as `Conversation.run` does, step by step); the result message."""
        began = workflow.time()
        runtime, state, outcome = await self._begin(spec)
        last: AssistantMessage | None = None
        while not isinstance(outcome, Finish | Pause):
            if isinstance(outcome, FollowUp):
                state.remember(self._keep(outcome.message, say=False))
            elif isinstance(outcome, RunTools):
                state.await_answers(outcome.pending)
                done = await self._run_tools(spec, runtime, state, outcome.calls)
                emitted, answer, ends_turn = tool_results(runtime, state, outcome.calls, done)
                for message in emitted:
                    self._keep(message)
                if answer is not None:
                    state.remember(self._keep(answer))
                assert last is not None
                ended = after_tools(runtime, state, last, ends_turn=ends_turn, interrupted=self._interrupted)
                if ended is not None:
                    outcome = ended
                    continue
            if (limit := turn_limit(runtime, state, last)) is not None:
                outcome = limit
                continue
            turned, runtime, state = await self._compacted_turn(spec, runtime, state)
            if isinstance(turned, Finish):
                outcome = turned
                continue
            response = parse_message(turned["message"])
            assert isinstance(response, AssistantMessage)
            count_turn(runtime, state, response, turned["seconds"], turned["cost"])
            if response.content or not self._interrupted:
                fields = {"latency_ms": int(turned["seconds"] * 1000), "cost_usd": turned["cost"]}
                response = self._keep(response, fields=fields)
                if response.stop_reason != "incomplete":
                    state.remember(response)
            last = response
            state, outcome = await self._decide(spec, runtime, state, response)
        return await self._close(spec, runtime, state, outcome, last, began)

    async def _begin(self, spec: RunSpec) -> tuple[Runtime, RunState, Outcome]:
        """The run's runtime, its state (the session's history when it resumes) and first outcome."""
        try:
            runtime = _registry.runtime_for(spec)
        except ConfigError as exc:  # an agent this worker does not run, an option a run may not set
            raise ApplicationError(str(exc), type="ConfigError", non_retryable=True) from None
        try:
            opened = await workflow.execute_local_activity(  # short, and safe to run again: local
                _activities.start, spec, start_to_close_timeout=timedelta(minutes=5), retry_policy=_QUICK
            )
        except FailureError as exc:  # no session to resume, a prompt that is not one: said in the result
            return (
                runtime,
                RunState(session_id=spec.session_id),
                Finish("error_during_execution", _reason(exc)),
            )
        self._say(opened["init"])
        return runtime, RunState.from_json(opened["state"]), outcome_from_json(opened["outcome"])

    async def _close(
        self, spec: RunSpec, runtime: Runtime, state: RunState, outcome: Finish | Pause,
        last: AssistantMessage | None, began: float,
    ) -> dict[str, Any]:  # fmt: skip
        """The one exit: the `ResultMessage` (timed by the workflow's clock), written and handed on."""
        result = result_message(outcome, state, 0.0, last).model_copy(
            update={"duration_ms": int((workflow.time() - began) * 1000), "uuid": workflow.uuid4().hex}
        )
        self._keep(result)
        await self._persist(spec, runtime, state)
        self._done = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        out: dict[str, Any] = {"result": result.model_dump(mode="json"), "session_id": state.session_id}
        if spec.subagent is not None:  # the parent hands the child's messages on, as the Task tool does
            out["messages"] = self._messages
        return out

    async def _model_turn(
        self, spec: RunSpec, runtime: Runtime, state: RunState, request: ModelRequest
    ) -> tuple[dict[str, Any] | Finish, Runtime]:
        """One model turn as an activity; on a failure the retries did not cure, once per run, the same
        turn on ``fallback_model`` (as the in-process loop does), whose runtime the run then keeps.
        """  # noqa: D205
        entries = self._take_unsaved(runtime, state)  # written by the turn, before it asks the model
        while True:
            try:
                return await self._turn(spec, runtime, state, request, entries), runtime
            except (FailureError, asyncio.CancelledError) as exc:
                if self._interrupted:
                    return _cut(runtime), runtime
                failure = exc
            fallback = runtime.options.fallback_model
            if fallback is None or self._fell_back or _kind(failure) == "ContextWindowExceededError":
                break
            self._fell_back = True
            failed = (runtime.model, _reason(failure))
            workflow.logger.warning("model %s failed (%s); using the fallback model", *failed)
            runtime = _registry.runtime_for(spec, fallback=True)
            request = dataclasses.replace(request, model=runtime.model, model_profile=runtime.profile)
        self._overflowed = _kind(failure) == "ContextWindowExceededError"
        self._unsaved[:0] = entries  # not written, perhaps: the last write has them (ids make it harmless)
        return Finish("error_during_execution", _reason(failure)), runtime

    async def _turn(
        self, spec: RunSpec, runtime: Runtime, state: RunState, request: ModelRequest, entries: list[Any]
    ) -> dict[str, Any]:
        agent = _registry.agent(spec.agent)
        given = TurnInput(
            spec, request.to_json(), state.session_key, hook_input(runtime, state), entries, self._fell_back
        )
        if agent.local_model_turns:
            handle = workflow.start_local_activity(
                _activities.turn,
                given,
                start_to_close_timeout=agent.model_timeout,
                retry_policy=agent.model_retry,
            )
        else:
            handle = workflow.start_activity(
                _activities.turn,
                given,
                start_to_close_timeout=agent.model_timeout,
                heartbeat_timeout=agent.heartbeat_timeout,
                retry_policy=agent.model_retry,
            )
        return await self._watched(handle)  # type: ignore[no-any-return]

    async def _decide(
        self, spec: RunSpec, runtime: Runtime, state: RunState, response: AssistantMessage
    ) -> tuple[RunState, Outcome]:
        """`decide` here, unless Stop hooks or a schema must run: those may do I/O, in an activity (which
        hands back the state as the hooks left it).
        """  # noqa: D205
        if self._interrupted or not (runtime.hooks.get("Stop") or runtime.output is not None):
            return state, await decide(runtime, state, response, interrupted=self._interrupted)
        try:
            decided = await workflow.execute_local_activity(
                _activities.decide_turn,
                args=[spec, state.to_json(), response.model_dump(mode="json")],
                start_to_close_timeout=timedelta(minutes=5),
                retry_policy=_QUICK,
            )
        except FailureError as exc:  # the hooks failed for good: the run ends, saying why
            return state, Finish("error_during_execution", f"the Stop hooks failed: {_reason(exc)}")
        return RunState.from_json(decided["state"]), outcome_from_json(decided["outcome"])

    async def _run_tools(
        self, spec: RunSpec, runtime: Runtime, state: RunState, calls: list[Any]
    ) -> list[ToolCallResult | None]:
        if runtime.options.parallel_tool_calls is False or len(calls) == 1:
            return [await self._tool(spec, runtime, state, call) for call in calls]
        return list(await asyncio.gather(*(self._tool(spec, runtime, state, call) for call in calls)))

    async def _tool(
        self, spec: RunSpec, runtime: Runtime, state: RunState, call: Any
    ) -> ToolCallResult | None:
        """One call: a subagent as a child workflow, anything else as an activity; waits for a person's
        answer when the call asks; ``None`` when an interrupt cut it off.
        """  # noqa: D205
        if self._interrupted:
            return None
        if _is_subagent(runtime, call):
            return await self._subagent(spec, runtime, state, call)
        agent, approval = _registry.agent(spec.agent), None
        while True:
            given = ToolInput(
                spec=spec, call=call.model_dump(mode="json"), session_id=state.session_id,
                permission_mode=state.permission_mode, allowed=state.allowed, disallowed=state.disallowed,
                ask=state.ask, session_key=state.session_key, approval=approval,
                hook_base=hook_input(runtime, state),
            )  # fmt: skip
            handle = workflow.start_activity(
                _activities.call_tool,
                given,
                start_to_close_timeout=agent.tool_timeout,
                heartbeat_timeout=agent.heartbeat_timeout,
                retry_policy=agent.tool_retry(getattr(call, "name", "")),
            )
            try:
                done = await self._watched(handle)
            except (FailureError, asyncio.CancelledError) as exc:
                if self._interrupted:
                    return None
                text = (
                    f"Error: the call did not complete ({_reason(exc)}); it may or may not have taken effect"
                )
                return ToolCallResult(ToolResultBlock(tool_use_id=call.id, content=text, is_error=True))
            self._unsaved.extend({"_record": entry} for entry in done.get("records", ()))
            if "ask" not in done:
                rules = done["rules"]
                for behavior, key in (("allow", "allowed"), ("deny", "disallowed"), ("ask", "ask")):
                    state.set_rules(behavior, rules[key])  # type: ignore[arg-type]
                state.set_permission_mode(rules["permission_mode"])
                return ToolCallResult.from_json(done["result"])
            ask = {"tool_use_id": call.id, **done["ask"], "run_id": workflow.info().workflow_id}
            await self._asked(ask)
            await self._persist(spec, runtime, state)
            await workflow.wait_condition(lambda: call.id in self._answers or self._interrupted)
            self._asks.pop(call.id, None)
            await self._tell_parent("settled", call.id)
            if call.id not in self._answers:
                return None
            approval = self._answers.pop(call.id)

    async def _subagent(
        self, spec: RunSpec, runtime: Runtime, state: RunState, call: ToolUseBlock
    ) -> ToolCallResult:
        """A ``Task`` call as a child workflow, between the parent's SubagentStart and SubagentStop hooks."""
        kind, prompt = call.input["subagent_type"], str(call.input.get("prompt", ""))
        base = {
            "session_id": state.session_id, "cwd": str(runtime.cwd), "transcript_path": None,
            "permission_mode": state.permission_mode, "agent_id": call.id, "agent_type": kind,
        }  # fmt: skip
        said = await self._subagent_hook(spec, runtime, "SubagentStart", base)
        if said["blocked"] is not None:
            return ToolCallResult(
                ToolResultBlock(tool_use_id=call.id, content=said["blocked"], is_error=True)
            )
        prompt = "\n\n".join([prompt, *said["context"]])
        child = RunSpec(
            agent=spec.agent, prompt=prompt, session_id=state.session_id,
            overrides=spec.overrides, subagent=kind, parent_tool_use_id=call.id, depth=spec.depth + 1,
            parent_permission_mode=state.permission_mode,
        )  # fmt: skip
        try:  # a call id the model repeated makes a child id that is taken: that call fails, not the run
            handle = await workflow.start_child_workflow(
                AgentWorkflow.run, child, id=f"{workflow.info().workflow_id}/{call.id}"
            )
            done = await self._watched(handle)
        except (FailureError, asyncio.CancelledError) as exc:
            content = f"subagent {kind!r} stopped: {_reason(exc)}"
            return ToolCallResult(ToolResultBlock(tool_use_id=call.id, content=content, is_error=True))
        result = parse_message(done["result"])
        messages = [parse_message(m) for m in done["messages"]]
        handed = [m for m in messages if isinstance(m, AssistantMessage | UserMessage)]
        last = next((_text(m) for m in reversed(handed) if isinstance(m, AssistantMessage) and _text(m)), "")
        stop = {"stop_hook_active": False, "last_assistant_message": last, "agent_transcript_path": None}
        await self._subagent_hook(spec, runtime, "SubagentStop", {**base, **stop})
        if getattr(result, "is_error", True):
            content = (
                f"subagent {kind!r} stopped ({getattr(result, 'subtype', 'no result')}): {last}".rstrip()
            )
            block = ToolResultBlock(tool_use_id=call.id, content=content, is_error=True)
        else:
            block = ToolResultBlock(tool_use_id=call.id, content=getattr(result, "result", None) or last)
        return ToolCallResult(block, messages=handed)  # type: ignore[arg-type]

    async def _subagent_hook(
        self, spec: RunSpec, runtime: Runtime, event: str, data: dict[str, Any]
    ) -> dict[str, Any]:
        """The parent's hooks for a subagent's start or stop, as a local activity (when there are any)."""
        if not runtime.hooks.get(event):
            return {"blocked": None, "context": []}
        return await workflow.execute_local_activity(  # type: ignore[no-any-return]
            _activities.subagent_hook,
            args=[spec, event, data],
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=_QUICK,
        )

    async def _watched(self, task: Any) -> Any:
        """Await an activity or child workflow that an interrupt cancels."""
        self._running.add(task)
        try:
            return await task
        finally:
            self._running.discard(task)

    async def _compacted_turn(
        self, spec: RunSpec, runtime: Runtime, state: RunState
    ) -> tuple[dict[str, Any] | Finish, Runtime, RunState]:
        """Compact if the history nears the window, then the model turn; if the endpoint still says the
        context overflowed, compact for real once and ask again (as the in-process loop does).
        """  # noqa: D205
        state = await self._compact(spec, runtime, state)
        turned, runtime = await self._model_turn(spec, runtime, state, prepare_request(runtime, state))
        if self._overflowed and runtime.options.compaction is not None and state.history:
            self._overflowed = False
            state = await self._compact(spec, runtime, state, force=True)
            turned, runtime = await self._model_turn(spec, runtime, state, prepare_request(runtime, state))
        self._overflowed = False
        return turned, runtime, state

    async def _compact(
        self, spec: RunSpec, runtime: Runtime, state: RunState, *, force: bool = False
    ) -> RunState:
        """Compact the history when it nears the model's known window, or now with ``force`` (compaction is
        an activity).
        """  # noqa: D205
        policy = runtime.options.compaction
        if policy is None or not state.history:
            return state
        window = policy.window(runtime.profile) or await self._reported_window(spec, policy, state)
        if not force and (window is None or not policy.needed(state.history, window, runtime.extra_tokens())):
            return state
        compacted = await workflow.execute_activity(
            _activities.compact_history,
            args=[spec, state.to_json(), window, force],
            start_to_close_timeout=_registry.agent(spec.agent).model_timeout,
            retry_policy=_registry.agent(spec.agent).model_retry,
            heartbeat_timeout=_registry.agent(spec.agent).heartbeat_timeout,
        )
        state = RunState.from_json(compacted["state"])
        history = [m.model_dump(mode="json", exclude_none=True) for m in state.history]
        self._keep(parse_message(compacted["boundary"]), fields={"history": history})
        return state

    async def _reported_window(self, spec: RunSpec, policy: Compaction, state: RunState) -> int | None:
        """The window the model's server reports, as in-process: asked once, when it could matter (a local
        activity: the answer is in the history, so a replay does not ask again).
        """  # noqa: D205
        if self._asked_window or not policy.worth_asking(state.history):
            return self._window
        self._asked_window = True
        try:
            self._window = await workflow.execute_local_activity(
                _activities.model_window,
                args=[spec, self._fell_back],
                start_to_close_timeout=timedelta(minutes=1),
                retry_policy=_ONCE,
            )
        except FailureError as exc:  # a server (or provider) that cannot say is no reason to fail the run
            workflow.logger.warning("the model's context window could not be read: %s", _reason(exc))
        return self._window

    def _take_unsaved(self, runtime: Runtime, state: RunState) -> list[dict[str, Any]]:
        """The messages not yet in the session store (none when the run keeps no session)."""
        entries, self._unsaved = self._unsaved, []
        return entries if runtime.store is not None and state.session_key is not None else []

    async def _persist(self, spec: RunSpec, runtime: Runtime, state: RunState) -> None:
        """Write the messages not yet in the session store (one activity per batch)."""
        entries = self._take_unsaved(runtime, state)
        if not entries:
            return
        await workflow.execute_local_activity(  # idempotent (entries carry ids): local
            _activities.persist,
            args=[spec, state.session_key, state.session_id, entries],
            start_to_close_timeout=timedelta(minutes=1),
            retry_policy=_QUICK,
        )

    def _keep(self, message: Any, *, say: bool = True, fields: dict[str, Any] | None = None) -> Any:
        """Give a message its id (from the workflow: the same on replay), queue it for the session store,
        and hand it to followers unless ``say`` is off (a follow-up prompt, as `query()` does not yield it).
        """  # noqa: D205
        if getattr(message, "uuid", "missing") is None:
            message = message.model_copy(update={"uuid": workflow.uuid4().hex})
        data = message.model_dump(mode="json")
        self._unsaved.append({**data, "_entry": fields} if fields else data)
        if say:
            self._messages.append(data)
        return message

    def _say(self, message: Any) -> None:
        data = message if isinstance(message, dict) else message.model_dump(mode="json")
        if data.get("subtype") == "init":  # its entry id from the workflow: the same on replay
            self._unsaved.append({**data, "_entry": {"uuid": workflow.uuid4().hex}})
        self._messages.append(data)

    # -- from outside -------------------------------------------------------------------------------------

    @workflow.signal
    def interrupt(self) -> None:
        """Stop the turn in flight and finish the run as interrupted."""
        self._interrupted = True
        for task in list(self._running):
            task.cancel()

    @workflow.update
    async def approve(self, tool_use_id: str, answer: Approval) -> str:
        """Answer a call that waits for a person (``answer.behavior``: ``allow`` or ``deny``): this run's,
        or a subagent's (a child workflow's, at any depth: the answer is passed on to it).
        """  # noqa: D205
        run_id = self._asks[tool_use_id].get("run_id")
        if run_id and run_id != workflow.info().workflow_id:
            self._asks.pop(tool_use_id, None)
            await workflow.get_external_workflow_handle(run_id).signal("answer", args=[tool_use_id, answer])
        else:
            self._answers[tool_use_id] = answer
        return answer.behavior

    @workflow.signal
    def answer(self, tool_use_id: str, answer: Approval) -> None:
        """An answer a parent run passed on (see `approve`); ignored unless the call still waits."""
        if tool_use_id in self._asks:
            self._answers[tool_use_id] = answer

    @workflow.signal
    async def child_asked(self, ask: dict[str, Any]) -> None:
        """A subagent's call waits for a person: this run's followers see it and may answer it here."""
        await self._asked(ask)

    @workflow.signal
    async def child_settled(self, tool_use_id: str) -> None:
        """A subagent's call no longer waits (answered, or its run interrupted)."""
        self._asks.pop(tool_use_id, None)
        await self._tell_parent("settled", tool_use_id)

    async def _asked(self, ask: dict[str, Any]) -> None:
        """A call (this run's or a subagent's) waits for a person: list it, tell followers and the parent."""
        self._asks[ask["tool_use_id"]] = ask
        self._say(SystemMessage(subtype="permission_request", data=dict(ask)))
        await self._tell_parent("asked", ask)

    async def _tell_parent(self, what: str, data: Any) -> None:
        parent = workflow.info().parent
        if parent is not None:
            handle = workflow.get_external_workflow_handle(parent.workflow_id)
            await handle.signal(f"child_{what}", data)

    @approve.validator
    def _check_approval(self, tool_use_id: str, answer: Approval) -> None:
        if tool_use_id not in self._asks:
            waiting = ", ".join(sorted(self._asks)) or "none"
            raise ApplicationError(
                f"no tool call {tool_use_id!r} is waiting for approval (waiting: {waiting})"
            )
        if answer.behavior not in ("allow", "deny"):
            raise ApplicationError(f"an approval is 'allow' or 'deny', not {answer.behavior!r}")

    @workflow.update
    async def wait_messages(self, after: int) -> dict[str, Any]:
        """The messages after the first ``after``, once there are any (or the run is over)."""
        await workflow.wait_condition(lambda: len(self._messages) > after or self._done)
        return {"messages": self._messages[after:], "done": self._done}

    @workflow.query
    def messages(self, after: int) -> dict[str, Any]:
        """The messages after the first ``after``, now."""
        return {"messages": self._messages[after:], "done": self._done}

    @workflow.query
    def pending_approvals(self) -> list[dict[str, Any]]:
        """The calls waiting for a person's answer."""
        return list(self._asks.values())


def _is_subagent(runtime: Runtime, call: Any) -> bool:
    if not isinstance(call, ToolUseBlock) or call.name != "Task":
        return False
    kind = call.input.get("subagent_type")
    return isinstance(kind, str) and kind in (runtime.options.agents or {})


def _cut(runtime: Runtime) -> dict[str, Any]:
    """What is left of a turn an interrupt cancelled: nothing (a durable turn hands on no partial output)."""
    message = AssistantMessage(content=[], model=runtime.model, parent_tool_use_id=runtime.parent_tool_use_id)
    return {"message": message.model_dump(mode="json"), "seconds": 0.0, "cost": None}


def _text(message: AssistantMessage) -> str:
    return "".join(getattr(block, "text", "") for block in message.content)


def _kind(exc: BaseException) -> str | None:
    """The error class a failed activity reported (the provider error's, for a model turn)."""
    while isinstance(exc, ActivityError | ChildWorkflowError) and exc.cause is not None:
        exc = exc.cause
    return exc.type if isinstance(exc, ApplicationError) else None


def _reason(exc: BaseException) -> str:
    """The innermost message of an activity's or child's failure (the provider's own words)."""
    while isinstance(exc, ActivityError | ChildWorkflowError) and exc.cause is not None:
        exc = exc.cause
    if isinstance(exc, CancelledError | asyncio.CancelledError):
        return "cancelled"
    return str(exc) or type(exc).__name__
