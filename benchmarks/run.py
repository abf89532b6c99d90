"""The benchmark suite (``nox -s bench``): openagent against a floor and its peers, in one run, same server.

Scenarios (issue 10):
  (a) 40 sequential conversations: a tool call in fragments, the tool runs, then a 300-delta answer;
  (b) the same, 1,000 conversations at once in one process;
  (c) ``import`` time of each SDK over a bare interpreter;
  (d) time to first event (warm median from (a); cold = from process start, imports included);
  (e) resume of a 10,000-message session with the core's JSONL store;
  (f) session append throughput (core JSONL store; ``benchmarks/stores.py``, for the store plugins, if there);
  (g) a typical ported Claude Agent SDK program end to end, on openagent and on claude-agent-sdk's own CLI
      (``benchmarks/ported.py``);
  cold: one prompt from process start to the first event and to exit, per client process (``cold.py``).
  (m) MCP clients: connect time, per-call latency and 60 concurrent 2-second calls, openagent's MCP toolset
      against the official ``mcp`` ClientSession on the same servers (``benchmarks/mcp_bench.py``).

The scripted server runs in its own process; every client runs in its own process too (``clients.py``), so
``cpu`` is the client's own CPU time (``time.process_time`` there) and RSS its own peak. The table goes to
stdout, the numbers to ``benchmarks/results/<stamp>.json`` (and ``latest.json``), the chart to
``benchmarks/results/chart.png`` and ``benchmarks/performance.png`` (the one docs/performance.md shows).

``python benchmarks/run.py --quick`` runs small sizes; ``--scenarios a,c`` picks scenarios; ``--clients``
picks clients. ``--wire anthropic`` runs (a) (by default) over the Anthropic messages wire instead: openagent
with the anthropic plugin against the raw ``anthropic`` client and an httpx floor; its numbers go to
``benchmarks/results/anthropic-<stamp>.json`` and ``latest-anthropic.{json,md}`` (the chart to
``results/chart-anthropic.png``), beside the chat-completions ones, never over them. ``--wire responses``
does the same over the OpenAI Responses API: openagent's Responses wire (``openai-responses:``) against the
raw ``openai`` client's ``responses.stream`` and an httpx floor (``responses-<stamp>.json`` …).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cold

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CLIENTS = ["floor", "openagent", "openagent-partial", "openai", "openai-agents", "pydantic-ai"]
ANTHROPIC_CLIENTS = ["floor-anthropic", "openagent-anthropic", "anthropic"]
RESPONSES_CLIENTS = ["floor-responses", "openagent-responses", "openai-responses"]
# Per wire: the clients, and the references the ratios are taken against (label → client).
WIRES: dict[str, dict[str, Any]] = {
    "openai": {"clients": CLIENTS, "refs": {"floor": "floor", "openai": "openai"}, "openagent": "openagent"},
    "anthropic": {
        "clients": ANTHROPIC_CLIENTS,
        "refs": {"floor": "floor-anthropic", "anthropic": "anthropic"},
        "openagent": "openagent-anthropic",
    },
    "responses": {
        "clients": RESPONSES_CLIENTS,
        "refs": {"floor": "floor-responses", "openai": "openai-responses"},
        "openagent": "openagent-responses",
        "target": 1.3,  # the Responses wire's client CPU ≤ 1.3× the floor's
    },
}
IMPORTS = {
    "openagent": "openagent",
    "openai": "openai",
    "openai-agents": "agents",
    "pydantic-ai": "pydantic_ai",
    "httpx (floor)": "httpx",
}
TARGETS = {
    "cold_cli_vs_floor": 1.5,  # `openagent run` of one prompt, process start to exit, ≤ 1.5× the httpx script
    "a_cpu_vs_floor": 1.5,  # openagent client CPU ≤ 1.5× the floor's
    "a_cpu_below_openai": 5.0,  # … and ≥ 5× below raw openai's
    "b_rss_mb": 200.0,
    "c_import_ms": 250.0,
    "e_resume_s": 0.5,
}


# --- processes --------------------------------------------------------------------------------------------


class Server:
    """The scripted server in its own process, with the bench conversation under model name ``bench``."""

    def __init__(self, deltas: int) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "scripted_server.py"),
                "--port",
                "0",
                "--preset",
                "bench",
                "--deltas",
                str(deltas),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=bench_env(),
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"scripted server did not start: {line!r}")
        self.root = line.split()[-1]
        self.url = self.root + "/v1"

    def add_script(self, name: str, turns: list[dict[str, Any]], mode: str = "queue") -> None:
        import urllib.request

        body = json.dumps({"name": name, "mode": mode, "turns": turns}).encode()
        request = urllib.request.Request(self.root + "/_control/scripts", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    def cpu_s(self) -> float:
        """The server process's CPU time so far (user + system), from /proc."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def bench_env(tmp: Path | None = None) -> dict[str, str]:
    """The environment of every process the suite starts."""
    env = dict(os.environ)
    # An installed package has its bytecode compiled; without this every import would compile from source.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("OPENAGENT_PLUGINS", None)
    if tmp is not None:
        env["XDG_DATA_HOME"] = str(tmp / "data")  # openagent persists sessions by default: not into $HOME
    return env


