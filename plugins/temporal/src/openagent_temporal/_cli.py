"""``openagent worker``, ``openagent batch`` and ``openagent approve`` (through ``register_commands``)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import anyio
import click

__all__ = ["approve", "batch", "worker_command"]

_ADDRESS = click.option(
    "--temporal", "address", default=lambda: os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"),
    show_default="$TEMPORAL_ADDRESS or localhost:7233", help="The Temporal frontend, HOST:PORT.",
)  # fmt: skip
_NAMESPACE = click.option("--namespace", default="default", show_default=True, help="The Temporal namespace.")


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"openagent: error: {message}", err=True)
    sys.exit(code)


async def _connect(address: str, namespace: str) -> Any:
    from temporalio.client import Client

    try:
        return await Client.connect(address, namespace=namespace)
    except Exception as exc:
        _fail(f"cannot reach Temporal at {address}: {exc}", 1)


def _load_agents(reference: str) -> Mapping[str, Any]:
    """The agents ``module:attribute`` names.

    The attribute is a mapping of names to options, one `AgentOptions` (named ``default``), or a function
    returning either.
    """
    from openagent import AgentOptions

    from ._registry import DurableAgent

    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        _fail(f"--agents {reference!r}: expected module:attribute (e.g. myagents:AGENTS)")
    sys.path.insert(0, os.getcwd())
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except Exception as exc:  # a module that is not there, or fails as it loads: say which, and why
        _fail(f"--agents {reference!r}: {type(exc).__name__}: {exc}")
    if callable(value) and not isinstance(value, AgentOptions | DurableAgent):
        value = value()
    if isinstance(value, AgentOptions | DurableAgent):
        return {"default": value}
    if not isinstance(value, Mapping) or not all(
        isinstance(v, AgentOptions | DurableAgent) for v in value.values()
    ):
        _fail(f"--agents {reference!r}: expected a mapping of names to AgentOptions or DurableAgent")
    return value


@click.command("worker")
@_ADDRESS
@_NAMESPACE
@click.option("--task-queue", "-q", required=True, help="The queue the worker takes runs from.")
@click.option("--agents", "reference", help="module:attribute naming the agents (a dict of AgentOptions).")
@click.option("-m", "--model", help="The default agent's model (provider:model), when --agents is not given.")
@click.option("--base-url", help="The default agent's endpoint URL.")
@click.option("--tool", "tools", multiple=True, help="A registered tool the default agent may use (repeat).")
@click.option("--session-store", help="The default agent's session store URL (postgresql://…, redis://…).")
@click.option("--max-concurrent", type=click.IntRange(min=1), default=100, show_default=True,
              help="At most this many model turns and tool calls at once on this worker.")  # fmt: skip
def worker_command(
    address: str, namespace: str, task_queue: str, reference: str | None, model: str | None,
    base_url: str | None, tools: tuple[str, ...], session_store: str | None, max_concurrent: int,
) -> None:  # fmt: skip
    """Run a worker for durable runs: it takes model turns and tool calls from TASK_QUEUE.

    Start more on more machines to scale out; any of them may continue any run.
    """
    from openagent import AgentOptions

    if reference:
        agents = _load_agents(reference)
    elif model:
        agents = {"default": AgentOptions(model=model, base_url=base_url, tools=list(tools),
                                          session_store=session_store)}  # fmt: skip
    else:
        _fail("name the agents (--agents module:attribute) or the default agent's model (--model)")

    async def serve() -> None:
        from ._worker import worker

        client = await _connect(address, namespace)
        async with worker(client, task_queue, agents, max_concurrent_activities=max_concurrent):
            click.echo(
                f"worker on {address} queue {task_queue!r}: agents {', '.join(sorted(agents))}", err=True
            )
            await anyio.sleep_forever()

    from ._worker import run

    try:
        run(serve())
    except KeyboardInterrupt:
        pass


@click.command()
@click.argument("run_id")
@click.argument("tool_use_id", required=False)
@click.argument("decision", type=click.Choice(["allow", "deny"]), required=False)
@click.option("--message", default="", help="Why (told to the model with a denial).")
@_ADDRESS
@_NAMESPACE
def approve(run_id: str, tool_use_id: str | None, decision: str | None, message: str, address: str,
            namespace: str) -> None:  # fmt: skip
    """Answer a tool call of durable run RUN_ID that waits for a person; without TOOL_USE_ID, list them."""
    from openagent.plugin import ConfigError

    from ._client import attach

    async def answer() -> None:
        run = attach(await _connect(address, namespace), run_id)
        if tool_use_id is None:
            for waiting in await run.pending_approvals():
                click.echo(json.dumps(waiting))
            return
        if decision is None:
            _fail("say allow or deny")
        try:
            await run.approve(tool_use_id, decision, message=message, by=os.environ.get("USER"))
        except ConfigError as exc:
            _fail(str(exc), 1)
        click.echo(f"{decision}: {tool_use_id}")

    asyncio.run(answer())


def _read_prompts(path: Path, agent: str) -> list[dict[str, Any]]:
    """The lines of a prompts file, each with an id (its own, else a hash of agent and line).

    A line is a JSON string, or an object with ``prompt`` (and optionally ``id``, ``session_id`` and run
    options).
    """
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            _fail(f"{path}:{number}: not JSON: {exc}")
        if isinstance(data, str):
            data = {"prompt": data}
        if not isinstance(data, dict) or "prompt" not in data:
            _fail(f"{path}:{number}: expected a JSON string or an object with a 'prompt'")
        if "id" not in data:
            digest = hashlib.sha256(json.dumps([agent, data], sort_keys=True).encode()).hexdigest()
            data["id"] = digest[:24]
        items.append(data)
    ids = [str(item["id"]) for item in items]
    if len(set(ids)) != len(ids):
        _fail(f"{path}: two lines have the same id (ids name the runs: make them unique)")
    return items


def _finished(output: Path) -> set[str]:
    done = set()
    if output.exists():
        for line in output.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash: that run is asked for again
            if row.get("status") == "done":
                done.add(str(row["id"]))
    return done


@click.command()
@click.argument("prompts", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ADDRESS
@_NAMESPACE
@click.option("--task-queue", "-q", required=True, help="The workers' queue.")
@click.option("--agent", default="default", show_default=True, help="The agent (as the workers name it).")
@click.option("--concurrency", "-c", type=click.IntRange(min=1), default=32, show_default=True,
              help="Runs in flight at once.")  # fmt: skip
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Results JSONL (default: PROMPTS with .results.jsonl).")  # fmt: skip
def batch(prompts: Path, address: str, namespace: str, task_queue: str, agent: str, concurrency: int,
          output: Path | None) -> None:  # fmt: skip
    """Start one durable run per line of PROMPTS (JSONL), write each result as it finishes.

    Running the same command again skips the lines already done: each run's id comes from the line's
    ``id`` (or a hash of agent and line), so a run still going is followed, not started twice.
    """
    output = output or prompts.with_suffix(".results.jsonl")
    items = _read_prompts(prompts, agent)
    done = _finished(output)
    todo = [item for item in items if str(item["id"]) not in done]
    failed = asyncio.run(_batch(todo, len(items) - len(todo), len(items), output, address, namespace,
                                task_queue, agent, concurrency))  # fmt: skip
    sys.exit(1 if failed else 0)


async def _batch(todo: list[dict[str, Any]], skipped: int, total: int, output: Path, address: str,
                 namespace: str, task_queue: str, agent: str, concurrency: int) -> int:  # fmt: skip
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    client = await _connect(address, namespace)
    counts = {"done": skipped, "failed": 0, "running": 0}
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    started = time.monotonic()
    columns = [
        TextColumn("[bold]{task.description}"), BarColumn(),
        TextColumn("{task.fields[done]} done · {task.fields[failed]} failed"),
        TextColumn("· {task.fields[running]} running · {task.fields[rate]:.1f}/s"),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
    ]  # fmt: skip
    with output.open("a", encoding="utf-8") as sink, Progress(*columns, transient=False) as progress:
        bar = progress.add_task("runs", total=total, completed=skipped, **counts, rate=0.0)

        def show() -> None:
            rate = (counts["done"] + counts["failed"] - skipped) / max(time.monotonic() - started, 1e-9)
            progress.update(bar, completed=counts["done"] + counts["failed"], rate=rate, **counts)

        async def lane() -> None:
            while not queue.empty():
                item = queue.get_nowait()
                counts["running"] += 1
                show()
                row = await _one(client, item, task_queue, agent)
                counts["running"] -= 1
                counts[row["status"]] += 1
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                show()

        await asyncio.gather(*(lane() for _ in range(min(concurrency, len(todo)) or 1)))
    return counts["failed"]


async def _one(client: Any, item: dict[str, Any], task_queue: str, agent: str) -> dict[str, Any]:
    """Start (or find) one line's run and wait for it: its results row."""
    from temporalio.common import WorkflowIDReusePolicy
    from temporalio.exceptions import WorkflowAlreadyStartedError

    from ._spec import WORKFLOW, RunSpec

    run_id = f"batch-{item['id']}"
    options = {k: v for k, v in item.items() if k not in ("id", "prompt", "session_id")}
    spec = RunSpec(agent=agent, prompt=item["prompt"], session_id=str(item.get("session_id") or run_id),
                   overrides=options)  # fmt: skip
    row: dict[str, Any] = {"id": item["id"], "run_id": run_id}
    try:
        try:
            handle = await client.start_workflow(
                WORKFLOW, spec, id=run_id, task_queue=task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            )  # fmt: skip
        except WorkflowAlreadyStartedError:  # running, or done by an earlier batch: follow it
            handle = client.get_workflow_handle(run_id)
        done = await handle.result()
    except Exception as exc:
        return {**row, "status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    result = done["result"]
    status = "failed" if result.get("is_error") else "done"
    keep = ("subtype", "result", "session_id", "num_turns", "total_cost_usd", "duration_ms", "stop_reason")
    return {**row, "status": status, **{k: result.get(k) for k in keep}}
