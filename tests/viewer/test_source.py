"""Reading sessions for the pages, in process: checks before the store, caches that notice rewrites.

The async tests run under asyncio and trio, each in a thread of its own: the browser tests in this process
hold the main thread's event loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from viewer_support import run_async

from openagent import JSONLSessionStore, SessionError
from openagent_viewer._live import Followed
from openagent_viewer._redact import Redactor
from openagent_viewer._source import NotFoundError, Source

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


def entry(n: int, text: str = "hello") -> dict[str, Any]:
    return {"type": "user", "uuid": f"u{n}", "timestamp": f"2026-01-01T00:00:{n:02}+00:00",
            "message": {"type": "user", "content": f"{text} {n}"}}  # fmt: skip


@BACKENDS
def test_entries_are_redacted_and_a_rewritten_session_is_read_afresh(tmp_path: Path, backend: str) -> None:
    run_async(_entries_are_redacted_and_a_rewritten_session_is_read_afresh, tmp_path, backend=backend)


async def _entries_are_redacted_and_a_rewritten_session_is_read_afresh(tmp_path: Path) -> None:
    store = JSONLSessionStore(tmp_path)
    source = Source(store, "p", redactor=Redactor(["sk-secret-value"]))
    key = {"project_key": "p", "session_id": "s"}
    await store.append(key, [entry(1), entry(2, "sk-secret-value")])
    first = await source.entries("p", "s")
    assert first[1]["message"]["content"] == "[redacted] 2"
    await store.append(key, [entry(3)])
    second = await source.entries("p", "s")
    assert second[:2] == first and second[2]["uuid"] == "u3"
    await store.delete(key)  # the same id, other entries
    await store.append(key, [entry(7), entry(8), entry(9), entry(10, "sk-secret-value")])
    third = await source.entries("p", "s")
    assert [e["uuid"] for e in third] == ["u7", "u8", "u9", "u10"]
    assert third[3]["message"]["content"] == "[redacted] 10"


@BACKENDS
def test_unknown_projects_and_odd_ids_never_reach_the_store(tmp_path: Path, backend: str) -> None:
    run_async(_unknown_projects_and_odd_ids_never_reach_the_store, tmp_path, backend=backend)


async def _unknown_projects_and_odd_ids_never_reach_the_store(tmp_path: Path) -> None:
    class Recording:
        def __init__(self) -> None:
            self.keys: list[Any] = []

        async def load(self, key: Any) -> None:
            self.keys.append(key)

        async def append(self, key: Any, entries: Any) -> None:
            raise AssertionError("read-only")

    store = Recording()
    source = Source(store, "p", projects=("q",))  # type: ignore[arg-type]
    for project, session_id in [("p", "../x"), ("p", "a/b"), ("other", "s"), ("p", "")]:
        with pytest.raises(NotFoundError):
            await source.entries(project, session_id)
    with pytest.raises(NotFoundError):
        await source.entries("q", "missing")  # a known project, a well-formed id: asked, and not there
    assert store.keys == [{"project_key": "q", "session_id": "missing"}]
    with pytest.raises(SessionError, match="cannot list sessions"):
        await source.summaries("p")


@BACKENDS
def test_summaries_are_cached_by_modification_time(tmp_path: Path, backend: str) -> None:
    run_async(_summaries_are_cached_by_modification_time, tmp_path, backend=backend)


async def _summaries_are_cached_by_modification_time(tmp_path: Path) -> None:
    store = JSONLSessionStore(tmp_path)
    source = Source(store, "p")
    await store.append({"project_key": "p", "session_id": "a"}, [entry(1, "first")])
    [row] = await source.summaries("p")
    assert row.title == "first 1" and row.status == "running"
    assert (await source.summaries("p"))[0] is row  # unchanged: not read again
    await store.append({"project_key": "p", "session_id": "b"}, [entry(2, "second")])
    assert [r.title for r in await source.summaries("p")] == ["second 2", "first 1"]
    assert await source.projects() == ["p"]


def test_a_followed_session_is_fed_once_and_logs_its_changes() -> None:
    followed = Followed("p", "s")
    call = {"type": "assistant", "uuid": "a1", "message": {"type": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}}  # fmt: skip
    result = {"type": "user", "uuid": "r1", "message": {"type": "user",
              "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}  # fmt: skip
    entries = [entry(1), call]
    followed.catch_up(entries)
    assert followed.count == 2 and [op[0] for op in followed.since(0)] == ["append", "append", "chart"]
    followed.catch_up([*entries, result])
    assert [op[0] for op in followed.since(2)] == ["card"] and followed.since(3) == []
    assert followed.generation == 0
    followed.catch_up([entry(5), entry(6), entry(7)])  # not the session it was: start over
    assert followed.generation == 1 and followed.count == 3
    assert followed.summarizer.summary().title == "hello 5"
