"""Session benchmarks on the core's JSONL store, in a fresh process: resume of a long session, append rate.

``python benchmarks/session_bench.py --messages 10000`` prints one JSON line:
``resume_load_s`` (read the file and rebuild the model history, as `resume=` does), ``resume_turn_s`` (the
same plus one model turn against the scripted server, when ``--url`` is given), and ``append_*`` rates.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _transcript(n: int, session_id: str) -> list[dict[str, Any]]:
    from openagent._sessions import entry_for
    from openagent._types import (
        AssistantMessage,
        TextBlock,
        ToolResultBlock,
        ToolUseBlock,
        Usage,
        UserMessage,
    )

    entries = []
    for i in range(n // 2):
        if i % 5 == 4:  # every fifth exchange is a tool round trip
            call = ToolUseBlock(id=f"call_{i}", name="lookup", input={"city": "Paris", "days": i % 7})
            assistant = AssistantMessage(
                content=[TextBlock(text="Let me check."), call],
                model="bench",
                usage=Usage(input_tokens=100 + i, output_tokens=20),
                stop_reason="tool_use",
            )
            user = UserMessage(
                content=[ToolResultBlock(tool_use_id=f"call_{i}", content="sunny, 21 degrees")]
            )
            entries += [entry_for(assistant, session_id), entry_for(user, session_id)]
        else:
            user = UserMessage(content=f"Question {i}: what about the weather on day {i % 7}? " * 2)
            assistant = AssistantMessage(
                content=[TextBlock(text=f"Answer {i}: it will be fine. " * 4)],
                model="bench",
                usage=Usage(input_tokens=100 + i, output_tokens=40),
                stop_reason="end_turn",
            )
            entries += [entry_for(user, session_id), entry_for(assistant, session_id)]
    return entries


def _size_mb(root: Path, name: str) -> float:
    return sum(p.stat().st_size for p in root.rglob(name)) / 1e6


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    from openagent._sessions import JSONLSessionStore, history_from_entries, project_key_for

    out: dict[str, Any] = {"messages": args.messages}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = JSONLSessionStore(root)
        key = {"project_key": project_key_for(root), "session_id": "long"}  # where resume= looks
        entries = _transcript(args.messages, "long")
        for start in range(0, len(entries), 1000):
            await store.append(key, entries[start : start + 1000])  # type: ignore[arg-type]
        out["file_mb"] = _size_mb(root, "long.jsonl")

        loads, cpus = [], []
        for _ in range(args.repeat):
            fresh = JSONLSessionStore(root)  # nothing cached: what a new process resuming pays
            t, c = time.perf_counter(), time.process_time()
            loaded = await fresh.load(key)  # type: ignore[arg-type]
            history = history_from_entries(loaded or [])
            loads.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        assert len(history) == args.messages, len(history)
        out["resume_load_s"] = min(loads)
        out["resume_load_median_s"] = statistics.median(loads)
        out["resume_load_cpu_s"] = min(cpus)

        if args.url:
            out["resume_turn_s"] = await _resume_turn(args.url, root, "long")

        # append throughput: one entry per call (what the loop does per message), and batches of 100
        small = _transcript(args.appends, "rate")
        rate_store = JSONLSessionStore(root)
        rate_key = {"project_key": "bench", "session_id": "rate"}
        t = time.perf_counter()
        for entry in small:
            await rate_store.append(rate_key, [entry])  # type: ignore[arg-type]
        out["append_one_per_s"] = len(small) / (time.perf_counter() - t)
        batch_key = {"project_key": "bench", "session_id": "batch"}
        batched = _transcript(args.appends, "batch")
        t = time.perf_counter()
        for start in range(0, len(batched), 100):
            await rate_store.append(batch_key, batched[start : start + 100])  # type: ignore[arg-type]
        out["append_batch100_entries_per_s"] = len(batched) / (time.perf_counter() - t)
        fsync_store = JSONLSessionStore(root, durability="fsync")
        fsync_key = {"project_key": "bench", "session_id": "fsync"}
        few = _transcript(200, "fsync")
        t = time.perf_counter()
        for entry in few:
            await fsync_store.append(fsync_key, [entry])  # type: ignore[arg-type]
        out["append_one_fsync_per_s"] = len(few) / (time.perf_counter() - t)
    return out


async def _resume_turn(url: str, root: Path, session_id: str) -> float:
    """Resume the long session through `query` and run one turn (the server answers with text)."""
    from openagent import AgentOptions, JSONLSessionStore, ResultMessage, query

    __import__("openai")  # the plugin imports its SDK on first use: not a cost of resuming
    options = AgentOptions(
        model="openai-compatible:resume",
        base_url=url,
        api_key="sk-bench",
        resume=session_id,
        session_store=JSONLSessionStore(root),
        cwd=str(root),
    )
    t = time.perf_counter()
    async for message in query(prompt="And tomorrow?", options=options):
        if isinstance(message, ResultMessage) and message.is_error:
            raise RuntimeError(f"resume turn failed: {message.result}")
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--url", help="the scripted server's /v1 URL, to time a resumed turn too")
    args = parser.parse_args()
    try:
        result = asyncio.run(bench(args))
    except Exception as exc:  # reported in the JSON, so the rest of the suite still runs
        result = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