def run_json(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a benchmark process and parse the JSON object on its last stdout line."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env or bench_env())
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    try:
        return dict(json.loads(lines[-1]))
    except (IndexError, ValueError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {done.returncode}: " + " | ".join(tail)}


def run_client(
    server: Server, client: str, conversations: int, concurrency: int, deltas: int, tmp: Path, timeout: float
) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(HERE / "clients.py"),
        "--client",
        client,
        "--url",
        server.url,
        "--conversations",
        str(conversations),
        "--concurrency",
        str(concurrency),
        "--deltas",
        str(deltas),
    ]
    before = server.cpu_s()
    result = run_json(cmd, timeout, bench_env(tmp))
    result.setdefault("client", client)
    # The server's CPU over the whole client process (warm-up included): context, not the SDK's cost.
    result["server_cpu_s"] = server.cpu_s() - before
    return result


# --- scenarios --------------------------------------------------------------------------------------------


def scenario_clients(
    server: Server,
    clients: list[str],
    conversations: int,
    concurrency: int,
    deltas: int,
    repeat: int,
    tmp: Path,
    timeout: float,
    refs: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    rows = []
    for client in clients:
        runs = [
            run_client(server, client, conversations, concurrency, deltas, tmp, timeout)
            for _ in range(repeat)
        ]
        ok = [r for r in runs if "error" not in r]
        best = min(ok, key=lambda r: r["cpu_s"]) if ok else runs[-1]  # least disturbed run on a shared host
        if len(ok) > 1:
            best["cpu_ms_per_conversation_runs"] = [r["cpu_ms_per_conversation"] for r in ok]
        rows.append(best)
        print(f"  {client:18} {_brief(best)}", flush=True)
    _ratios(rows, refs or WIRES["openai"]["refs"])
    return rows


def _brief(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"ERROR {row['error']}"
    return (
        f"wall {row['wall_ms_per_conversation']:8.1f} ms/conv  cpu {row['cpu_ms_per_conversation']:7.1f} ms"
        f"  rss {row['maxrss_mb']:6.1f} MB  errors {row['errors']}"
    )


def _ratios(rows: list[dict[str, Any]], refs: dict[str, str]) -> None:
    by = {r["client"]: r for r in rows if "error" not in r}
    for row in rows:
        if "error" in row:
            continue
        for label, ref in refs.items():
            if ref in by:
                row[f"cpu_vs_{label}"] = row["cpu_ms_per_conversation"] / by[ref]["cpu_ms_per_conversation"]
                row[f"wall_vs_{label}"] = (
                    row["wall_ms_per_conversation"] / by[ref]["wall_ms_per_conversation"]
                )


def scenario_imports(runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    code = (
        "import time, importlib; t = time.perf_counter(); importlib.import_module({!r}); "
        "print(time.perf_counter() - t)"
    )
    bare = "import time; t = time.perf_counter(); print(time.perf_counter() - t)"
    env = bench_env()
    for label, module in IMPORTS.items():
        times = []
        # one untimed run first writes the bytecode cache, as installing a package does
        subprocess.run([sys.executable, "-c", code.format(module)], capture_output=True, env=env)
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-c", code.format(module)], capture_output=True, text=True, env=env
            )
            if done.returncode:
                out[label] = {"error": done.stderr.strip().splitlines()[-1:]}
                break
            times.append(float(done.stdout))
        else:
            out[label] = {"median_ms": statistics.median(times) * 1000, "min_ms": min(times) * 1000}
    starts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", bare], capture_output=True, check=True, env=env)
        starts.append(time.perf_counter() - t)
    out["bare interpreter start"] = {
        "median_ms": statistics.median(starts) * 1000,
        "min_ms": min(starts) * 1000,
    }
    # Without a bytecode cache (a fresh install before its first import, or PYTHONDONTWRITEBYTECODE with
    # nothing compiled): an empty cache prefix makes every module compile from source, and nothing is written.
    with tempfile.TemporaryDirectory() as empty:
        uncached = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": empty}
        times = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-c", code.format("openagent")], capture_output=True, text=True, env=uncached
            )
            times.append(float(done.stdout))
    out["openagent, no bytecode cache"] = {
        "median_ms": statistics.median(times) * 1000,
        "min_ms": min(times) * 1000,
    }
    return out


def _time_process(cmd: list[str], env: dict[str, str], timeout: float = 120) -> dict[str, Any]:
    """Start ``cmd``; seconds to its first stdout byte and to its exit, and what it printed."""
    import select

    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    first: float | None = None
    out = b""
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, started + timeout - time.perf_counter()))
        if not ready:
            proc.kill()
            break
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        if first is None:
            first = time.perf_counter() - started
        out += chunk
    err = proc.communicate(timeout=timeout)[1]
    ended = time.perf_counter() - started
    return {"first_s": first, "exit_s": ended, "out": out.decode(errors="replace"), "code": proc.returncode,
            "err": err.decode(errors="replace")[-300:]}  # fmt: skip


