"""``openagent worker``, ``openagent batch`` and ``openagent approve`` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from scripted_server import ScriptedServer, Turn
from temporalio.client import Client

from openagent import AgentOptions, SystemMessage, tool
from openagent.testing import ScriptedModel, tool_call
from openagent_temporal import start_run, worker

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]
OPENAGENT = str(Path(sys.executable).parent / "openagent")


def env() -> dict[str, str]:
    return {**os.environ, "OPENAGENT_PLUGINS": "openai,cli,temporal"}  # the plugins a user would have


@pytest.fixture
def model_server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        server.add_script("batch", [Turn(text="answer")])
        yield server


async def test_batch_runs_each_line_once_and_skips_what_finished(
    temporal_server: str, task_queue: str, tmp_path: Path, model_server: ScriptedServer
) -> None:
    prompts = tmp_path / "prompts.jsonl"
    lines = [json.dumps(f"question {i}") for i in range(8)] + [json.dumps({"id": "mine", "prompt": "q"})]
    prompts.write_text("\n".join(lines) + "\n")
    worker_process = subprocess.Popen(  # noqa: ASYNC220 - a server for the test's length, read line by line
        [OPENAGENT, "worker", "--temporal", temporal_server, "-q", task_queue, "-m", "openai-compatible:batch",
         "--base-url", model_server.url],
        env={**env(), "OPENAI_API_KEY": "k"}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert worker_process.stderr is not None
        assert "worker on" in worker_process.stderr.readline()
        command = [
            OPENAGENT,
            "batch",
            str(prompts),
            "--temporal",
            temporal_server,
            "-q",
            task_queue,
            "-c",
            "4",
        ]
        with anyio.fail_after(120):
            first = await anyio.run_process(command, env=env(), check=False)
        assert first.returncode == 0, first.stderr.decode()
        output = tmp_path / "prompts.results.jsonl"
        rows = [json.loads(line) for line in output.read_text().splitlines()]
        assert len(rows) == 9 and {r["status"] for r in rows} == {"done"}
        assert {r["result"] for r in rows} == {"answer"} and "batch-mine" in {r["run_id"] for r in rows}
        asked = len(model_server.bodies("/chat/completions"))
        assert asked == 9
        assert "9 done" in first.stdout.decode() + first.stderr.decode()  # the progress line
        # the same command again: nothing new runs
        with anyio.fail_after(60):
            again = await anyio.run_process(command, env=env(), check=False)
        assert again.returncode == 0 and len(output.read_text().splitlines()) == 9
        # results lost for three lines (and a line torn by a crash): their runs finished already, so they
        # are followed, not run again
        output.write_text("\n".join(output.read_text().splitlines()[3:]) + '\n{"id": "torn", "sta\n')
        with anyio.fail_after(60):
            third = await anyio.run_process(command, env=env(), check=False)
        assert third.returncode == 0
        rows = [
            json.loads(line)
            for line in output.read_text().splitlines()
            if not line.startswith('{"id": "torn"')
        ]
        assert len(rows) == 9 and {r["status"] for r in rows} == {"done"}
        assert len(model_server.bodies("/chat/completions")) == asked
    finally:
        worker_process.kill()
        worker_process.wait()
        worker_process.stderr.close()  # type: ignore[union-attr]


@tool(requires_permission=True)
def deploy(target: str) -> str:
    """Deploy (needs a person's approval)."""
    return f"deployed {target}"


async def test_approve_from_the_command_line(temporal_server: str, task_queue: str, tmp_path: Path) -> None:
    model = ScriptedModel([[tool_call("deploy", {"target": "prod"}, id="D1")], ["deployed"]])
    client = await Client.connect(temporal_server)
    async with worker(
        client, task_queue, {"ops": AgentOptions(model=model, tools=[deploy], cwd=str(tmp_path))}
    ):
        run = await start_run(client, "deploy", task_queue=task_queue, agent="ops")
        with anyio.fail_after(60):
            async for message in run.messages():
                if isinstance(message, SystemMessage) and message.subtype == "permission_request":
                    break
            base = ["--temporal", temporal_server]
            listed = await anyio.run_process([OPENAGENT, "approve", run.id, *base], env=env())
            assert json.loads(listed.stdout)["tool_use_id"] == "D1"
            wrong = await anyio.run_process(
                [OPENAGENT, "approve", run.id, "D2", "allow", *base], env=env(), check=False
            )
            assert wrong.returncode == 1 and b"no tool call 'D2' is waiting" in wrong.stderr
            done = await anyio.run_process([OPENAGENT, "approve", run.id, "D1", "allow", *base], env=env())
            assert done.stdout.decode().strip() == "allow: D1"
            result = await run.result()
    assert (
        result.result == "deployed" and model.requests[-1].messages[-1].content[0].content == "deployed prod"
    )


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (['"fine"', "{not json"], "prompts.jsonl:2: not JSON"),
        (
            ['{"text": "no prompt key"}'],
            "prompts.jsonl:1: expected a JSON string or an object with a 'prompt'",
        ),
        (['{"id": 1, "prompt": "a"}', '{"id": 1, "prompt": "b"}'], "two lines have the same id"),
    ],
    ids=["torn-line", "no-prompt", "same-id"],
)
async def test_batch_refuses_a_bad_prompts_file_before_starting_anything(
    tmp_path: Path, lines: list[str], said: str
) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("\n".join(lines) + "\n")
    command = [
        OPENAGENT,
        "batch",
        str(prompts),
        "--temporal",
        "127.0.0.1:9",
        "-q",
        "q",
    ]  # nothing listens on 9
    with anyio.fail_after(30):
        done = await anyio.run_process(command, env=env(), check=False)
    assert done.returncode == 2 and said in done.stderr.decode()
    assert not (tmp_path / "prompts.results.jsonl").exists()


async def test_a_worker_whose_agents_module_fails_or_a_batch_with_no_server_says_so(tmp_path: Path) -> None:
    (tmp_path / "broken_agents.py").write_text("raise RuntimeError('the key vault is down')\n")
    command = [
        OPENAGENT,
        "worker",
        "--temporal",
        "127.0.0.1:9",
        "-q",
        "q",
        "--agents",
        "broken_agents:AGENTS",
    ]
    with anyio.fail_after(30):
        done = await anyio.run_process(command, env=env(), check=False, cwd=tmp_path)
    assert done.returncode == 2 and "RuntimeError: the key vault is down" in done.stderr.decode()

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('"hello"\n')
    command = [OPENAGENT, "batch", str(prompts), "--temporal", "127.0.0.1:9", "-q", "q"]  # nothing listens
    with anyio.fail_after(60):
        done = await anyio.run_process(command, env=env(), check=False)
    assert done.returncode == 1 and "cannot reach Temporal at 127.0.0.1:9" in done.stderr.decode()
    assert not (tmp_path / "prompts.results.jsonl").exists()
