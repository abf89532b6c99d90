"""Workers SIGKILLed mid model stream and mid tool call: the run completes on another worker, completed
tool calls are not run again (the ledger, keyed by tool_use_id, proves it), the cut one at most once more."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from scripted_server import ScriptedServer, ToolCall, Turn
from stores_suite import start_ready
from temporalio.client import Client

from openagent_temporal import start_run

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def model_server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


class Workers:
    def __init__(self, server: str, queue: str, url: str, ledger: Path, retries: int) -> None:
        self.args = [server, queue, url, str(ledger), str(retries)]
        self.processes: list[subprocess.Popen[str]] = []

    def start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "OPENAGENT_PLUGINS": "openai,temporal"}
        args = [sys.executable, str(HERE / "crash_worker.py"), *self.args]
        process = start_ready(args, env, Path(self.args[3]).with_suffix(".workers.log"))
        self.processes.append(process)
        return process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait()


def ledger_lines(ledger: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ledger.read_text().splitlines()] if ledger.exists() else []


async def until(condition: Any, seconds: float = 60) -> None:
    with anyio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110 - another process's file or a server thread's count
            await anyio.sleep(0.05)


@pytest.mark.parametrize("retries", [0, 1], ids=["not-retried", "retried-once"])
async def test_a_worker_killed_mid_tool_call(
    temporal_server: str, task_queue: str, tmp_path: Path, model_server: ScriptedServer, retries: int
) -> None:
    model_server.add_script(
        "crash",
        [
            Turn(tool_calls=[ToolCall("work", {"step": 1, "seconds": 0}, id="c1")]),
            Turn(tool_calls=[ToolCall("work", {"step": 2, "seconds": 60}, id="c2")]),
            Turn(text="finished"),
        ],
    )
    ledger = tmp_path / "ledger.jsonl"
    workers = Workers(temporal_server, task_queue, model_server.url, ledger, retries)
    try:
        first = workers.start()
        client = await Client.connect(temporal_server)
        run = await start_run(client, "work", task_queue=task_queue, agent="crash")
        await until(lambda: any(e["id"] == "c2" for e in ledger_lines(ledger)))
        first.send_signal(signal.SIGKILL)
        second = workers.start()
        with anyio.fail_after(90):
            result = await run.result()
    finally:
        workers.stop()
    assert result.subtype == "success" and result.result == "finished"
    entries = ledger_lines(ledger)
    assert [e["id"] for e in entries if e["id"] == "c1"] == ["c1"]  # completed before the kill: never again
    cut = [e for e in entries if e["id"] == "c2"]
    assert len(cut) == 1 + retries and cut[0]["pid"] == first.pid
    if retries:
        assert cut[1]["pid"] == second.pid  # the same idempotency key, on the other worker
    answer = model_server.bodies("/chat/completions")[-1]["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "c2"
    if retries:
        assert answer["content"] == "step 2 done"
    else:
        assert "did not complete" in answer["content"]  # the model is told; nothing ran it again


async def test_a_worker_killed_mid_model_stream(
    temporal_server: str, task_queue: str, tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.add_script(
        "crash",
        [
            Turn(tool_calls=[ToolCall("work", {"step": 1, "seconds": 0}, id="c1")]),
            Turn(text=[f"w{i} " for i in range(40)], delay=0.25),
        ],
    )
    ledger = tmp_path / "ledger.jsonl"
    workers = Workers(temporal_server, task_queue, model_server.url, ledger, 0)
    try:
        first = workers.start()
        client = await Client.connect(temporal_server)
        run = await start_run(client, "work", task_queue=task_queue, agent="crash")
        await until(lambda: len(model_server.bodies("/chat/completions")) == 2)
        await anyio.sleep(1.0)  # a few pieces of the answer are out
        first.send_signal(signal.SIGKILL)
        workers.start()
        with anyio.fail_after(90):
            result = await run.result()
    finally:
        workers.stop()
    assert result.subtype == "success" and result.result == "".join(f"w{i} " for i in range(40))
    assert [e["id"] for e in ledger_lines(ledger)] == ["c1"]  # the tool call before the cut turn: once
    assert len(model_server.bodies("/chat/completions")) == 3  # the cut turn, asked again on the other worker