def scenario_cold(server: Server, clients: list[str], runs: int, tmp: Path) -> list[dict[str, Any]]:
    """Process start → first event and → exit, per client, interleaved over ``runs`` rounds (medians)."""
    import importlib.util

    server.add_script(cold.MODEL, [{"text": cold.ANSWER}], mode="history")
    env = bench_env(tmp)
    env["XDG_CONFIG_HOME"] = str(tmp / "config")  # no user settings for the CLI
    cli = str(Path(sys.executable).parent / "openagent")
    needs = {
        "floor": "httpx", "openagent": "openagent", "openagent-cli": "openagent_cli",
        "openagent-cli-all": "openagent_cli", "openai": "openai", "openai-agents": "agents",
        "pydantic-ai": "pydantic_ai", "claude-agent-sdk": "claude_agent_sdk",
    }  # fmt: skip
    commands = {}
    for client in clients:
        if importlib.util.find_spec(needs[client]) is None:
            continue  # not installed here
        commands[client] = (
            [cli, "run", "-m", f"openai-compatible:{cold.MODEL}", "--base-url", server.url, cold.PROMPT]
            if client.startswith("openagent-cli")
            else [sys.executable, str(HERE / "cold.py"), client, server.url]
        )
    envs = {c: env for c in commands}
    for client in ("openagent", "openagent-cli"):
        envs[client] = {**env, "OPENAGENT_PLUGINS": cold.README_PLUGINS}
    timings: dict[str, list[dict[str, Any]]] = {c: [] for c in commands}
    for client, cmd in commands.items():  # one untimed run each: bytecode written, files in the page cache
        _time_process(cmd, envs[client])
    for _ in range(runs):
        for client, cmd in commands.items():
            timings[client].append(_time_process(cmd, envs[client]))
    rows = []
    expected = "".join(cold.ANSWER)
    for client, done in timings.items():
        good = [d for d in done if d["code"] == 0 and d["first_s"] is not None and expected in d["out"]]
        row: dict[str, Any] = {"client": client, "runs": len(done), "errors": len(done) - len(good)}
        if good:
            row["first_ms"] = statistics.median(d["first_s"] for d in good) * 1000
            row["exit_ms"] = statistics.median(d["exit_s"] for d in good) * 1000
        else:
            row["error"] = (
                (done[-1]["err"] or done[-1]["out"]).strip().splitlines()[-1:] if done else "not run"
            )
        rows.append(row)
    floor = next((r for r in rows if r["client"] == "floor" and "exit_ms" in r), None)
    for row in rows:
        if floor is not None and "exit_ms" in row:
            row["first_vs_floor"] = row["first_ms"] / floor["first_ms"]
            row["exit_vs_floor"] = row["exit_ms"] / floor["exit_ms"]
    return rows


