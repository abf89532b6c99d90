"""Session-store benchmark: append throughput and the load time of a 10,000-entry session, per store.

Starts its own redis-server and PostgreSQL on loopback (the same launchers the store tests use), so it needs
the Debian packages ``redis-server`` and ``postgresql`` and the three store plugins installed::

    python benchmarks/stores.py                 # all stores, prints a table
    python benchmarks/stores.py --stores sqlite --json benchmarks/results/stores.json

Appends are measured two ways: one entry per call (a store written per message) and batches of 100.
Every append is durable when it returns: SQLite fsyncs each commit (``synchronous=FULL``), Redis runs
with ``appendfsync always``, PostgreSQL with ``fsync=on`` and synchronous commit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from stores_suite import PostgresServer, RedisServer

SESSION = 10_000


def entry(i: int) -> dict[str, Any]:
    """A transcript entry of realistic size (~600 bytes): an assistant turn with text and a tool call."""
    return {
        "type": "assistant",
        "uuid": str(uuid.UUID(int=i)),
        "parentUuid": str(uuid.UUID(int=i - 1)) if i else None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "sessionId": "bench",
        "message": {
            "role": "assistant",
            "model": "qwen3:8b",
            "content": [
                {
                    "type": "text",
                    "text": f"Step {i}: reading the file to find the function that parses it. " * 3,
                },
                {
                    "type": "tool_use",
                    "id": f"call_{i}",
                    "name": "Read",
                    "input": {"file_path": f"/src/m{i}.py"},
                },
            ],
            "usage": {"input_tokens": 1200 + i, "output_tokens": 85},
        },
    }


async def bench_store(make: Any, repeats: int) -> dict[str, float]:
    singles, batches, loads = [], [], []
    for _ in range(repeats):
        async with make() as store:
            key = {"project_key": "bench", "session_id": uuid.uuid4().hex}
            n = 1_000
            start = time.perf_counter()
            for i in range(n):
                await store.append(key, [entry(i)])
            singles.append(n / (time.perf_counter() - start))

            key = {"project_key": "bench", "session_id": uuid.uuid4().hex}
            start = time.perf_counter()
            for b in range(0, SESSION, 100):
                await store.append(key, [entry(i) for i in range(b, b + 100)])
            batches.append(SESSION / (time.perf_counter() - start))

            for _ in range(3):
                start = time.perf_counter()
                loaded = await store.load(key)
                loads.append(time.perf_counter() - start)
                assert loaded is not None and len(loaded) == SESSION
    texts = [json.dumps(entry(i)) for i in range(SESSION)]
    start = time.perf_counter()
    for text in texts:
        json.loads(text)
    decode = time.perf_counter() - start
    return {
        "json_decode_10k_s": decode,  # the floor under any load: decoding the entries alone
        "append_1_per_call_entries_per_s": statistics.median(singles),
        "append_100_per_call_entries_per_s": statistics.median(batches),
        "load_10k_s": statistics.median(loads),
    }


async def main(which: list[str], repeats: int) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    if "sqlite" in which:
        from openagent_sqlite import SQLiteSessionStore

        with tempfile.TemporaryDirectory() as tmp:
            results["sqlite"] = await bench_store(
                lambda: SQLiteSessionStore(Path(tmp) / f"{uuid.uuid4().hex}.db"), repeats
            )
    if "redis" in which:
        from openagent_redis import RedisSessionStore

        server = RedisServer()
        try:
            server.start()
            results["redis"] = await bench_store(lambda: RedisSessionStore(server.url), repeats)
        finally:
            server.remove()
    if "postgres" in which:
        from openagent_postgres import PostgresSessionStore

        pg = PostgresServer()
        try:
            pg.start()
            results["postgres"] = await bench_store(
                lambda: PostgresSessionStore(pg.url, table=f"t{uuid.uuid4().hex}"), repeats
            )
        finally:
            pg.remove()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="sqlite,redis,postgres")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    results = asyncio.run(main(args.stores.split(","), args.repeats))
    header = f"{'store':<10} {'append 1/call':>16} {'append 100/call':>18} {'load 10k':>10}"
    print(f"{header} {'(json.loads 10k)':>17}")
    for name, r in results.items():
        print(
            f"{name:<10} {r['append_1_per_call_entries_per_s']:>11,.0f} e/s "
            f"{r['append_100_per_call_entries_per_s']:>13,.0f} e/s {r['load_10k_s'] * 1000:>7.1f} ms"
            f" {r['json_decode_10k_s'] * 1000:>14.1f} ms"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {"python": platform.python_version(), "machine": platform.machine(), "repeats": args.repeats}
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
