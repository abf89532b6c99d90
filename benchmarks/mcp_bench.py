"""MCP clients on the same servers: openagent's MCP toolset against the official ``mcp`` ``ClientSession``.

Scenario (m) of ``benchmarks/run.py`` (``nox -s bench -- --scenarios m``), or alone:
``python benchmarks/mcp_bench.py [--calls 200] [--concurrent 60] [--seconds 2]`` prints a table and, with
``--json PATH``, writes the numbers. Per transport (stdio; streamable HTTP, one server both clients use):

- connect: from nothing to a session with its tools listed (for stdio, the server process start included);
- call: the latency of one call of a tool that adds two numbers, ``--calls`` times in a row (median, p90);
- concurrent: the wall time of ``--concurrent`` calls at once of a tool that sleeps ``--seconds``.

Each client runs in its own process (``python benchmarks/mcp_bench.py client …``), which prints one JSON line
with its CPU time too. openagent is measured as a conversation uses it: its toolset opened by
``open_toolsets`` and each tool called through ``Tool.call`` (result conversion included).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
TARGET_CONCURRENT = 1.2  # openagent's 60-way wall time ≤ 1.2× the official client's


# --- the server ---------------------------------------------------------------------------------------------


def serve(transport: str, port: int) -> None:
    import anyio
    from mcp.server.fastmcp import FastMCP

    server = FastMCP("bench", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Answer after ``seconds``."""
        await anyio.sleep(seconds)
        return "slept"

    server.run("stdio" if transport == "stdio" else "streamable-http")


# --- one client per process -----------------------------------------------------------------------------


def _config(transport: str, url: str) -> dict[str, Any]:
    if transport == "stdio":
        return {"type": "stdio", "command": sys.executable, "args": [str(HERE), "serve", "stdio"]}
    return {"type": "http", "url": url}


async def _official(args: argparse.Namespace, out: dict[str, Any]) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    config = _config(args.transport, args.url)
    began = time.perf_counter()
    if args.transport == "stdio":
        transport: Any = stdio_client(StdioServerParameters(command=config["command"], args=config["args"]))
    else:
        transport = streamable_http_client(args.url)
    async with transport as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        await session.list_tools()
        out["connect_ms"] = (time.perf_counter() - began) * 1000

        async def add() -> None:
            result = await session.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].text == "5", result  # type: ignore[union-attr]

        async def sleep() -> None:
            result = await session.call_tool("sleep", {"seconds": args.seconds})
            assert not result.isError, result

        await _measure(args, out, add, sleep, anyio)


async def _openagent(args: argparse.Namespace, out: dict[str, Any]) -> None:
    import anyio

    from openagent import AgentOptions
    from openagent.plugins import registry
    from openagent.testing import ScriptedModel
    from openagent.tools import Tool, ToolContext, open_toolsets

    # Before the clock starts, as for the official client: plugins found, and the mcp modules imported (the
    # plugin imports them on the first connection, so that importing openagent stays light).
    registry()
    import mcp.client.sse
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401

    config = _config(args.transport, args.url)
    table: dict[str, Tool] = {}
    options = AgentOptions(model=ScriptedModel([]), mcp_servers={"bench": config}, persist_session=False)
    began = time.perf_counter()
    (toolset,) = await open_toolsets(options, table)
    try:
        out["connect_ms"] = (time.perf_counter() - began) * 1000
        context = ToolContext(tool_use_id="c", session_id="s", cwd=".")

        async def add() -> None:
            result = await table["mcp__bench__add"].call("c", {"a": 2, "b": 3}, context)
            assert result.content == [{"type": "text", "text": "5"}], result

        async def sleep() -> None:
            result = await table["mcp__bench__sleep"].call("c", {"seconds": args.seconds}, context)
            assert not result.is_error, result

        await _measure(args, out, add, sleep, anyio)
    finally:
        await toolset.aclose()


async def _measure(args: argparse.Namespace, out: dict[str, Any], add: Any, sleep: Any, anyio: Any) -> None:
    for _ in range(10):  # warm-up
        await add()
    cpu, latencies = time.process_time(), []
    for _ in range(args.calls):
        began = time.perf_counter()
        await add()
        latencies.append((time.perf_counter() - began) * 1000)
    out["call_cpu_ms"] = (time.process_time() - cpu) * 1000 / args.calls
    out["call_ms"] = statistics.median(latencies)
    out["call_p90_ms"] = statistics.quantiles(latencies, n=10)[-1]
    cpu, began = time.process_time(), time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(args.concurrent):
            group.start_soon(sleep)
    out["concurrent_s"] = time.perf_counter() - began
    out["concurrent_cpu_ms"] = (time.process_time() - cpu) * 1000


