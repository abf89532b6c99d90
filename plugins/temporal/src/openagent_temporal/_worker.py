"""A worker: runs the agent workflow and its activities for the agents it is given."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import Any, TypeVar

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from openagent import AgentOptions

from . import _registry
from ._activities import ACTIVITIES
from ._registry import DurableAgent
from ._workflow import AgentWorkflow

__all__ = ["run", "run_worker", "worker"]

T = TypeVar("T")

PASSED_THROUGH = (
    "openagent",
    "openagent_temporal",
    "pydantic",
    "pydantic_core",
    "anyio",
    "httpx",
    "httpcore",
)
"""Modules the workflow sandbox imports once, not per run: the core's decisions are deterministic, and
re-importing the package for every workflow would cost more than the run."""


@contextlib.asynccontextmanager
async def worker(
    client: Client,
    task_queue: str,
    agents: Mapping[str, AgentOptions | DurableAgent],
    *,
    sandboxed: bool = True,
    **worker_options: Any,
) -> AsyncIterator[Worker]:
    """Run a worker for ``agents`` on ``task_queue`` while the block runs.

    Each agent's runtime (provider, tools, MCP connections, session store) is opened once, here, and
    closed when the block ends. ``worker_options`` go to `temporalio.worker.Worker` (concurrency limits…).

    ``sandboxed``: run the workflow in Temporal's sandbox, which catches non-deterministic code in the
    workflow (the default). The workflow's decisions are the core's steps, deterministic by design; without
    the sandbox a workflow task costs about a fifth less CPU.
    """
    await _registry.open_agents(agents)
    runner: WorkflowRunner = UnsandboxedWorkflowRunner()
    if sandboxed:
        restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
        runner = SandboxedWorkflowRunner(restrictions=restrictions)
    try:
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[AgentWorkflow],
            activities=ACTIVITIES,
            workflow_runner=runner,
            **worker_options,
        ) as running:
            yield running
    finally:
        await _registry.close_agents(agents)


async def run_worker(
    client: Client, task_queue: str, agents: Mapping[str, AgentOptions | DurableAgent], **worker_options: Any
) -> None:
    """Run a worker until cancelled (``openagent worker`` does this)."""
    import anyio

    async with worker(client, task_queue, agents, **worker_options):
        await anyio.sleep_forever()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a worker process's top coroutine to its end, as `asyncio.run` does, on uvloop where it is
    installed (a dependency on Linux and macOS): its event loop takes about a tenth less of a worker's CPU
    per durable conversation (benchmarks/durable.py). ``openagent worker`` runs through this.
    """  # noqa: D205
    try:
        import uvloop
    except ImportError:  # Windows: asyncio's own loop
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