def cold_table(rows: list[dict[str, Any]], runs: int) -> str:
    lines = [
        f"**cold: one prompt from process start** (median of {runs}, interleaved; bytecode cached)",
        "",
        "| client | first event ms | ÷ floor | exit ms | ÷ floor | errors |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "exit_ms" not in r:
            lines.append(f"| {r['client']} | error: {r.get('error')} | | | | {r['errors']} |")
            continue
        lines.append(
            f"| {r['client']} | {r['first_ms']:.0f} | {r.get('first_vs_floor', float('nan')):.2f}× "
            f"| {r['exit_ms']:.0f} | {r.get('exit_vs_floor', float('nan')):.2f}× | {r['errors']} |"
        )
    return "\n".join(lines)


def scenario_sessions(server: Server, messages: int, tmp: Path) -> dict[str, Any]:
    server.add_script("resume", [{"text": ["It ", "will ", "rain."]}])
    cmd = [sys.executable, str(HERE / "session_bench.py"), "--messages", str(messages), "--url", server.url]
    return run_json(cmd, 600, bench_env(tmp))


def scenario_stores(tmp: Path) -> dict[str, Any]:
    """The store plugins' own benchmark (``benchmarks/stores.py``, their developer's), when it is there."""
    script = HERE / "stores.py"
    if not script.exists():
        return {"skipped": "benchmarks/stores.py is not there yet"}
    out = tmp / "stores.json"
    try:
        done = subprocess.run(
            [sys.executable, str(script), "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=1800,
            env=bench_env(tmp),
        )
    except subprocess.TimeoutExpired:
        return {"error": "benchmarks/stores.py timed out"}
    if done.returncode or not out.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"benchmarks/stores.py exited {done.returncode}: " + " | ".join(tail)}
    return {"table": done.stdout.strip(), "results": json.loads(out.read_text())}


def scenario_mcp(tmp: Path, repeat: int) -> dict[str, Any]:
    """openagent's MCP client against the official one (``benchmarks/mcp_bench.py``, its own processes)."""
    out = tmp / "mcp.json"
    cmd = [sys.executable, str(HERE / "mcp_bench.py"), "--json", str(out), "--repeat", str(repeat)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=bench_env(tmp))
    except subprocess.TimeoutExpired:
        return {"error": "benchmarks/mcp_bench.py timed out"}
    if done.returncode or not out.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"benchmarks/mcp_bench.py exited {done.returncode}: " + " | ".join(tail)}
    return dict(json.loads(out.read_text()))


# --- reporting --------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")
        ]
        info["cpu"] = names[0] if names else "unknown"
        mhz = [line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("cpu MHz")]
        info["cpu_mhz"] = mhz[0] if mhz else None
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
        info["memory_gb"] = round(int(mem) / 1024 / 1024, 1)
    except OSError:
        pass
    info["loadavg_start"] = os.getloadavg()
    return info


