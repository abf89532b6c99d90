"""A worker process the crash tests kill: ``python crash_worker.py HOST:PORT QUEUE MODEL_URL LEDGER RETRIES``.

Its agent's one tool, ``work``, writes a ledger line (call id, process id) before it does anything, then
sleeps: long the first time a call id is seen (so a kill lands mid-call), not at all when it is run again.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta

import anyio
from temporalio.client import Client
from temporalio.common import RetryPolicy

from openagent import AgentOptions, ToolContext, tool
from openagent_temporal import DurableAgent, run, worker

server, queue, model_url, ledger, retries = sys.argv[1:6]


@tool
async def work(step: int, seconds: float, context: ToolContext) -> str:
    """Do one step of work."""
    path = anyio.Path(ledger)
    seen = await path.exists() and context.tool_use_id in await path.read_text()
    async with await anyio.open_file(ledger, "a") as out:
        await out.write(json.dumps({"id": context.tool_use_id, "pid": os.getpid(), "step": step}) + "\n")
    await anyio.sleep(0 if seen else seconds)
    return f"step {step} done"


async def main() -> None:
    options = AgentOptions(
        model="openai-compatible:crash", base_url=model_url, api_key="k", tools=[work],
        permission_mode="bypassPermissions", persist_session=False,
    )  # fmt: skip
    tool_retries = {"work": RetryPolicy(maximum_attempts=int(retries) + 1)} if int(retries) else {}
    agent = DurableAgent(options, tool_retries=tool_retries, heartbeat_timeout=timedelta(seconds=2))
    client = await Client.connect(server)
    async with worker(client, queue, {"crash": agent}):
        print("ready", flush=True)
        await anyio.sleep_forever()


run(main())  # as `openagent worker` runs: on uvloop
