import json

import anyio
import pytest

from openagent import (
    AgentOptions,
    delete_session,
    fork_session,
    get_session_messages,
    list_sessions,
    query,
    run,
)
from openagent._errors import SessionError
from openagent._sessions import JSONLSessionStore
from openagent._types import AssistantMessage, ThinkingBlock, UserMessage
from openagent.testing import ScriptedModel, thinking, tool_call

pytestmark = pytest.mark.anyio
KEY = {"project_key": "p", "session_id": "s"}


async def test_appends_are_idempotent_by_uuid_and_load_deep_equal(tmp_path):
    store = JSONLSessionStore(tmp_path)
    entries = [
        {"type": "user", "uuid": "1", "timestamp": "t", "x": {"nested": [1, "é"]}},
        {"type": "title", "v": 1},
    ]
    await store.append(KEY, entries)
    await store.append(KEY, entries[:1])
    await JSONLSessionStore(tmp_path).append(KEY, entries[:1])  # another store instance knows it too
    assert await store.load(KEY) == entries
    assert await store.load({"project_key": "p", "session_id": "never"}) is None


async def test_a_torn_last_line_is_skipped_and_reported(tmp_path, caplog):
    store = JSONLSessionStore(tmp_path)
    await store.append(KEY, [{"type": "user", "uuid": "1"}, {"type": "assistant", "uuid": "2"}])
    path = tmp_path / "p" / "s.jsonl"
    path.write_bytes(path.read_bytes() + b'{"type": "assistant", "uu')
    fresh = JSONLSessionStore(tmp_path)
    assert [e["uuid"] for e in await fresh.load(KEY)] == ["1", "2"]
    assert "torn last line" in fresh.warnings[0]
    assert "torn last line" in caplog.text


async def test_fsync_durability_writes_the_same_entries(tmp_path):
    store = JSONLSessionStore(tmp_path, durability="fsync")
    await store.append(KEY, [{"type": "user", "uuid": "1"}])
    assert await store.load(KEY) == [{"type": "user", "uuid": "1"}]


async def test_list_delete_and_subkeys(tmp_path):
    store = JSONLSessionStore(tmp_path)
    await store.append(KEY, [{"type": "user", "uuid": "1"}])
    await store.append({**KEY, "subpath": "subagents/agent-1"}, [{"type": "user", "uuid": "2"}])
    assert [s["session_id"] for s in await store.list_sessions("p")] == ["s"]
    assert await store.list_subkeys(KEY) == ["subagents/agent-1"]
    await store.delete(KEY)
    assert await store.load(KEY) is None
    assert await store.list_subkeys(KEY) == []


async def test_resume_rebuilds_the_exact_history_the_model_saw(tmp_path):
    from openagent import tool

    @tool
    def echo(s: str) -> str:
        """Echo."""
        return s

    first = ScriptedModel([[thinking("plan", "sig-1"), tool_call("echo", {"s": "hi"})], "said hi"])
    one = await run("say hi", AgentOptions(model=first, tools=[echo], cwd=tmp_path))
    second = ScriptedModel(["again"])
    two = await run(
        "once more", AgentOptions(model=second, tools=[echo], cwd=tmp_path, resume=one.session_id)
    )
    assert two.session_id == one.session_id
    sent = second.requests[0].messages
    # what an uninterrupted run would have sent: the first run's last request, its answer, the new prompt
    assert sent[:3] == first.requests[1].messages
    assert sent[3].content[0].text == "said hi" and sent[4].content == "once more"
    assert sent[1].content[0] == ThinkingBlock(thinking="plan", signature="sig-1")


async def test_fork_continue_list_and_delete(tmp_path):
    one = await run("first", AgentOptions(model=ScriptedModel(["a"]), cwd=tmp_path))
    await anyio.sleep(0.05)  # "most recent" is by file mtime, which the kernel updates in ticks of a few ms
    forked = await run(
        "fork it",
        AgentOptions(model=ScriptedModel(["b"]), cwd=tmp_path, resume=one.session_id, fork_session=True),
    )
    assert forked.session_id != one.session_id
    original = await get_session_messages(one.session_id, cwd=tmp_path)
    copy = await get_session_messages(forked.session_id, cwd=tmp_path)
    assert len(copy) > len(original)

    model = ScriptedModel(["c"])
    continued = await run("continue", AgentOptions(model=model, cwd=tmp_path, continue_conversation=True))
    assert continued.session_id == forked.session_id  # the most recent one
    assert [m.content for m in model.requests[0].messages if isinstance(m, UserMessage)] == [
        "first",
        "fork it",
        "continue",
    ]

    helper_copy = await fork_session(one.session_id, cwd=tmp_path)
    assert {s["session_id"] for s in await list_sessions(cwd=tmp_path)} == {
        one.session_id,
        forked.session_id,
        helper_copy,
    }
    await delete_session(one.session_id, cwd=tmp_path)
    with pytest.raises(SessionError, match="no session"):
        await get_session_messages(one.session_id, cwd=tmp_path)


