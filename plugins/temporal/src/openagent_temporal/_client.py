"""Starting a durable run and following it from any process: `durable_query`, `start_run`, `DurableRun`."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError

from openagent import Message, ResultMessage
from openagent.plugin import ConfigError, parse_message

from ._spec import OVERRIDABLE, WORKFLOW, Approval, RunSpec

__all__ = ["DurableRun", "attach", "durable_query", "start_run"]


class DurableRun:
    """A durable run, started here or elsewhere: follow its messages, answer its approvals, interrupt it."""

    def __init__(self, handle: WorkflowHandle[Any, Any]) -> None:
        self.handle = handle

    @property
    def id(self) -> str:
        """The run's workflow id (what `attach`, ``openagent approve`` and the Temporal UI know it by)."""
        return self.handle.id

    async def messages(self, after: int = 0) -> AsyncIterator[Message]:
        """Every message of the run from the ``after``-th on, as `query()` yields them, until its result.

        While the run goes on, each wait is one long-polling workflow update (nothing is polled on a
        timer); a finished run's messages come from a query of its history.
        """
        while True:
            try:
                got = await self.handle.execute_update("wait_messages", after, result_type=dict)
            except Exception as exc:  # the run is over: ask its history instead
                if not await self._closed(exc):
                    raise
                if await self._failed():
                    await self.handle.result()  # raises WorkflowFailureError, with the reason
                got = await self.handle.query("messages", after, result_type=dict)
                got["done"] = True
            for data in got["messages"]:
                after += 1
                yield parse_message(data)
            if got["done"]:
                return

    async def _closed(self, exc: Exception) -> bool:
        try:
            described = await self.handle.describe()
        except RPCError:
            return False
        return described.status is not None and described.status.name != "RUNNING"

    async def _failed(self) -> bool:
        described = await self.handle.describe()
        return described.status is not None and described.status.name in ("FAILED", "TERMINATED", "TIMED_OUT")

    async def result(self) -> ResultMessage:
        """Wait for the run's `ResultMessage`."""
        done = await self.handle.result()
        message = parse_message(done["result"])
        assert isinstance(message, ResultMessage)
        return message

    async def approve(
        self,
        tool_use_id: str,
        behavior: str = "allow",
        *,
        message: str = "",
        updated_input: dict[str, Any] | None = None,
        interrupt: bool = False,
        by: str | None = None,
    ) -> None:
        """Answer a tool call that waits for a person: ``allow`` (with ``updated_input``) or ``deny``.

        Raises:
            ConfigError: No such call is waiting, or ``behavior`` is neither.
        """
        answer = Approval(behavior, message, updated_input, interrupt, by)
        try:
            await self.handle.execute_update("approve", args=[tool_use_id, answer])
        except WorkflowUpdateFailedError as exc:
            raise ConfigError(str(exc.cause or exc)) from exc

    async def pending_approvals(self) -> list[dict[str, Any]]:
        """The calls waiting for an answer: ``tool_use_id``, ``tool_name``, ``tool_input``, ``reason``."""
        return await self.handle.query("pending_approvals", result_type=list)  # type: ignore[no-any-return]

    async def interrupt(self) -> None:
        """Stop the run's turn in flight; it finishes as interrupted."""
        await self.handle.signal("interrupt")


def attach(client: Client, run_id: str) -> DurableRun:
    """A run started by any process, by its workflow id."""
    return DurableRun(client.get_workflow_handle(run_id))


async def start_run(
    client: Client,
    prompt: str | dict[str, Any],
    *,
    task_queue: str,
    agent: str = "default",
    session_id: str | None = None,
    run_id: str | None = None,
    **options: Any,
) -> DurableRun:
    """Start a durable run of ``agent`` (as the workers on ``task_queue`` define it) on ``prompt``.

    Args:
        client: A connected Temporal client.
        prompt: The prompt (a string, or a user message's JSON data).
        task_queue: Where the workers listen.
        agent: The agent's name on the workers.
        session_id: The session to write (default: a new one); ``resume=`` continues an earlier one.
        run_id: The workflow id (default: derived from the session id); starting an id twice is refused.
        **options: `AgentOptions` fields this run sets: plain data only (``max_turns``, ``max_budget_usd``,
            ``permission_mode``, ``system_prompt``, ``resume``, ``fork_session``, …).
    """
    unknown = set(options) - OVERRIDABLE
    if unknown:
        raise ConfigError(
            f"a durable run cannot set {sorted(unknown)} (the worker's agent defines it); it may set "
            f"{sorted(OVERRIDABLE)}"
        )
    session = session_id or str(uuid.uuid4())
    spec = RunSpec(agent=agent, prompt=prompt, session_id=session, overrides=options)
    handle = await client.start_workflow(
        WORKFLOW, spec, id=run_id or f"openagent-{session}-{uuid.uuid4().hex[:8]}", task_queue=task_queue
    )
    return DurableRun(handle)


async def durable_query(
    *,
    prompt: str | dict[str, Any],
    client: Client,
    task_queue: str,
    agent: str = "default",
    session_id: str | None = None,
    run_id: str | None = None,
    **options: Any,
) -> AsyncIterator[Message]:
    """`query()`, durably: start a run on the workers and yield its messages until its `ResultMessage`.

    The run does not depend on this process: if it exits, the run goes on, and `attach(client, run_id)`
    follows it again. Partial stream events are not produced (a durable turn is one activity).
    """
    run = await start_run(
        client, prompt, task_queue=task_queue, agent=agent, session_id=session_id, run_id=run_id, **options
    )
    async for message in run.messages():
        yield message
