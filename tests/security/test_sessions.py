"""Session ids and session files as an attacker crafts them: ids that are paths, lines that are not entries,
torn writes, and a transcript cut off in the middle of a tool call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from openagent import AgentOptions, ToolResultBlock, UserMessage, query, tool
from openagent.errors import ConfigError, SessionError
from openagent.sessions import (
    UNFINISHED_CALL,
    JSONLSessionStore,
    delete_session,
    fork_session,
    get_session_messages,
    project_key_for,
)
from openagent.testing import ScriptedModel, tool_call

pytestmark = pytest.mark.anyio

HOSTILE_IDS = [
    "../../victim",
    "../victim",
    "/tmp/victim",
    "a/../../victim",
    "..",
    ".",
    "",
    "x\x00y",
    "~",
    ".hidden",
]


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    return tmp_path / "store" / "sessions"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file and folder beside the store that no session operation may create, read or delete."""
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "keep.txt").write_text("keep\n")
    (tmp_path / "victim.jsonl").write_text(
        '{"type": "user", "uuid": "u", "message": {"role": "user", "content": "x"}}\n'
    )
    return tmp_path


def _intact(root: Path) -> bool:
    return (root / "victim" / "keep.txt").exists() and (root / "victim.jsonl").exists()


@pytest.mark.parametrize("session_id", HOSTILE_IDS, ids=repr)
@pytest.mark.parametrize("field", ["session_id", "resume"])
def test_options_refuse_an_id_that_is_not_an_id(field: str, session_id: str) -> None:
    with pytest.raises(ConfigError, match=f"invalid {field}"):
        AgentOptions(**{field: session_id})


@pytest.mark.parametrize("session_id", HOSTILE_IDS, ids=repr)
async def test_the_session_functions_refuse_it_and_touch_nothing(
    victim: Path, store_root: Path, session_id: str
) -> None:
    store = JSONLSessionStore(store_root)
    with anyio.fail_after(10):
        for call in (delete_session, fork_session, get_session_messages):
            with pytest.raises(SessionError, match="invalid session id"):
                await call(session_id, cwd=victim, store=store)
    assert _intact(victim)


@pytest.mark.parametrize("session_id", HOSTILE_IDS[:6], ids=repr)
async def test_the_store_keeps_any_key_inside_its_folder(
    victim: Path, store_root: Path, session_id: str
) -> None:
    """A caller of the store itself (a third-party program) gets no way out either: every part of the key
    becomes a file name of its own."""
    store = JSONLSessionStore(store_root)
    key: Any = {"project_key": "../../..", "session_id": session_id or "x", "subpath": "../../victim"}
    entry = {"type": "user", "uuid": "1", "message": {"role": "user", "content": "hi"}}
    with anyio.fail_after(10):
        await store.append(key, [entry])
        assert await store.load(key) == [entry]
        await store.delete({"project_key": key["project_key"], "session_id": key["session_id"]})
    assert _intact(victim)
    assert _inside(store_root)


@pytest.mark.parametrize(
    "key",
    [
        {"project_key": "p", "session_id": "a\x00b"},
        {"project_key": "", "session_id": "s"},
        {"session_id": "s"},
        "p/s",
    ],
    ids=["nul", "empty-project", "missing-project", "not-a-dict"],
)
async def test_the_stores_refuse_malformed_keys(tmp_path: Path, key: Any) -> None:
    from openagent_sqlite import SQLiteSessionStore

    for store in (JSONLSessionStore(tmp_path / "jsonl"), SQLiteSessionStore(tmp_path / "db.sqlite")):
        with anyio.fail_after(10), pytest.raises(SessionError):
            await store.append(key, [{"type": "user", "uuid": "1"}])
        await store.aclose()


# --- crafted session files ------------------------------------------------------------------------------------


def _session_file(root: Path, cwd: Path, session_id: str, lines: list[str]) -> Path:
    path = root / project_key_for(cwd) / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return path


def _entry(role: str, content: Any, uuid: str, **more: Any) -> str:
    message = {"type": role, "content": content, **more}
    if role == "assistant":
        message.setdefault("model", "scripted")
    return json.dumps({"type": role, "uuid": uuid, "message": message}) + "\n"


GOOD = [
    _entry("user", "first question", "u1"),
    _entry("assistant", [{"type": "text", "text": "first answer"}], "a1"),
]
BAD_LINES = {
    "int": "42\n",
    "null": "null\n",
    "list": "[1, 2]\n",
    "string": '"entry"\n',
    "not-json": "{not json\n",
    "invalid-message": json.dumps({"type": "user", "uuid": "b", "message": {"role": "user", "content": 5}})
    + "\n",
    "bad-block": json.dumps(
        {"type": "assistant", "uuid": "c", "message": {"role": "assistant", "content": [{"type": "nope"}]}}
    )
    + "\n",
    "history-not-list": json.dumps({"type": "system", "uuid": "d", "history": 7}) + "\n",
    "deep": "[" * 100_000 + "]" * 100_000 + "\n",
}