def table(rows: list[dict[str, Any]], title: str, sdk: str = "openai") -> str:
    head = (
        f"| client | wall ms/conv | client CPU ms/conv | CPU ÷ floor | CPU ÷ {sdk} | peak RSS MB | "
        "TTFE ms (warm) | TTFE ms (cold) | errors |"
    )
    lines = [f"**{title}**", "", head, "|" + "---|" * 9]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['client']} | error: {r['error'][:80]} |" + " |" * 7)
            continue

        def num(key: str, fmt: str = "{:.1f}", r: dict[str, Any] = r) -> str:
            value = r.get(key)
            return fmt.format(value) if isinstance(value, int | float) else "–"

        lines.append(
            f"| {r['client']} | {num('wall_ms_per_conversation')} | {num('cpu_ms_per_conversation')} | "
            f"{num('cpu_vs_floor', '{:.2f}×')} | {num(f'cpu_vs_{sdk}', '{:.2f}×')} | {num('maxrss_mb')} | "
            f"{num('ttfe_ms')} | {num('cold_ttfe_ms', '{:.0f}')} | {r['errors']} |"
        )
    return "\n".join(lines)


def verdicts(results: dict[str, Any]) -> list[str]:
    out = []
    wire = WIRES[results["config"].get("wire", "openai")]
    (floor, sdk), ours = wire["refs"].items(), wire["openagent"]
    a = {r["client"]: r for r in results.get("a", []) if "error" not in r}
    if ours in a and floor[1] in a:
        ratio, target = a[ours]["cpu_vs_floor"], wire.get("target", TARGETS["a_cpu_vs_floor"])
        ok = "MET" if ratio <= target else "MISSED"
        out.append(f"(a) {ours} client CPU = {ratio:.2f}× the floor's (target ≤ {target}×): {ok}")
    if ours in a and sdk[1] in a:
        below = a[sdk[1]]["cpu_ms_per_conversation"] / a[ours]["cpu_ms_per_conversation"]
        ok = "MET" if below >= TARGETS["a_cpu_below_openai"] else "MISSED"
        out.append(f"(a) {ours} client CPU is {below:.2f}× below raw {sdk[0]}'s (target ≥ 5×): {ok}")
    b = {r["client"]: r for r in results.get("b", []) if "error" not in r}
    if "openagent" in b:
        r = b["openagent"]
        ok = "MET" if r["errors"] == 0 and r["maxrss_mb"] <= TARGETS["b_rss_mb"] else "MISSED"
        out.append(
            f"(b) openagent, {r['conversations']} concurrent: {r['errors']} errors, "
            f"peak RSS {r['maxrss_mb']:.0f} MB (target 0 errors, ≤ 200 MB): {ok}"
        )
    elif results.get("b"):
        out.append(
            "(b) openagent: failed to run: "
            + str(next((r.get("error") for r in results["b"] if r["client"] == "openagent"), "not run"))
        )
    cold_rows = {r["client"]: r for r in results.get("cold", [])}
    for client in ("openagent-cli", "openagent", "openagent-cli-all"):
        if "exit_vs_floor" in cold_rows.get(client, {}):
            ratio = cold_rows[client]["exit_vs_floor"]
            ok = "MET" if ratio <= TARGETS["cold_cli_vs_floor"] else "MISSED"
            out.append(
                f"(cold) {client}, process start to exit = {ratio:.2f}× the httpx script "
                f"(target ≤ 1.5×): {ok}"
            )
    c = results.get("c", {}).get("openagent", {})
    if "median_ms" in c:
        ok = "MET" if c["median_ms"] <= TARGETS["c_import_ms"] else "MISSED"
        out.append(f"(c) import openagent: {c['median_ms']:.0f} ms median (target ≤ 250 ms): {ok}")
    e = results.get("e", {})
    if "resume_load_s" in e:
        ok = "MET" if e["resume_load_s"] <= TARGETS["e_resume_s"] else "MISSED"
        out.append(
            f"(e) resume of {e['messages']} messages: {e['resume_load_s'] * 1e3:.0f} ms (target ≤ 500 ms): "
            f"{ok}"
        )
    return out


