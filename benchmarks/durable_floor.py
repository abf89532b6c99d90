"""The floor of benchmarks/durable.py: a conversation's Temporal steps with no agent in them.

A local activity for the start and for the first model turn, two queued activities for the tool calls (the
same ledger line and 10 ms sleep as the benchmark's tool, one attempt each, the same heartbeat timeout),
local ones for the last turn and the last session write. What Temporal itself costs on this machine, next
to which the durable set-ups' figures are read.
"""

from __future__ import annotations

import os
from datetime import timedelta

import anyio
from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import FailureError

LEDGER = {"path": ""}


@activity.defn(name="floor.step")
async def step() -> str:
    """A step with nothing in it (the start, a model turn, a session write)."""
    return "ok"


@activity.defn(name="floor.tool")
async def tool(n: int) -> str:
    """The benchmark's tool call: a ledger line, then 10 ms."""
    info = activity.info()
    fd = os.open(LEDGER["path"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{info.workflow_id} {info.activity_id} {os.getpid()}\n".encode())
    finally:
        os.close(fd)
    await anyio.sleep(0.01)
    return f"step {n} done"


ACTIVITIES = [step, tool]
_LOCAL = timedelta(seconds=30)
_ONCE = RetryPolicy(maximum_attempts=1)


@workflow.defn(name="floor.run", sandboxed=False)
class FloorWorkflow:
    """One conversation's steps: start, turn, two tool calls at once, turn, write."""

    @workflow.run
    async def run(self, prompt: str) -> str:
        await workflow.execute_local_activity(step, start_to_close_timeout=_LOCAL)  # the start
        await workflow.execute_local_activity(step, start_to_close_timeout=_LOCAL)  # the first turn
        calls = [
            workflow.execute_activity(
                tool,
                n,
                start_to_close_timeout=timedelta(minutes=5),
                heartbeat_timeout=timedelta(seconds=10),
                retry_policy=_ONCE,
            )  # fmt: skip
            for n in (1, 2)
        ]
        for call in calls:
            try:
                await call
            except FailureError:  # a call the killed worker held: the run goes on, as with a tool's
                pass
        await workflow.execute_local_activity(step, start_to_close_timeout=_LOCAL)  # the last turn
        await workflow.execute_local_activity(step, start_to_close_timeout=_LOCAL)  # the last write
        return "all done"