def client(args: argparse.Namespace) -> None:
    import anyio

    out: dict[str, Any] = {"client": args.impl, "transport": args.transport, "backend": args.backend}
    if args.impl == "openagent":
        os.environ["OPENAGENT_PLUGINS"] = "mcp"
    anyio.run(_official if args.impl == "official" else _openagent, args, out, backend=args.backend)
    print(json.dumps(out), flush=True)


# --- the suite -------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _http_server() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(HERE), "serve", "http", "--port", str(port)], stderr=subprocess.DEVNULL
    )
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark MCP server did not start")


def _run_client(
    args: argparse.Namespace, impl: str, transport: str, url: str, backend: str
) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE), "client", transport, "--impl", impl, "--url", url]
    cmd += ["--backend", backend, "--calls", str(args.calls), "--concurrent", str(args.concurrent)]
    cmd += ["--seconds", str(args.seconds)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OPENAGENT_PLUGINS")}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return {"client": impl, "transport": transport, "backend": backend, "error": "timed out after 300 s"}
    try:
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        error = f"exit {done.returncode}: {tail}"
        return {"client": impl, "transport": transport, "backend": backend, "error": error}


def run_suite(args: argparse.Namespace) -> dict[str, Any]:
    """Every client on every transport; the best of ``--repeat`` runs each (the machine may be shared)."""
    server, url = _http_server()
    rows = []
    try:
        for transport in ("stdio", "http"):
            for impl, backend in (("official", "asyncio"), ("openagent", "asyncio"), ("openagent", "trio")):
                runs = [_run_client(args, impl, transport, url, backend) for _ in range(args.repeat)]
                ok = [r for r in runs if "error" not in r]
                row = min(ok, key=lambda r: r["concurrent_s"] + r["call_ms"] / 1000) if ok else runs[-1]
                rows.append(row)
                print(f"  {transport:5} {impl:9} {backend:7} {_brief(row)}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    _ratios(rows)
    return {"config": vars(args), "rows": rows, "verdict": verdict(rows, args.concurrent)}


def _brief(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"ERROR {row['error']}"
    return (
        f"connect {row['connect_ms']:7.1f} ms  call {row['call_ms']:6.2f} ms (p90 {row['call_p90_ms']:6.2f})"
        f"  concurrent {row['concurrent_s']:5.2f} s"
    )


def _ratios(rows: list[dict[str, Any]]) -> None:
    official = {r["transport"]: r for r in rows if r["client"] == "official" and "error" not in r}
    for row in rows:
        ref = official.get(row["transport"])
        if row["client"] == "official" or ref is None or "error" in row:
            continue
        for key in ("connect_ms", "call_ms", "call_p90_ms", "call_cpu_ms", "concurrent_s"):
            row[f"{key}_ratio"] = row[key] / ref[key]


def verdict(rows: list[dict[str, Any]], concurrent: int) -> list[str]:
    out = []
    for row in rows:
        if "concurrent_s_ratio" in row:
            ok = "MET" if row["concurrent_s_ratio"] <= TARGET_CONCURRENT else "MISSED"
            out.append(
                f"(m) {row['transport']}, openagent on {row['backend']}: {concurrent} concurrent calls in "
                f"{row['concurrent_s_ratio']:.2f}× the official client's time "
                f"(target ≤ {TARGET_CONCURRENT}×): {ok}"
            )
    return out


def table(results: dict[str, Any]) -> str:
    """The rows as a markdown table, ratios against the official client on the same transport."""
    config = results["config"]
    head = (
        "| transport | client | connect ms | ÷ official | call ms (median) | ÷ official | call p90 ms "
        f"| call CPU ms | {config['concurrent']}×{config['seconds']:g} s calls, s | ÷ official |"
    )
    lines = [head, "|" + "---|" * 10]
    for r in results["rows"]:
        name = r["client"] if r["client"] == "official" else f"openagent ({r['backend']})"
        if "error" in r:
            lines.append(f"| {r['transport']} | {name} | error: {r['error'][:80]} |" + " |" * 7)
            continue

        def ratio(key: str, r: dict[str, Any] = r) -> str:
            return f"{r[key]:.2f}×" if key in r else "–"

        lines.append(
            f"| {r['transport']} | {name} | {r['connect_ms']:.0f} | {ratio('connect_ms_ratio')} | "
            f"{r['call_ms']:.2f} | {ratio('call_ms_ratio')} | {r['call_p90_ms']:.2f} | "
            f"{r['call_cpu_ms']:.2f} | {r['concurrent_s']:.2f} | {ratio('concurrent_s_ratio')} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["suite", "serve", "client"], default="suite")
    parser.add_argument("transport", nargs="?", default="stdio", help="serve, client: stdio or http")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--impl", choices=["official", "openagent"])
    parser.add_argument("--url", default="")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args.transport, args.port)
    elif args.mode == "client":
        client(args)
    else:
        results = run_suite(args)
        print("\n" + table(results) + "\n\n" + "\n".join(f"- {v}" for v in results["verdict"]))
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