def report(results: dict[str, Any]) -> str:
    parts = []
    wire = results["config"].get("wire", "openai")
    sdk = next(reversed(WIRES[wire]["refs"]))
    on = {"openai": "", "anthropic": ", anthropic messages wire", "responses": ", OpenAI Responses wire"}[
        wire
    ]
    if results.get("a"):
        title = f"(a) {results['config']['conversations']} sequential conversations{on}"
        parts.append(table(results["a"], title, sdk))
    if results.get("b"):
        title = f"(b) {results['config']['concurrent']} concurrent conversations{on}"
        parts.append(table(results["b"], title, sdk))
    if results.get("c"):
        lines = ["**(c) import time** (in a fresh interpreter, median)", "", "| module | ms |", "|---|---|"]
        lines += [
            f"| {k} | {v['median_ms']:.0f} |" if "median_ms" in v else f"| {k} | error: {v['error']} |"
            for k, v in results["c"].items()
        ]
        parts.append("\n".join(lines))
    if results.get("cold"):
        parts.append(cold_table(results["cold"], results["config"].get("cold_runs", 0)))
    if results.get("e"):
        e = results["e"]
        if "error" in e:
            parts.append(f"**(e)/(f) sessions**: error: {e['error']}")
        else:
            lines = [
                "**(e) resume, (f) append** (core JSONL store)",
                "",
                "| measure | value |",
                "|---|---|",
                f"| resume {e['messages']} messages: load, rebuild | {e['resume_load_s'] * 1e3:.0f} ms |",
                f"| … of which CPU | {e.get('resume_load_cpu_s', float('nan')) * 1e3:.0f} ms |",
            ]
            if "resume_turn_s" in e:
                lines.append(
                    f"| resume {e['messages']} messages, one model turn | {e['resume_turn_s'] * 1e3:.0f} ms |"
                )
            lines += [
                f"| append, one entry per call | {e['append_one_per_s']:,.0f} entries/s |",
                f"| append, batches of 100 | {e['append_batch100_entries_per_s']:,.0f} entries/s |",
                f"| append, one entry per call, fsync | {e['append_one_fsync_per_s']:,.0f} entries/s |",
                f"| session file size | {e['file_mb']:.1f} MB |",
            ]
            parts.append("\n".join(lines))
    f = results.get("f")
    if f is not None:
        shown = f["table"] if "table" in f else json.dumps(f, indent=1)
        parts.append("**(f) store plugins** (benchmarks/stores.py)\n\n```\n" + shown + "\n```")
    m = results.get("m")
    if m is not None:
        from mcp_bench import table as mcp_table

        shown = mcp_table(m) if "rows" in m else f"error: {m.get('error')}"
        title = "**(m) MCP clients** (benchmarks/mcp_bench.py; ratios ÷ the official client)"
        parts.append(title + "\n\n" + shown)
    parts.append("\n".join(f"- {v}" for v in [*verdicts(results), *(m or {}).get("verdict", [])]))
    return "\n\n".join(parts)


