"""Every server fault ends the affected calls with an error naming the server and the cause, within 1 s.

The server in servers.py is killed before, between and during calls over every transport (stdio,
streamable HTTP answering in SSE or JSON, SSE), hangs, sends garbage and answers HTTP 500. Each test's
deadline catches a hang; latencies are measured from the fault (the kill, or the moment a server was told
to die) to the error result.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import (
    Served,
    call,
    free_port,
    kill_pid,
    opened,
    pid_of,
    python_server,
    stdio_config,
    text_of,
    wait_until,
)

pytestmark = pytest.mark.anyio

LATENCY = 1.0  # seconds from a fault to the error result
TRANSPORTS = ["stdio", "http", "json", "sse"]


def _server(
    transport: str, tmp_path: Path, served: list[Served], **extra: Any
) -> tuple[dict[str, Any], Callable[[], float]]:
    """A config for a new ``servers.py`` over ``transport``, and a function that kills it (its time).

    An HTTP server is started without waiting for it to listen: the caller waits for all (`_all_transports`).
    """
    if transport == "stdio":
        return stdio_config(tmp_path, **extra), lambda: kill_pid(pid_of(tmp_path))
    server = python_server(transport, wait=False)
    served.append(server)
    kind = "sse" if transport == "sse" else "http"
    return {"type": kind, "url": server.url, **extra}, server.kill


def _shared(transport: str, tmp_path: Path, http_server: str, **extra: Any) -> dict[str, Any]:
    """A config for a server that the test does not kill: a new stdio one, or the shared HTTP one."""
    return (
        stdio_config(tmp_path, **extra)
        if transport == "stdio"
        else {"type": "http", "url": http_server, **extra}
    )


def _all_transports(
    tmp_path: Path, served: list[Served]
) -> tuple[dict[str, Any], dict[str, Callable[[], float]]]:
    """One new server per transport (started side by side), named after it; and their kill functions."""
    servers, kills = {}, {}
    for transport in TRANSPORTS:
        (tmp_path / transport).mkdir()
        servers[transport], kills[transport] = _server(transport, tmp_path / transport, served)
    for server in served:
        server.ready()
    return servers, kills


async def test_killed_during_a_call(tmp_path: Path, served: list[Served]) -> None:
    servers, kills = _all_transports(tmp_path, served)
    results: dict[str, tuple[Any, float]] = {}

    async def hang(name: str) -> None:
        result = await call(table, f"mcp__{name}__hang")
        results[name] = (result, anyio.current_time())

    with anyio.fail_after(30):
        async with opened(servers) as (toolset, table):
            assert {s["status"] for s in toolset.describe()["mcp_servers"]} == {"connected"}
            async with anyio.create_task_group() as group:
                for name in servers:
                    group.start_soon(hang, name)
                await anyio.sleep(0.3)
                killed = {name: kill() for name, kill in kills.items()}
            for name, (result, ended) in results.items():
                text = text_of(result)
                assert result.is_error and text.startswith(f"MCP server {name!r}: calling 'hang' failed: "), (
                    text
                )
                assert ended - killed[name] <= LATENCY, (name, ended - killed[name], text)
                again = await call(table, f"mcp__{name}__add", {"a": 1, "b": 2})  # never hangs either
                assert again.is_error and f"MCP server {name!r}" in text_of(again)
            statuses = toolset.describe  # every server is failed within the second, too
            await wait_until(lambda: {s["status"] for s in statuses()["mcp_servers"]} == {"failed"}, LATENCY)


async def test_killed_between_calls(tmp_path: Path, served: list[Served]) -> None:
    servers, kills = _all_transports(tmp_path, served)
    # the cause, as each transport learns it: end of file; the event stream broke; connection refused
    causes = {
        "stdio": "closed the connection",
        "http": "ConnectError",
        "json": "ConnectError",
        "sse": "connection broke",
    }
    with anyio.fail_after(30):
        async with opened(servers) as (toolset, table):
            for name in servers:
                assert text_of(await call(table, f"mcp__{name}__add", {"a": 2, "b": 3})) == "5"
            killed = {name: kill() for name, kill in kills.items()}
            await anyio.sleep(0.2)
            for name in servers:
                result = await call(table, f"mcp__{name}__add", {"a": 2, "b": 3})
                text = text_of(result)
                assert result.is_error and text.startswith(f"MCP server {name!r}: "), text
                assert anyio.current_time() - killed[name] <= 0.2 + LATENCY, text
                assert causes[name] in text, text
                assert "mcp__" + name + "__add" in table  # still offered: the model learns why it fails
            status = {s["name"]: s for s in toolset.describe()["mcp_servers"]}
    for name, cause in causes.items():
        assert status[name]["status"] == "failed" and cause in status[name]["error"], status[name]


async def test_servers_that_cannot_start_fail_at_once_with_the_cause(
    tmp_path: Path, http_server: str
) -> None:
    servers = {
        "missing": {"command": str(tmp_path / "no-such-server")},
        "crashes": {
            "command": sys.executable,
            "args": ["-c", "import sys; sys.stderr.write('no config'); sys.exit(3)"],
        },
        "refused": {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"},
        "refused_sse": {"type": "sse", "url": f"http://127.0.0.1:{free_port()}/sse"},
        "not_found": {"type": "http", "url": http_server.replace("/mcp", "/nothing-here")},
        "locked": {"type": "http", "url": http_server.replace("/mcp", "/locked")},
    }
    with anyio.fail_after(20):
        began = anyio.current_time()
        async with opened(servers) as (toolset, table):
            assert anyio.current_time() - began <= 3 * LATENCY  # nothing waits for a timeout
            status = {s["name"]: s for s in toolset.describe()["mcp_servers"]}
    assert status.pop("locked") == {
        "name": "locked",
        "status": "needs-auth",
        "tool_count": 0,
        "error": f"HTTP 401 from POST {http_server.replace('/mcp', '/locked')}: missing token",
    }
    assert all(s["status"] == "failed" for s in status.values()), status
    assert "No such file" in status["missing"]["error"]
    assert "closed the connection" in status["crashes"]["error"] and "no config" in status["crashes"]["error"]
    assert "ConnectError" in status["refused"]["error"] and "ConnectError" in status["refused_sse"]["error"]
    assert "HTTP 404" in status["not_found"]["error"]
    assert table == {}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_hung_tool_and_garbage_end_their_calls_and_the_server_stays_usable(
    transport: str, tmp_path: Path, http_server: str
) -> None:
    config = _shared(transport, tmp_path, http_server, tool_timeout=0.5, tool_timeouts={"add": 5})
    with anyio.fail_after(20):
        async with opened({"srv": config}) as (toolset, table):
            started = anyio.current_time()
            hung = await call(table, "mcp__srv__hang")
            assert 0.5 <= anyio.current_time() - started <= 0.5 + LATENCY
            started = anyio.current_time()
            garbage = await call(table, "mcp__srv__garbage")
            assert anyio.current_time() - started <= LATENCY
            assert text_of(await call(table, "mcp__srv__add", {"a": 1, "b": 1})) == "2"
            assert toolset.describe()["mcp_servers"][0]["status"] == "connected"
    assert text_of(hung) == (
        "MCP server 'srv': no answer to calling 'hang' within 0.5 s (tool_timeout); the request was cancelled"
    )
    text = text_of(garbage)
    assert text.startswith(
        "MCP server 'srv': calling 'garbage' failed: the server sent a malformed message"
    ), text
    assert ("this is not json-rpc" if transport == "stdio" else "Invalid JSON") in text


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_progress_resets_the_timeout_and_reaches_the_hooks(
    transport: str, tmp_path: Path, http_server: str
) -> None:
    seen: list[dict[str, Any]] = []

    async def notify(event: dict[str, Any]) -> None:
        seen.append(event)

    config = _shared(transport, tmp_path, http_server, tool_timeout=0.5, max_tool_timeout=1.5)
    with anyio.fail_after(20):
        async with opened({"srv": config}) as (_, table):
            result = await call(table, "mcp__srv__slow", {"seconds": 1.2, "steps": 12}, notify=notify)
            started = anyio.current_time()
            capped = await call(table, "mcp__srv__slow", {"seconds": 3, "steps": 30})
            assert 1.5 <= anyio.current_time() - started <= 1.5 + LATENCY
    assert "was cancelled after 1.5 s in all (max_tool_timeout)" in text_of(capped)
    assert not result.is_error and text_of(result) == "done after 1.2 s"  # over twice the timeout
    assert [e["progress"] for e in seen] == list(range(1, 13))
    assert seen[0] == {
        "notification_type": "tool_progress",
        "title": "mcp__srv__slow",
        "message": "step 1",
        "server": "srv",
        "progress": 1.0,
        "total": 12.0,
    }


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_an_http_error_ends_the_call_with_the_status_and_body(
    transport: str, http_server: str, sse_server: str
) -> None:
    config = {"type": transport, "url": http_server if transport == "http" else sse_server}
    with anyio.fail_after(20):
        async with opened({"srv": config}) as (toolset, table):
            started = anyio.current_time()
            result = await call(table, "mcp__srv__http_error")
            assert anyio.current_time() - started <= LATENCY
            assert "HTTP 500 from POST" in text_of(result) and "database exploded" in text_of(result)
            assert toolset.describe()["mcp_servers"][0]["status"] == "failed"


async def test_no_call_outlives_its_session(tmp_path: Path) -> None:
    results: list[Any] = []

    async def one() -> None:
        results.append(await call(table, "mcp__srv__hang"))

    with anyio.fail_after(20):
        async with opened({"srv": stdio_config(tmp_path)}) as (_, table):
            threads = threading.active_count()  # the event loop's child watcher has one for the process
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(one)
                await anyio.sleep(0.3)
                assert threading.active_count() == threads  # no thread per call
                started = anyio.current_time()
                died = await call(table, "mcp__srv__die", {"after": 0.3})  # the server exits by itself
            latency = anyio.current_time() - started - 0.3
    assert latency <= LATENCY and len(results) == 20
    cause = "the server closed the connection (server stderr: dying on command)"  # its last words included
    assert text_of(died) == f"MCP server 'srv': calling 'die' failed: {cause}"
    assert all(text_of(r) == f"MCP server 'srv': calling 'hang' failed: {cause}" for r in results)
