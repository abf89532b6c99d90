"""MCP tools in durable runs: each worker connects the agent's servers once; every call is an activity."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from openagent import AgentOptions
from openagent.testing import ScriptedModel, tool_call
from openagent_temporal import start_run, worker

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers.py"


async def test_mcp_tools_run_as_activities_and_a_server_dying_mid_call_fails_only_that_call(
    temporal_server: str, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "mcp")
    env = {"MCP_PID_FILE": str(tmp_path / "pid"), "PATH": os.environ.get("PATH", "")}
    calc = {"type": "stdio", "command": sys.executable, "args": [str(SERVERS), "stdio"], "env": env}
    model = ScriptedModel(
        [
            [tool_call("mcp__calc__add", {"a": 2, "b": 3}, id="m1")],
            [tool_call("mcp__calc__die", {"after": 0.0}, id="m2")],
            ["2 + 3 = 5; the server is gone"],
        ]
    )
    options = AgentOptions(
        model=model, mcp_servers={"calc": calc}, cwd=str(tmp_path), permission_mode="bypassPermissions"
    )
    client = await Client.connect(temporal_server)
    async with worker(client, task_queue, {"calc": options}):
        assert (tmp_path / "pid").exists()  # the worker connected the server when it started
        run = await start_run(client, "add, then crash the server", task_queue=task_queue, agent="calc")
        with anyio.fail_after(60):
            result = await run.result()
    assert result.subtype == "success" and result.result == "2 + 3 = 5; the server is gone"
    added = model.requests[1].messages[-1].content[0]
    assert (added.tool_use_id, added.content, added.is_error) == ("m1", [{"type": "text", "text": "5"}], None)
    died = model.requests[2].messages[-1].content[0]
    assert died.tool_use_id == "m2" and died.is_error  # that call failed, with the reason; the run went on
