"""Durable openagent runs on Temporal: a run is a workflow, each model turn and tool call an activity.

Workers (``openagent worker``, or `worker` in code) run agents by name; any process starts a run
(`durable_query`, `start_run`), follows it (`DurableRun.messages`), answers its approvals
(`DurableRun.approve`, ``openagent approve``) or interrupts it. ``openagent batch`` fans a JSONL file of
prompts out over the workers. See docs/scale-out.md.

temporalio is asyncio-only: so is this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.plugin import hookimpl

if TYPE_CHECKING:
    from ._client import DurableRun, attach, durable_query, start_run
    from ._registry import DurableAgent
    from ._worker import run, run_worker, worker
    from ._workflow import AgentWorkflow

__all__ = [
    "AgentWorkflow",
    "DurableAgent",
    "DurableRun",
    "attach",
    "durable_query",
    "register_commands",
    "run",
    "run_worker",
    "start_run",
    "worker",
]

_WHERE = {
    "DurableRun": "._client",
    "attach": "._client",
    "durable_query": "._client",
    "start_run": "._client",
    "DurableAgent": "._registry",
    "run": "._worker",
    "run_worker": "._worker",
    "worker": "._worker",
    "AgentWorkflow": "._workflow",
}


def __getattr__(name: str) -> Any:
    # temporalio loads when it is first used, not when the plugin manager loads this plugin.
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def register_commands(cli: Any) -> None:
    """``openagent worker``, ``openagent batch`` and ``openagent approve``."""
    from ._cli import approve, batch, worker_command

    for command in (worker_command, batch, approve):
        cli.add_command(command)
