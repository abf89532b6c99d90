"""Session viewer benchmark (``nox -s bench_viewer``): how fast the pages paint in headless Chromium.

Builds, in a temporary user directory, one 10,000-message session (prompts, markdown answers with code,
tool calls with results, thinking) and a project of 1,000 ordinary sessions, starts ``openagent sessions
serve`` in its own process, and loads each page in Debian's Chromium (Playwright pointed at it) several
times. Per page it reports, in milliseconds from navigation start (median of the runs, and the spread):

- ``ttfb``: the first byte of the response;
- ``fcp``: first contentful paint (what the targets are about: ≤ 1,000 ms for the 10,000-message session,
  ≤ 500 ms for the list of 1,000);
- ``dcl`` / ``load``: the whole document parsed / loaded.

The session's first view reads all 10,000 entries and builds its timeline; later views reuse the timeline
(and still read the session from the store). The list's first load may wait for the viewer's summary
cache (every session read from the store once, begun when the server starts): ``cold`` is that load, the
rest are warm.

The floor: the same pages' bytes (and their style sheets and script) saved as files and served by Python's
``http.server`` from another process, loaded the same way in the same run: what Chromium needs to paint
that much HTML when the server does no work. The machine is shared and noisy, so the ratio to the floor
is the steadier figure. ``--json`` prints one JSON object instead of the table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "viewer"))  # the tests' way to start Chromium here
TARGETS = {"session_fcp_ms": 1000.0, "list_fcp_ms": 500.0}
ANSWER = (
    "Here is what I found in `{name}`:\n\n- the retry policy lives in **retry.py**\n- it backs off "
    "exponentially\n\n```python\ndef backoff(attempt: int) -> float:\n"
    "    return min(30.0, 0.5 * 2**attempt)\n```\n"
)


def _session(session_id: str, messages: int) -> list[dict[str, Any]]:
    """A realistic transcript of ``messages`` messages, written as the loop writes them."""
    from openagent import (
        AssistantMessage,
        SystemMessage,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        Usage,
        UserMessage,
    )
    from openagent._sessions import entry_for

    entries = [entry_for(SystemMessage(subtype="init", data={"model": "bench", "cwd": "/work"}), session_id)]
    i = 0
    while len(entries) < messages:
        entries.append(
            entry_for(UserMessage(content=f"Question {i}: where is the retry policy? " * 2), session_id)
        )
        call = ToolUseBlock(id=f"call_{i}", name="Grep", input={"pattern": "retry", "path": f"src/{i}"})
        think = ThinkingBlock(thinking="I should search the sources first. " * 3)
        usage = Usage(input_tokens=900 + i, output_tokens=40)
        first = AssistantMessage(content=[think, call], model="bench", usage=usage, stop_reason="tool_use")
        entries.append({**entry_for(first, session_id), "latency_ms": 420, "cost_usd": 0.0004})
        result = ToolResultBlock(tool_use_id=f"call_{i}", content="src/retry.py:12: def backoff(...)\n" * 8)
        entries.append(entry_for(UserMessage(content=[result]), session_id))
        answer = AssistantMessage(
            content=[TextBlock(text=ANSWER.format(name=f"src/{i}"))],
            model="bench",
            usage=usage,
            stop_reason="end_turn",
        )
        entries.append({**entry_for(answer, session_id), "latency_ms": 380, "cost_usd": 0.0005})
        i += 1
    return entries[:messages]


def build(root: Path, messages: int, sessions: int) -> tuple[Path, Path, str]:
    """The two projects: the big session's and the list's; returns their directories and the big id."""
    import asyncio

    from openagent import JSONLSessionStore
    from openagent.plugin import project_key_for

    store = JSONLSessionStore(root / "data" / "openagent" / "sessions")
    big_dir, list_dir = root / "big", root / "many"
    big_dir.mkdir()
    list_dir.mkdir()

    async def write() -> None:
        big = {"project_key": project_key_for(big_dir), "session_id": "big-session"}
        await store.append(big, _session("big-session", messages))  # type: ignore[arg-type]
        for n in range(sessions):
            sid = f"session-{n:04d}"
            key = {"project_key": project_key_for(list_dir), "session_id": sid}
            await store.append(key, _session(sid, 12))  # type: ignore[arg-type]

    asyncio.run(write())
    return big_dir, list_dir, "big-session"


def serve(root: Path, cwd: Path, extra_project: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "XDG_DATA_HOME": str(root / "data"), "OPENAGENT_PLUGINS": "cli,viewer"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "openagent_cli",
            "sessions",
            "serve",
            "--port",
            "0",
            "--project",
            str(extra_project),
        ],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        raise RuntimeError(f"the viewer did not start: {line!r}")
    return proc, line.split("serving ", 1)[1].split()[0]


TIMING = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return {ttfb: nav.responseStart, fcp: fcp ? fcp.startTime : null, dcl: nav.domContentLoadedEventEnd,
          load: nav.loadEventEnd, items: document.querySelectorAll(".item, a.row").length};
}"""