async def test_resuming_an_unknown_session_is_a_session_error(tmp_path):
    with pytest.raises(SessionError, match="no session 'missing'"):
        await run("x", AgentOptions(model=ScriptedModel(["a"]), cwd=tmp_path, resume="missing"))


async def test_every_yielded_message_is_persisted_before_it_is_yielded(tmp_path):
    from openagent import query

    session_id = None
    count = 0
    async for message in query(prompt="x", options=AgentOptions(model=ScriptedModel(["hi"]), cwd=tmp_path)):
        session_id = session_id or message.data["session_id"]
        assert message in await get_session_messages(session_id, cwd=tmp_path)
        count += 1
    assert count == 3  # init, the answer, the result


async def test_a_torn_session_still_resumes(tmp_path):
    one = await run("first", AgentOptions(model=ScriptedModel(["a"]), cwd=tmp_path))
    path = next(tmp_path.parent.rglob(f"{one.session_id}.jsonl"), None) or next(
        p for p in (tmp_path.parent).rglob("*.jsonl") if one.session_id in p.name
    )
    path.write_bytes(path.read_bytes() + b'{"type": "assis')
    model = ScriptedModel(["b"])
    await run("second", AgentOptions(model=model, cwd=tmp_path, resume=one.session_id))
    assert [json.loads(m.model_dump_json())["type"] for m in model.requests[0].messages] == [
        "user",
        "assistant",
        "user",
    ]


def test_persist_session_false_writes_nothing(tmp_path):
    from openagent import run_sync

    run_sync(
        "x",
        AgentOptions(
            model=ScriptedModel(["a"]),
            cwd=tmp_path,
            persist_session=False,
            session_store=JSONLSessionStore(tmp_path / "s"),
        ),
    )
    assert not (tmp_path / "s").exists()


# --- what the Claude Agent SDK's session functions need ------------------------------------------------------


async def test_titles_tags_info_and_a_fork_cut_at_a_message(tmp_path):
    from openagent._sessions import MemorySessionStore
    from openagent._transcripts import session_info, set_session_metadata

    store = MemorySessionStore()
    model = ScriptedModel(["first answer", "second answer", "after the cut"])
    first = [
        m
        async for m in query(
            prompt="one", options=AgentOptions(model=model, session_store=store, cwd=tmp_path)
        )
    ]
    sid = first[-1].session_id
    answer = next(m for m in first if isinstance(m, AssistantMessage))
    options = AgentOptions(model=model, session_store=store, cwd=tmp_path, resume=sid)
    [m async for m in query(prompt="two", options=options)]
    await set_session_metadata(sid, title="numbers", tag="keep", cwd=tmp_path, store=store)
    info = await session_info(sid, cwd=tmp_path, store=store)
    assert (info.title, info.tag, info.first_prompt, info.summary) == ("numbers", "keep", "one", "numbers")
    assert info.cwd == str(tmp_path) and info.created_at <= info.last_modified
    await set_session_metadata(sid, tag=None, cwd=tmp_path, store=store)
    assert (await session_info(sid, cwd=tmp_path, store=store)).tag is None
    forked = await fork_session(sid, up_to=answer.uuid, title="cut", cwd=tmp_path, store=store)
    kept = [m for m in await get_session_messages(forked, cwd=tmp_path, store=store) if m.type != "system"]
    assert [m.type for m in kept] == ["user", "assistant"] and kept[-1].uuid == answer.uuid
    assert (await session_info(forked, cwd=tmp_path, store=store)).title == "cut"
    with pytest.raises(SessionError, match="no message"):
        await fork_session(sid, up_to="nope", cwd=tmp_path, store=store)


async def test_resume_session_at_starts_from_an_earlier_message_as_a_fork(tmp_path):
    from openagent._sessions import MemorySessionStore

    store = MemorySessionStore()
    model = ScriptedModel(["a1", "a2", "from a1"])
    base = AgentOptions(model=model, session_store=store, cwd=tmp_path)
    first = [m async for m in query(prompt="q1", options=base)]
    sid, a1 = first[-1].session_id, next(m for m in first if isinstance(m, AssistantMessage))
    base = base.replace(resume=sid)
    [m async for m in query(prompt="q2", options=base)]
    base = base.replace(resume_session_at=a1.uuid)
    third = [m async for m in query(prompt="q3", options=base)]
    assert third[-1].session_id != sid  # a cut resume never rewrites the original
    assert [m.content if isinstance(m.content, str) else m.content[0].text for m in model.requests[-1].messages] == [
        "q1", "a1", "q3",
    ]  # fmt: skip


