"""Live status and control: ``Client.get_mcp_status / reconnect_mcp_server / toggle_mcp_server``, automatic
reconnects, an init message that does not wait for a hung server, tools that join or change later, names.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import (
    Served,
    call,
    kill_pid,
    opened,
    pid_of,
    process_gone,
    python_server,
    stdio_config,
    text_of,
    wait_until,
)
from servers import LONG_NAME

from openagent import AgentOptions, Client, SystemMessage, UserMessage, query, tool
from openagent.errors import ConfigError
from openagent.retry import StaminaRetry
from openagent.testing import ScriptedModel, tool_call
from openagent.tools import ToolContext
from openagent_mcp import McpConnectionError, McpServerError, create_sdk_mcp_server

pytestmark = pytest.mark.anyio


def _options(servers: dict[str, Any], *turns: Any, **more: Any) -> AgentOptions:
    allow = [f"mcp__{name}" for name in servers]  # a server's tools run only when a rule allows them
    return AgentOptions(
        model=ScriptedModel(list(turns)),
        mcp_servers=servers,
        allowed_tools=allow,
        persist_session=False,
        **more,
    )


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


async def test_status_reconnect_and_toggle_through_the_client(tmp_path: Path) -> None:
    servers = {"calc": stdio_config(tmp_path), "local": create_sdk_mcp_server("local", tools=[shout])}
    with anyio.fail_after(30):
        async with Client(_options(servers, [tool_call("mcp__calc__add", {"a": 1, "b": 2})], "3")) as client:
            status = await client.get_mcp_status()
            calc, local = status["mcpServers"]
            assert calc["status"] == "connected" and calc["serverInfo"]["name"] == "calc"
            assert calc["config"]["type"] == "stdio" and calc["config"]["env"]["MCP_PID_FILE"] == "[redacted]"
            assert {"name": "add", "description": "Add two integers."} in calc["tools"]
            assert local == {
                "name": "local",
                "status": "connected",
                "config": {"type": "sdk", "name": "local"},
                "tools": [{"name": "shout", "description": "Upper-case a text."}],
            }

            first = pid_of(tmp_path)
            kill_pid(first)
            await wait_until(lambda: client.conversation.toolsets[0].remote["calc"].status == "failed")
            failed = (await client.get_mcp_status())["mcpServers"][0]
            assert failed["status"] == "failed" and "closed the connection" in failed["error"]

            await client.reconnect_mcp_server("calc")
            assert pid_of(tmp_path) != first
            assert (await client.get_mcp_status())["mcpServers"][0]["status"] == "connected"
            await client.query("add")
            assert [m async for m in client.receive_response()][-1].result == "3"

            await client.toggle_mcp_server("calc", False)
            assert (await client.get_mcp_status())["mcpServers"][0]["status"] == "disabled"
            assert not any(name.startswith("mcp__calc__") for name in client.conversation.tools)
            await wait_until(lambda: process_gone(pid_of(tmp_path)))
            with pytest.raises(McpServerError, match="'calc': is disabled"):
                await client.reconnect_mcp_server("calc")
            await client.toggle_mcp_server("local", False)
            assert "mcp__local__shout" not in client.conversation.tools

            await client.toggle_mcp_server("calc", True)
            await client.toggle_mcp_server("local", True)
            assert {"mcp__calc__add", "mcp__local__shout"} <= set(client.conversation.tools)
            with pytest.raises(ConfigError, match="no MCP server named 'nope'; configured: calc, local"):
                await client.reconnect_mcp_server("nope")


async def test_a_failed_reconnect_raises_and_leaves_the_server_failed(served: list[Served]) -> None:
    server = python_server("http")
    served.append(server)
    with anyio.fail_after(30):
        async with Client(_options({"web": {"type": "http", "url": server.url}})) as client:
            server.kill()
            with pytest.raises(McpConnectionError, match="MCP server 'web': ConnectError"):
                await client.reconnect_mcp_server("web")
            entry = (await client.get_mcp_status())["mcpServers"][0]
            assert entry["status"] == "failed" and "ConnectError" in entry["error"]


async def test_a_client_without_mcp_servers_reports_none() -> None:
    async with Client(AgentOptions(model=ScriptedModel([]), persist_session=False)) as client:
        assert await client.get_mcp_status() == {"mcpServers": []}
        with pytest.raises(ConfigError, match="no MCP servers"):
            await client.toggle_mcp_server("x", False)


async def test_a_reconnect_policy_brings_a_dead_server_back(tmp_path: Path) -> None:
    policy = StaminaRetry(attempts=3, wait_initial=0.05, wait_max=0.1, wait_jitter=0.0)
    config = stdio_config(tmp_path, reconnect=policy)
    with anyio.fail_after(30):
        async with opened({"calc": config}) as (toolset, table):
            first = pid_of(tmp_path)
            kill_pid(first)
            await wait_until(lambda: toolset.remote["calc"].status != "connected")
            result = await call(table, "mcp__calc__add", {"a": 20, "b": 22})  # waits for the reconnect
            assert text_of(result) == "42" and pid_of(tmp_path) != first
            assert toolset.describe()["mcp_servers"][0]["status"] == "connected"


async def test_the_init_message_does_not_wait_for_a_hung_server(tmp_path: Path) -> None:
    servers = {
        "ok": stdio_config(tmp_path),
        "hung": {
            "command": sys.executable,
            "args": ["-c", "import time; time.sleep(60)"],
            "startup_wait": 0.3,
        },
    }
    with anyio.fail_after(30):
        began = anyio.current_time()
        messages = query(prompt="go", options=_options(servers, "hi"))
        init = await messages.__anext__()
        waited = anyio.current_time() - began
        await messages.aclose()
        closed = anyio.current_time() - began - waited
    status = {s["name"]: s for s in init.data["mcp_servers"]}
    assert status["ok"]["status"] == "connected" and status["hung"] == {
        "name": "hung",
        "status": "pending",
        "tool_count": 0,
    }
    assert waited < 5.0 and closed < 2.0  # neither the 30 s start-up timeout nor anything near it


async def test_a_run_cancelled_while_servers_start_leaves_no_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    hung = {
        "command": sys.executable,
        "args": [
            "-c",
            f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)",
        ],
    }
    with anyio.fail_after(30):
        with anyio.move_on_after(1.5) as waiting:
            async for _ in query(prompt="go", options=_options({"hung": hung}, "hi")):
                pass  # never reached: the init message waits for the server
        assert waiting.cancelled_caught
        await wait_until(lambda: pid_file.exists() and process_gone(int(pid_file.read_text())), 10)


async def test_a_server_that_connects_late_adds_its_tools_to_the_next_request(tmp_path: Path) -> None:
    @tool
    async def wait(context: ToolContext) -> str:
        """Give the slow server time to start."""
        tools = context.tools
        assert tools is not None
        await wait_until(lambda: "mcp__late__add" in tools, 20)
        return "waited"

    late = stdio_config(tmp_path, env={"MCP_START_DELAY": "1.0"}, startup_wait=0.2)
    model = ScriptedModel([[tool_call("wait", {})], [tool_call("mcp__late__add", {"a": 2, "b": 2})], "4"])
    options = AgentOptions(
        model=model,
        tools=[wait],
        mcp_servers={"late": late},
        allowed_tools=["mcp__late"],
        persist_session=False,
    )
    with anyio.fail_after(30):
        messages = [m async for m in query(prompt="go", options=options)]
    assert isinstance(messages[0], SystemMessage)
    assert messages[0].data["mcp_servers"][0]["status"] == "pending"
    assert "mcp__late__add" not in {t.name for t in model.requests[0].tools}
    assert "mcp__late__add" in {t.name for t in model.requests[1].tools}
    answers = [
        b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list) for b in m.content
    ]
    assert [text_of(a) for a in answers] == ["waited", "4"]


async def test_a_server_that_changes_its_tools_is_listed_again(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with opened({"srv": stdio_config(tmp_path)}) as (_, table):
            assert "mcp__srv__extra" not in table
            assert text_of(await call(table, "mcp__srv__grow")) == "grown"
            await wait_until(lambda: "mcp__srv__extra" in table)
            assert text_of(await call(table, "mcp__srv__extra")) == "extra!"


async def test_names_are_unique_within_64_characters_and_map_back(http_server: str) -> None:
    servers = {
        "my.srv": {"type": "http", "url": http_server},
        "my_srv": create_sdk_mcp_server("x", tools=[shout]),
    }
    with anyio.fail_after(30):
        async with opened(servers) as (toolset, table):
            assert text_of(await call(table, "mcp__my_srv__do_it")) == "do.it"  # listed first
            assert text_of(await call(table, "mcp__my_srv__do_it_2")) == "do_it"
            assert text_of(await call(table, "mcp__my_srv_2__shout", {"text": "a"})) == "A"
            (long,) = [name for name in table if name.startswith("mcp__my_srv__summarise")]
            assert len(long) == 64 and long != f"mcp__my_srv__{LONG_NAME}"[:64]  # ends in a stable hash
            assert text_of(await call(table, long)) == "long"
            entry = toolset.describe()["mcp_servers"][1]
    assert all(len(name) <= 64 for name in table)
    assert entry["warnings"] == [
        "MCP servers 'my.srv' and 'my_srv' both give the tool prefix mcp__my_srv__; "
        "the tools of 'my_srv' are named mcp__my_srv_2__…"
    ]