@pytest.mark.parametrize("bad", sorted(BAD_LINES))
async def test_a_crafted_line_is_skipped_and_reported_and_the_session_resumes(
    tmp_path: Path, bad: str, caplog: pytest.LogCaptureFixture
) -> None:
    root, cwd = tmp_path / "sessions", tmp_path / "work"
    cwd.mkdir()
    _session_file(root, cwd, "s1", [GOOD[0], BAD_LINES[bad], GOOD[1]])
    model = ScriptedModel(["second answer"])
    options = AgentOptions(model=model, cwd=cwd, resume="s1", session_store=JSONLSessionStore(root))
    with anyio.fail_after(20):
        messages = [m async for m in query(prompt="second question", options=options)]
    assert messages[-1].subtype == "success"
    sent = [
        m.content if isinstance(m.content, str) else m.content[0].text for m in model.requests[0].messages
    ]
    assert sent == ["first question", "first answer", "second question"]
    assert "skipped" in caplog.text


async def test_an_append_after_a_torn_line_starts_a_new_line_and_loses_nothing(tmp_path: Path) -> None:
    root, cwd = tmp_path / "sessions", tmp_path / "work"
    cwd.mkdir()
    path = _session_file(root, cwd, "s1", [*GOOD, GOOD[0][:25]])  # a crash in the middle of a write
    options = AgentOptions(
        model=ScriptedModel(["again"]), cwd=cwd, resume="s1", session_store=JSONLSessionStore(root)
    )
    with anyio.fail_after(20):
        [m async for m in query(prompt="next", options=options)]
        store = JSONLSessionStore(root)
        entries = await store.load({"project_key": project_key_for(cwd), "session_id": "s1"})
    assert entries is not None and [e.get("type") for e in entries][:2] == ["user", "assistant"]
    assert "next" in json.dumps(entries) and "again" in json.dumps(entries)  # the new entries survived
    assert len(store.warnings) == 1 and "corrupt line" in store.warnings[0]
    assert _lines(path)[2] == GOOD[0][:25]


@pytest.mark.parametrize("provider", ["scripted", "openai-wire", "anthropic-wire"])
async def test_a_tool_call_cut_off_by_a_crash_is_answered_on_resume(tmp_path: Path, provider: str) -> None:
    """The run died while ``deploy`` ran: the transcript ends with its call and no result. Every provider
    rejects a call without a result, so the resumed run answers it with an error first."""
    root, cwd = tmp_path / "sessions", tmp_path / "work"
    cwd.mkdir()
    calls = [
        {"type": "tool_use", "id": "call_9", "name": "deploy", "input": {}},
        {"type": "tool_use", "id": "call_10", "name": "deploy", "input": {"x": 1}},
    ]
    _session_file(
        root,
        cwd,
        "s1",
        [*GOOD, _entry("user", "deploy it", "u2"), _entry("assistant", calls, "a2", stop_reason="tool_use")],
    )
    model = ScriptedModel(["resumed"])
    options = AgentOptions(model=model, cwd=cwd, resume="s1", session_store=JSONLSessionStore(root))
    with anyio.fail_after(20):
        [m async for m in query(prompt="what happened?", options=options)]
    history = model.requests[0].messages
    answer = history[-2]
    assert isinstance(answer, UserMessage) and isinstance(answer.content, list)
    assert [(b.tool_use_id, b.is_error, b.content) for b in answer.content if isinstance(b, ToolResultBlock)] == [
        ("call_9", True, UNFINISHED_CALL), ("call_10", True, UNFINISHED_CALL),
    ]  # fmt: skip
    assert history[-1].content == "what happened?"
    _accepted_by(provider, model.requests[0])


async def test_control_a_clean_resume_and_a_surrogate_in_the_transcript(tmp_path: Path) -> None:
    @tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    root, cwd = tmp_path / "sessions", tmp_path / "work"
    cwd.mkdir()
    first = ScriptedModel([[tool_call("echo", {"text": "hi"})], "lone \ud800 surrogate"])
    options = AgentOptions(model=first, cwd=cwd, tools=[echo], session_store=JSONLSessionStore(root))
    with anyio.fail_after(20):
        started = [m async for m in query(prompt="one \udc80", options=options)]  # a prompt can hold one too
        second = ScriptedModel(["two"])
        resumed = AgentOptions(
            model=second, cwd=cwd, resume=started[-1].session_id, session_store=JSONLSessionStore(root)
        )
        assert [m async for m in query(prompt="again", options=resumed)][-1].subtype == "success"
    roles = [m.type for m in second.requests[0].messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert second.requests[0].messages[3].content[0].text == "lone \ufffd surrogate"  # model text: replaced
    assert second.requests[0].messages[0].content == "one \udc80"  # the caller's own text: kept exactly


def _inside(root: Path) -> bool:
    return all(p.resolve().is_relative_to(root.resolve()) for p in root.parent.rglob("*"))


def _lines(path: Path) -> list[str]:
    return path.read_text().split("\n")


def _accepted_by(provider: str, request: Any) -> None:
    """The body each wire format builds from the resumed request names every call twice: the call, and
    the result right after it."""
    if provider == "openai-wire":
        from openagent_openai._chat import build_body
        from openagent_openai._profiles import PROFILES

        body = build_body(request, "m", PROFILES["openai"])
    elif provider == "anthropic-wire":
        from openagent_anthropic._request import build_body as build_anthropic

        body = build_anthropic(request)[0]
    else:
        return
    text = json.dumps(body)
    assert text.count("call_9") == 2 and text.count("call_10") == 2
