"""Context-window management with ScriptedModel and a tiny window."""

import pytest

from openagent import AgentOptions, Client, HookMatcher, run, tool
from openagent._compaction import SUMMARY_MARKER, Compaction, estimate_tokens
from openagent._errors import ContextWindowExceededError
from openagent._models import ModelProfile, ProviderProfile
from openagent._types import AssistantMessage, SystemMessage, ToolResultBlock, ToolUseBlock, UserMessage
from openagent.testing import ScriptedModel, tool_call

pytestmark = pytest.mark.anyio


@tool
def lookup(n: int) -> str:
    """Look something up."""
    return f"result {n}: " + "data " * 40


def pairs_intact(history):
    """Every tool call is answered in the next message, and every result answers the message before it."""
    for index, message in enumerate(history):
        if isinstance(message, AssistantMessage):
            calls = {b.id for b in message.content if isinstance(b, ToolUseBlock)}
            if calls:
                answer = history[index + 1] if index + 1 < len(history) else None
                answered = (
                    {b.tool_use_id for b in answer.content if isinstance(b, ToolResultBlock)}
                    if answer
                    else set()
                )
                if answer is not None and calls != answered:
                    return False
        if isinstance(message, UserMessage) and isinstance(message.content, list):
            results = {b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)}
            before = history[index - 1] if index else None
            asked = (
                {b.id for b in before.content if isinstance(b, ToolUseBlock)}
                if isinstance(before, AssistantMessage)
                else set()
            )
            if results and results != asked:
                return False
    return True


async def test_a_fifty_turn_run_stays_within_a_tiny_window_with_pairs_intact(tmp_path):
    turns = [[tool_call("lookup", {"n": i})] for i in range(49)] + ["all done"]
    model = ScriptedModel(turns)
    summariser = ScriptedModel(["a short summary of earlier work"] * 100)
    compacted = []

    async def on_compact(data, tool_use_id, context):
        compacted.append(data["trigger"])
        return {}

    options = AgentOptions(
        model=model, tools=[lookup], cwd=tmp_path, max_turns=60,
        compaction=Compaction(context_window=2_000, keep_last=4, max_tool_result_chars=100, model=summariser),
        hooks={"PreCompact": [HookMatcher(hooks=[on_compact])]},
    )  # fmt: skip
    result = await run("look up 49 things", options)
    assert result.result.subtype == "success" and result.text == "all done" and result.result.num_turns == 50
    sizes = [estimate_tokens(r.messages) for r in model.requests]
    assert max(sizes) < 2_000  # bounded, although 50 turns of tool output would be far larger
    assert compacted and set(compacted) == {"auto"}
    for request in model.requests:
        assert pairs_intact(request.messages)
    boundaries = [
        m for m in result.messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"
    ]
    assert len(boundaries) == len(compacted)
    assert boundaries[0].data["post_tokens"] < boundaries[0].data["pre_tokens"]
    assert SUMMARY_MARKER in model.requests[-1].messages[0].content

    # resuming rebuilds the compacted history, not the full one
    again = ScriptedModel(["resumed"])
    await run("and now?", AgentOptions(model=again, cwd=tmp_path, resume=result.session_id, compaction=None))
    final = [m for m in result.messages if isinstance(m, AssistantMessage)][-1]
    assert again.requests[0].messages[:-1] == [*model.requests[-1].messages, final]


async def test_trimming_big_tool_results_comes_before_summarising():
    policy = Compaction(context_window=10_000, max_tool_result_chars=10)
    history = [
        UserMessage(content="go"),
        AssistantMessage(content=[ToolUseBlock(id="1", name="lookup", input={})], model="m"),
        UserMessage(content=[ToolResultBlock(tool_use_id="1", content="x" * 500)]),
    ]
    trimmed = policy.trim(history)
    assert trimmed[2].content[0].content.startswith("x" * 10 + "\n[trimmed to save context: 500 chars]")
    assert trimmed[:2] == history[:2]


async def test_a_context_window_error_compacts_once_and_retries():
    model = ScriptedModel(
        [
            "first",
            ContextWindowExceededError("prompt is too long", provider="test", status_code=400),
            "fine now",
        ]
    )
    summariser = ScriptedModel(["summary"])
    async with Client(
        AgentOptions(model=model, compaction=Compaction(model=summariser, keep_last=1))
    ) as client:
        await client.query("one")
        [m async for m in client.receive_response()]
        await client.query("two")
        messages = [m async for m in client.receive_response()]
    assert messages[-1].result == "fine now"
    assert any(isinstance(m, SystemMessage) and m.subtype == "compact_boundary" for m in messages)
    assert model.requests[-1].messages[0].content == SUMMARY_MARKER


async def test_a_second_overflow_is_an_error_not_a_loop():
    overflow = ContextWindowExceededError("prompt is too long", provider="test", status_code=400)
    model = ScriptedModel(["first", overflow, overflow])
    async with Client(
        AgentOptions(model=model, compaction=Compaction(model=ScriptedModel(["s"]), keep_last=1))
    ) as client:
        await client.query("one")
        [m async for m in client.receive_response()]
        await client.query("two")
        with pytest.raises(ContextWindowExceededError):
            [m async for m in client.receive_response()]


async def test_manual_compaction_from_the_client():
    events = []

    async def on_compact(data, tool_use_id, context):
        events.append(data["trigger"])
        return {}

    model = ScriptedModel(["a", "b", "c"])
    options = AgentOptions(
        model=model,
        compaction=Compaction(model=ScriptedModel(["the gist"]), keep_last=2),
        hooks={"PreCompact": [HookMatcher(hooks=[on_compact])]},
    )
    async with Client(options) as client:
        for prompt in ("one", "two"):
            await client.query(prompt)
            [m async for m in client.receive_response()]
        boundary = await client.compact()
        assert events == ["manual"] and boundary.subtype == "compact_boundary"
        assert client.history[1].content[0].text == "the gist"
        await client.query("three")
        [m async for m in client.receive_response()]
    assert [type(m).__name__ for m in model.requests[-1].messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]


async def test_the_window_comes_from_the_provider_profile():
    profile = ProviderProfile(name="small", defaults=ModelProfile(context_window=50))
    assert Compaction().window(ScriptedModel(profile=profile)) == 50
    assert Compaction(context_window=10).window(ScriptedModel(profile=profile)) == 10
    assert Compaction().window(ScriptedModel()) is None


async def test_compaction_off_never_touches_the_history(tmp_path):
    model = ScriptedModel(
        ["x"], profile=ProviderProfile(name="tiny", defaults=ModelProfile(context_window=1))
    )
    await run("hello " * 100, AgentOptions(model=model, compaction=None, cwd=tmp_path))
    assert model.requests[0].messages[0].content.startswith("hello")