def floor_site(root: Path, url: str, session_url: str) -> tuple[subprocess.Popen[str], str, str]:
    """The two pages as the viewer served them, with their assets, served as static files."""
    import httpx

    site = root / "floor"
    base = url.rstrip("/")
    pages = {"list.html": url, "session.html": session_url}
    assets = ["/static/viewer.css", "/static/viewer.js", "/static/favicon.svg", "/pygments.css"]
    for name, address in [*pages.items(), *[(a.lstrip("/"), base + a) for a in assets]]:
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(httpx.get(address, timeout=60).content)
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    port = proc.stdout.readline().split(" port ")[1].split()[0]
    return proc, f"http://127.0.0.1:{port}/list.html", f"http://127.0.0.1:{port}/session.html"


def measure(browser: Any, url: str, runs: int) -> list[dict[str, float]]:
    rows = []
    for _ in range(runs):
        page = browser.new_page()
        page.goto(url, wait_until="load", timeout=60_000)
        rows.append(page.evaluate(TIMING))
        page.close()
    return rows


def _stats(rows: list[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {"items": rows[-1]["items"]}
    for key in ("ttfb", "fcp", "dcl", "load"):
        values = [r[key] for r in rows if r[key] is not None]
        out[key] = round(statistics.median(values), 1)
        out[f"{key}_range"] = [round(min(values), 1), round(max(values), 1)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from openagent.plugin import project_key_for

    with tempfile.TemporaryDirectory(prefix="openagent-viewer-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        big_dir, list_dir, big_id = build(root, args.messages, args.sessions)
        built = time.perf_counter() - started
        proc, url = serve(root, list_dir, big_dir)
        try:
            with sync_playwright() as playwright:
                from viewer_support import launch_chromium

                browser = launch_chromium(playwright)
                cold = measure(browser, url, 1)
                warm = measure(browser, url, args.runs)
                session_url = f"{url.rstrip('/')}/s/{project_key_for(big_dir)}/{big_id}"
                session_cold = measure(browser, session_url, 1)  # the first view reads and builds it all
                session = measure(browser, session_url, args.runs)
                static, list_file, session_file = floor_site(root, url, session_url)
                try:
                    floor_list = measure(browser, list_file, args.runs)
                    floor_session = measure(browser, session_file, args.runs)
                finally:
                    static.terminate()
                    static.wait(10)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(10)
    results = {
        "messages": args.messages,
        "sessions": args.sessions,
        "runs": args.runs,
        "build_s": round(built, 2),
        "list_cold": _stats(cold),
        "list": _stats(warm),
        "session_cold": _stats(session_cold),
        "session": _stats(session),
        "floor_list": _stats(floor_list),
        "floor_session": _stats(floor_session),
        "targets": TARGETS,
    }
    for page in ("list", "session"):
        results[f"{page}_fcp_vs_floor"] = round(results[page]["fcp"] / results[f"floor_{page}"]["fcp"], 2)
    results["verdicts"] = {
        "session_fcp": results["session"]["fcp"] <= TARGETS["session_fcp_ms"],
        "list_fcp": results["list"]["fcp"] <= TARGETS["list_fcp_ms"],
        "list_cold_fcp": results["list_cold"]["fcp"] <= TARGETS["list_fcp_ms"],
        "session_first_view_fcp": results["session_cold"]["fcp"] <= TARGETS["session_fcp_ms"],
    }
    if args.json:
        print(json.dumps(results))
        return
    print(f"built {args.messages:,}-message session and {args.sessions:,} sessions in {built:.1f} s")
    print(f"{'page':<26}{'items':>7}{'ttfb':>9}{'fcp':>9}{'dcl':>9}{'load':>9}   (ms, median of {args.runs})")
    rows = [("list, cold cache (1 run)", "list_cold"), ("list", "list"), ("list, floor", "floor_list")]
    rows += [
        ("session, first view", "session_cold"),
        ("session", "session"),
        ("session, floor", "floor_session"),
    ]
    for name, key in rows:
        r = results[key]
        print(f"{name:<26}{r['items']:>7}{r['ttfb']:>9}{r['fcp']:>9}{r['dcl']:>9}{r['load']:>9}")
    ratios = results["list_fcp_vs_floor"], results["session_fcp_vs_floor"]
    print(f"first paint vs the floor: list {ratios[0]}×, session {ratios[1]}×")
    for name, ok in results["verdicts"].items():
        print(f"{name}: {'meets' if ok else 'MISSES'} its target")


if __name__ == "__main__":
    main()
