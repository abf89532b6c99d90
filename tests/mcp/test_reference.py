"""Third-party servers: the reference servers from npm (everything, filesystem, memory) over stdio, SSE and
streamable HTTP, and PyPI's time, git and fetch servers. Results match what the official ``mcp``
``ClientSession`` gets from the same server; a server killed during a long operation ends the call in 1 s.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import Served, call, npm_server, opened, pypi_server, text_of

from openagent_mcp._content import to_blocks

pytestmark = pytest.mark.anyio

TRANSPORTS = ["stdio", "sse", "streamableHttp"]
SAME_AS_OFFICIAL = [  # tools whose answers do not change between calls
    ("echo", {"message": "hi"}),
    ("get-sum", {"a": 2, "b": 40}),
    ("get-tiny-image", {}),
    ("get-structured-content", {"location": "New York"}),
    ("get-annotated-message", {"messageType": "error", "includeImage": True}),
    ("get-resource-links", {"count": 2}),
]


def _everything(transport: str, served: list[Served], mark: str = "") -> dict[str, Any]:
    script = npm_server("server-everything")
    if transport == "stdio":
        return {"command": "node", "args": [script, "stdio"], "env": {"OPENAGENT_TEST_MARK": mark}}
    server = Served(["node", script, transport], path="/sse" if transport == "sse" else "/mcp")
    served.append(server)
    return {"type": "sse" if transport == "sse" else "http", "url": server.url}


@asynccontextmanager
async def _official(config: dict[str, Any]) -> AsyncIterator[Any]:
    """The official ``mcp`` client on the same server (a new process, for stdio)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.sse import sse_client
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if config.get("type") == "http":
        transport: Any = streamable_http_client(config["url"])
    elif config.get("type") == "sse":
        transport = sse_client(config["url"])
    else:
        transport = stdio_client(StdioServerParameters(command=config["command"], args=config["args"]))
    async with transport as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        yield session


def _pid_marked(mark: str) -> int:
    """The process whose environment carries ``OPENAGENT_TEST_MARK=mark`` (a server started over stdio)."""
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and f"OPENAGENT_TEST_MARK={mark}".encode() in (entry / "environ").read_bytes()
            ):
                return int(entry.name)
        except OSError:
            continue
    raise LookupError(mark)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_server_answers_as_it_answers_the_official_client(
    transport: str, served: list[Served]
) -> None:
    config = _everything(transport, served)
    with anyio.fail_after(60):
        async with opened({"ev": {**config, "tool_timeout": 0.6}}) as (toolset, table):
            entry = toolset.describe()["mcp_servers"][0]
            assert entry["status"] == "connected"
            assert {
                "name": "simulate-research-query",
                "reason": entry["skipped_tools"][0]["reason"],
            } in entry["skipped_tools"]
            ours = {name: await call(table, f"mcp__ev__{name}", args) for name, args in SAME_AS_OFFICIAL}
            progress: list[dict[str, Any]] = []

            async def notify(event: dict[str, Any]) -> None:
                progress.append(event)

            long = await call(
                table, "mcp__ev__trigger-long-running-operation", {"duration": 1.5, "steps": 5}, notify=notify
            )
        async with _official(config) as session:
            theirs = {name: await session.call_tool(name, args) for name, args in SAME_AS_OFFICIAL}
    for name, result in ours.items():
        official = theirs[name]
        assert result.content == to_blocks(official.content, official.structuredContent, server="ev"), name
        assert (
            result.structured_content == official.structuredContent
            and bool(result.is_error) == official.isError
        )
    assert not long.is_error and "completed" in text_of(long)  # 1.5 s, with a 0.6 s timeout reset by progress
    assert [(e["progress"], e["total"]) for e in progress] == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_everything_server_killed_during_a_long_operation(transport: str, served: list[Served]) -> None:
    mark = uuid.uuid4().hex
    config = _everything(transport, served, mark)
    kill: Callable[[], Any] = (
        served[-1].kill if served else lambda: os.kill(_pid_marked(mark), signal.SIGKILL)
    )
    with anyio.fail_after(60):
        async with opened({"ev": config}) as (_, table):
            outcome: list[Any] = []

            async def run() -> None:
                outcome.append(
                    await call(
                        table, "mcp__ev__trigger-long-running-operation", {"duration": 30, "steps": 30}
                    )
                )

            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await anyio.sleep(0.5)
                kill()
                killed = anyio.current_time()
            latency = anyio.current_time() - killed
    assert outcome[0].is_error and text_of(outcome[0]).startswith(
        "MCP server 'ev': calling 'trigger-long-running-operation' failed"
    )
    assert latency <= 1.0, (latency, text_of(outcome[0]))


async def test_filesystem_and_memory_servers(tmp_path: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    servers = {
        "files": {
            "command": "node",
            "args": [npm_server("server-filesystem"), str(root)],
            "startup_wait": 30,
        },
        "memory": {
            "command": "node",
            "args": [npm_server("server-memory")],
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
            "startup_wait": 30,
        },
    }
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    with anyio.fail_after(60):
        async with opened(servers) as (_, table):
            wrote = await call(
                table, "mcp__files__write_file", {"path": str(root / "a.txt"), "content": "hello"}
            )
            read = await call(table, "mcp__files__read_text_file", {"path": str(root / "a.txt")})
            outside = await call(table, "mcp__files__read_text_file", {"path": "/etc/hostname"})
            await call(table, "mcp__memory__create_entities", {"entities": [entity]})
            graph = await call(table, "mcp__memory__read_graph")
    assert not wrote.is_error and (root / "a.txt").read_text() == "hello"
    assert text_of(read) == "hello" and read.structured_content == {"content": "hello"}
    assert outside.is_error and "Access denied" in text_of(outside)
    assert graph.structured_content["entities"][0]["name"] == "Ada"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><head><title>Notes</title></head><body><h1>Field notes</h1><p>The cat sat.</p></body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


async def test_time_git_and_fetch_servers_from_pypi(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    await anyio.run_process(["git", "init", "-q", "-b", "main", str(repo)])
    (repo / "new.txt").write_text("x")
    page = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    wait = {"startup_wait": 30}  # wait for all three: what matters here is what they answer
    servers = {
        "time": {"command": pypi_server("mcp-server-time"), "args": ["--local-timezone", "UTC"], **wait},
        "git": {"command": pypi_server("mcp-server-git"), "args": ["--repository", str(repo)], **wait},
        "fetch": {
            "command": pypi_server("mcp-server-fetch"),
            "args": ["--ignore-robots-txt", "--allow-private-ips"],
            **wait,
        },
    }
    url = f"http://127.0.0.1:{page.server_address[1]}/notes"
    try:
        with anyio.fail_after(60):
            async with opened(servers) as (toolset, table):
                assert [s["status"] for s in toolset.describe()["mcp_servers"]] == ["connected"] * 3
                now = await call(table, "mcp__time__get_current_time", {"timezone": "UTC"})
                status = await call(table, "mcp__git__git_status", {"repo_path": str(repo)})
                fetched = await call(table, "mcp__fetch__fetch", {"url": url})
    finally:
        page.shutdown()
        page.server_close()
    assert json.loads(text_of(now))["timezone"] == "UTC"
    assert "new.txt" in text_of(status)
    assert "Field notes" in text_of(fetched) and "The cat sat." in text_of(fetched)