def chart(results: dict[str, Any], paths: list[Path]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(k, results[k]) for k in ("a", "b") if results.get(k)]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (key, rows) in zip(axes[0], panels, strict=True):
        rows = [r for r in rows if "error" not in r]
        names = [r["client"] for r in rows]
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], [r["wall_ms_per_conversation"] for r in rows], 0.4, label="wall")
        ax.bar([x + 0.2 for x in xs], [r["cpu_ms_per_conversation"] for r in rows], 0.4, label="client CPU")
        ax.set_xticks(list(xs), names, rotation=25, ha="right")
        ax.set_ylabel("ms per conversation (lower is better)")
        n = results["config"]["conversations"] if key == "a" else results["config"]["concurrent"]
        ax.set_title(f"({key}) {n} {'sequential' if key == 'a' else 'concurrent'} conversations")
        ax.legend()
    fig.tight_layout()
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wire", choices=sorted(WIRES), default="openai", help="the wire format of (a)/(b)")
    parser.add_argument("--scenarios", help="default: a,b,c,d,e,f,g,cold,m (openai wire), a (anthropic wire)")
    parser.add_argument("--clients", help="default: every client of the wire")
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--deltas", type=int, default=300)
    parser.add_argument("--messages", type=int, default=10_000, help="session length for (e)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per client in (a); the least CPU is kept")
    parser.add_argument("--import-runs", type=int, default=7)
    parser.add_argument("--cold-runs", type=int, default=11, help="rounds of the cold scenario (medians)")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the harness")
    parser.add_argument("--no-chart", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.concurrent, args.messages, args.import_runs = 5, 50, 1000, 2
        args.cold_runs = 3
    wire = WIRES[args.wire]
    scenarios = set((args.scenarios or ("a,b,c,d,e,f,g,cold,m" if args.wire == "openai" else "a")).split(","))
    clients = [c for c in (args.clients or ",".join(wire["clients"])).split(",") if c]
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "config": {
            "conversations": args.conversations,
            "concurrent": args.concurrent,
            "deltas": args.deltas,
            "messages": args.messages,
            "repeat": args.repeat,
            "clients": clients,
            "wire": args.wire,
            "cold_runs": args.cold_runs,
        },
    }
    server = Server(args.deltas)
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            if scenarios & {"a", "d"}:
                print(f"(a) {args.conversations} sequential conversations", flush=True)
                results["a"] = scenario_clients(
                    server, clients, args.conversations, 1, args.deltas, args.repeat, tmp, 1800, wire["refs"]
                )
            if "b" in scenarios:
                print(f"(b) {args.concurrent} concurrent conversations", flush=True)
                results["b"] = scenario_clients(
                    server, clients, args.concurrent, args.concurrent, args.deltas, 1, tmp, 1800, wire["refs"]
                )
            if "cold" in scenarios:
                print(f"(cold) one prompt from process start, {args.cold_runs} rounds", flush=True)
                cold_clients = [
                    c for c in (args.clients or ",".join(cold.CLIENTS)).split(",") if c in cold.CLIENTS
                ]
                results["cold"] = scenario_cold(server, cold_clients, args.cold_runs, tmp)
            if "c" in scenarios:
                print("(c) import time", flush=True)
                results["c"] = scenario_imports(args.import_runs)
            if "e" in scenarios or "f" in scenarios:
                print("(e) resume, (f) append", flush=True)
                results["e"] = scenario_sessions(server, args.messages, tmp)
            if "f" in scenarios:
                results["f"] = scenario_stores(tmp)
            if "g" in scenarios:
                from ported import scenario_ported

                print("(g) a ported Claude Agent SDK program, process start to exit", flush=True)
                results["g"] = scenario_ported(server, 3 if args.quick else 5)
            if "m" in scenarios:
                print("(m) MCP clients", flush=True)
                results["m"] = scenario_mcp(tmp, args.repeat)
    finally:
        server.close()
    results["machine"]["loadavg_end"] = os.getloadavg()
    text = report(results)
    print("\n" + text)
    RESULTS.mkdir(exist_ok=True)
    stamp = results["when"].replace(":", "").replace("-", "")
    prefix, suffix = ("", "") if args.wire == "openai" else (f"{args.wire}-", f"-{args.wire}")
    for name in (f"{prefix}{stamp}.json", f"latest{suffix}.json"):
        (RESULTS / name).write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / f"latest{suffix}.md").write_text(text + "\n")
    charts = [RESULTS / "chart.png", HERE / "performance.png"] if args.wire == "openai" else []
    charts = charts or [RESULTS / f"chart{suffix}.png"]
    if not args.no_chart:
        chart(results, charts)
    written = f"{RESULTS / f'latest{suffix}.json'}, {RESULTS / f'latest{suffix}.md'}"
    print(f"\nwrote {written}" + ("" if args.no_chart else f" and the chart {charts[-1]}"))


if __name__ == "__main__":
    main()