class _Protocolish:
    """A store written against the SDK's protocol: optional methods raise NotImplementedError."""

    def __init__(self):
        self.entries = {}

    async def append(self, key, entries):
        self.entries.setdefault(key["session_id"], []).extend(entries)

    async def load(self, key):
        return self.entries.get(key["session_id"])

    async def list_sessions(self, project_key):
        raise NotImplementedError

    async def delete(self, key):
        raise NotImplementedError


async def test_not_implemented_optional_methods_read_as_absent(tmp_path):

    store = _Protocolish()
    with pytest.raises(SessionError, match="cannot list"):
        await list_sessions(cwd=tmp_path, store=store)
    with pytest.raises(SessionError, match="cannot delete"):
        await delete_session("x", cwd=tmp_path, store=store)
    options = AgentOptions(
        model=ScriptedModel(["hi"]), session_store=store, cwd=tmp_path, continue_conversation=True
    )
    assert [m async for m in query(prompt="x", options=options)][-1].result == "hi"  # nothing to continue


async def test_a_slow_store_is_a_session_error_not_a_hang(tmp_path):
    class Slow(_Protocolish):
        async def load(self, key):
            await anyio.sleep(10)

    options = AgentOptions(
        model=ScriptedModel(["x"]), session_store=Slow(), cwd=tmp_path, resume="s", session_load_timeout=0.05
    )
    with anyio.fail_after(5), pytest.raises(SessionError, match="longer than"):
        [m async for m in query(prompt="x", options=options)]


async def test_entries_record_turn_latency_and_cost_and_each_calls_permission_and_duration(tmp_path):
    """What the messages do not say, the session says beside them: the session viewer reads it."""
    from openagent import PermissionResultAllow, PermissionResultDeny, tool
    from openagent.testing import usage

    @tool(requires_permission=True)
    def write(text: str) -> str:
        """Write."""
        return "ok"

    asked = []

    async def can_use_tool(name, arguments, context):
        entries = await JSONLSessionStore(tmp_path / "s").load({"project_key": project, "session_id": sid})
        asked.append([e["type"] for e in entries][-1])  # the request is on record while the user decides
        return PermissionResultAllow() if arguments["text"] == "yes" else PermissionResultDeny(message="no!")

    from openagent.plugin import project_key_for

    project, sid = project_key_for(tmp_path), "sess"
    model = ScriptedModel(
        [[tool_call("write", {"text": "yes"}), tool_call("write", {"text": "no"}), usage(10, 5)], "done"],
        cost_per_token=0.5,
    )
    options = AgentOptions(
        model=model, tools=[write], can_use_tool=can_use_tool, cwd=tmp_path, session_id=sid,
        session_store=JSONLSessionStore(tmp_path / "s"), parallel_tool_calls=False,
    )  # fmt: skip
    await run("go", options)
    entries = await JSONLSessionStore(tmp_path / "s").load({"project_key": project, "session_id": sid})
    assert asked == ["permission_request", "permission_request"]
    kinds = [e["type"] for e in entries]
    assert kinds == ["system", "user", "assistant", "permission_request", "tool_outcome",
                     "permission_request", "tool_outcome", "user", "assistant", "result"]  # fmt: skip
    first_turn = entries[2]
    assert first_turn["cost_usd"] == 7.5 and isinstance(first_turn["latency_ms"], int)
    assert entries[8]["cost_usd"] is None  # the turn reported no usage: no price
    allowed, denied = entries[4], entries[6]
    assert allowed["permission"] == {"behavior": "allow", "asked": True}
    assert isinstance(allowed["duration_ms"], int) and allowed["tool_name"] == "write"
    assert denied["permission"] == {"behavior": "deny", "asked": True, "message": "no!"}
    assert denied["duration_ms"] is None  # it never ran
    assert entries[3]["reason"] == "openagent needs your permission to use write"
    assert entries[3]["tool_use_id"] == allowed["tool_use_id"]
    # notes are not messages: readers of messages, and resume, never see them
    messages = await get_session_messages(sid, cwd=tmp_path, store=JSONLSessionStore(tmp_path / "s"))
    assert [m.type for m in messages] == ["system", "user", "assistant", "user", "assistant", "result"]
    resumed = await run("again", AgentOptions(
        model=ScriptedModel(["fine"]), cwd=tmp_path, resume=sid, session_store=JSONLSessionStore(tmp_path / "s")
    ))  # fmt: skip
    assert resumed.text == "fine"
