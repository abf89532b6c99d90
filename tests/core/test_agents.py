"""Subagents: the Task tool, narrowing, hooks, limits, and agents built in code delegated to as tools."""

from __future__ import annotations

from typing import Any

import pytest

from openagent import AgentOptions, AssistantMessage, HookMatcher, ResultMessage, UserMessage, query, tool
from openagent._agents import MAX_DEPTH, AgentDefinition, as_tool, task_tool
from openagent._tools import ToolContext
from openagent.testing import ScriptedModel, tool_call

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


async def collect(prompt: str, options: AgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=options)]


def top_result(messages: list[Any]) -> Any:
    """The first tool result the top-level agent sent back."""
    return next(
        m
        for m in messages
        if isinstance(m, UserMessage) and m.parent_tool_use_id is None and isinstance(m.content, list)
    ).content[0]


def task_call(agent: str, prompt: str, call_id: str = "task_1") -> Any:
    return tool_call(
        "Task", {"description": "delegate", "prompt": prompt, "subagent_type": agent}, id=call_id
    )


async def test_task_runs_the_child_and_returns_its_final_text() -> None:
    child = ScriptedModel([[tool_call("add", {"a": 2, "b": 3}, id="c1")], "the sum is 5"])
    parent = ScriptedModel([[task_call("math", "add 2 and 3")], "my helper says 5"])
    agents = {"math": AgentDefinition("Does arithmetic", "You add numbers.", model=child)}
    options = AgentOptions(model=parent, tools=[add], agents=agents, persist_session=False)

    messages = await collect("what is 2+3?", options)

    nested = [m for m in messages if getattr(m, "parent_tool_use_id", None) == "task_1"]
    assert [type(m).__name__ for m in nested] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
    ]
    assert nested[0].content == "add 2 and 3"
    assert nested[2].content[0].content == "5"
    # the child's messages come before the Task result, which carries the child's final text
    task_result = next(
        m
        for m in messages
        if isinstance(m, UserMessage) and m.parent_tool_use_id is None and isinstance(m.content, list)
    )
    assert messages.index(task_result) > messages.index(nested[-1])
    assert task_result.content[0].content == "the sum is 5"
    assert not task_result.content[0].is_error
    assert messages[-1].result == "my helper says 5"
    # the child has its own history and its own system prompt
    assert child.requests[0].system == "You add numbers."
    assert [m.content for m in child.requests[0].messages] == ["add 2 and 3"]
    assert "Task" in {t.name for t in parent.requests[0].tools}


async def test_tools_are_narrowed_by_the_definition() -> None:
    child = ScriptedModel(["done"])
    parent = ScriptedModel([[task_call("shouter", "shout hi")], "ok"])
    agents = {"shouter": AgentDefinition("Shouts", "You shout.", tools=["shout"], model=child)}
    await collect("go", AgentOptions(model=parent, tools=[add, shout], agents=agents, persist_session=False))
    assert [t.name for t in child.requests[0].tools] == ["shout"]


async def test_inherit_uses_the_parents_model_and_disallowed_tools_are_removed() -> None:
    shared = ScriptedModel([[task_call("helper", "help")], "child answer", "parent answer"])
    agents = {
        "helper": {"description": "Helps", "prompt": "Help.", "model": "inherit", "disallowedTools": ["add"]}
    }
    messages = await collect(
        "go", AgentOptions(model=shared, tools=[add, shout], agents=agents, persist_session=False)
    )
    assert {t.name for t in shared.requests[1].tools} == {"shout", "Task"}
    assert messages[-1].result == "parent answer"


async def test_unknown_subagent_type_is_an_error_listing_the_known_ones() -> None:
    parent = ScriptedModel([[task_call("nobody", "x")], "sorry"])
    agents = {"a": AgentDefinition("A", "a"), "b": AgentDefinition("B", "b")}
    messages = await collect("go", AgentOptions(model=parent, agents=agents, persist_session=False))
    result = top_result(messages)
    assert result.is_error
    assert "unknown subagent_type 'nobody'" in result.content
    assert "available agents: a, b" in result.content


async def test_child_turn_limit_ends_it_with_an_error_result() -> None:
    child = ScriptedModel([[tool_call("add", {"a": 1, "b": 1})], [tool_call("add", {"a": 1, "b": 1})]])
    parent = ScriptedModel([[task_call("loop", "loop forever")], "gave up"])
    agents = {"loop": AgentDefinition("Loops", "Loop.", model=child, max_turns=1)}
    messages = await collect(
        "go", AgentOptions(model=parent, tools=[add], agents=agents, persist_session=False)
    )
    result = top_result(messages)
    assert result.is_error
    assert "error_max_turns" in result.content
    assert len(child.requests) == 1


async def test_subagent_hooks_fire_and_child_inherits_tool_hooks() -> None:
    seen: list[tuple[str, Any]] = []

    async def record(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((data["hook_event_name"], data.get("agent_type") or data.get("tool_name")))
        return {}

    hooks = {
        event: [HookMatcher(hooks=[record])] for event in ("SubagentStart", "SubagentStop", "PreToolUse")
    }
    child = ScriptedModel([[tool_call("add", {"a": 1, "b": 2})], "3"])
    parent = ScriptedModel([[task_call("math", "1+2")], "3"])
    agents = {"math": AgentDefinition("Math", "Math.", model=child)}
    await collect(
        "go", AgentOptions(model=parent, tools=[add], agents=agents, hooks=hooks, persist_session=False)
    )
    assert seen == [
        ("PreToolUse", "Task"),
        ("SubagentStart", "math"),
        ("PreToolUse", "add"),
        ("SubagentStop", "math"),
    ]


async def test_child_inherits_permissions() -> None:
    guarded = tool(requires_permission=True)(lambda: "ran")
    guarded.name = "guarded"
    child = ScriptedModel([[tool_call("guarded", {})], "could not"])
    parent = ScriptedModel([[task_call("c", "try it")], "ok"])
    agents = {"c": AgentDefinition("C", "C.", model=child)}
    messages = await collect(
        "go",
        AgentOptions(
            model=parent, tools=[guarded], agents=agents, disallowed_tools=["guarded"], persist_session=False
        ),
    )
    child_result = next(
        m
        for m in messages
        if isinstance(m, UserMessage) and m.parent_tool_use_id == "task_1" and isinstance(m.content, list)
    ).content[0]
    assert child_result.is_error
    assert "denied" in child_result.content


async def test_nesting_deeper_than_the_limit_is_refused() -> None:
    definition = AgentDefinition("Nests", "Nest.")
    task = task_tool({"nest": definition})
    context = ToolContext(
        tool_use_id="t", session_id="s", cwd=".", options=AgentOptions(model="test:echo"), depth=MAX_DEPTH
    )
    result = await task.call("t", {"description": "d", "prompt": "p", "subagent_type": "nest"}, context)
    assert result.is_error
    assert f"nest {MAX_DEPTH} deep" in result.content


async def test_nested_subagents_stamp_their_own_parent_ids() -> None:
    inner = ScriptedModel(["inner done"])
    outer = ScriptedModel([[task_call("inner", "go deeper", "task_2")], "outer done"])
    parent = ScriptedModel([[task_call("outer", "go")], "all done"])
    agents = {
        "outer": AgentDefinition("Outer", "O.", model=outer),
        "inner": AgentDefinition("Inner", "I.", model=inner),
    }
    messages = await collect("go", AgentOptions(model=parent, agents=agents, persist_session=False))
    inner_answer = next(
        m for m in messages if isinstance(m, AssistantMessage) and m.parent_tool_use_id == "task_2"
    )
    assert inner_answer.content[0].text == "inner done"
    assert messages[-1].result == "all done"


async def test_as_tool_delegates_to_an_agent_built_in_code() -> None:
    researcher_model = ScriptedModel([[tool_call("shout", {"text": "found"})], "FOUND it"])
    researcher = AgentOptions(model=researcher_model, tools=[shout], system_prompt="You research.")
    parent = ScriptedModel([[tool_call("research", {"prompt": "look"}, id="r1")], "done"])
    options = AgentOptions(
        model=parent, tools=[as_tool(researcher, "research", "Researches things")], persist_session=False
    )
    messages = await collect("go", options)
    assert parent.requests[0].tools[0].description == "Researches things"
    nested = [m for m in messages if getattr(m, "parent_tool_use_id", None) == "r1"]
    assert len(nested) == 4
    assert researcher_model.requests[0].system == "You research."
    assert top_result(messages).content == "FOUND it"
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"


async def test_parent_persists_child_messages(tmp_path: Any) -> None:
    child = ScriptedModel(["child says hi"])
    parent = ScriptedModel([[task_call("c", "hi")], "bye"])
    agents = {"c": AgentDefinition("C", "C.", model=child)}
    messages = await collect("go", AgentOptions(model=parent, agents=agents, cwd=tmp_path))
    session_id = messages[-1].session_id
    resumed = ScriptedModel(["again"])
    await collect("more", AgentOptions(model=resumed, agents=agents, cwd=tmp_path, resume=session_id))
    texts = [getattr(m, "content", None) for m in resumed.requests[0].messages]
    assert "go" in texts and "more" in texts


def test_a_definition_without_a_prompt_is_rejected() -> None:
    from openagent._errors import ToolError

    with pytest.raises(ToolError, match="needs a description and a prompt"):
        task_tool({"bad": {"description": "no prompt"}})


async def test_subagent_start_hooks_can_add_context_or_block() -> None:
    async def add_context(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"additionalContext": "Use metric units."}

    async def block(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"decision": "block", "reason": "no subagents today"}

    child = ScriptedModel(["ok"])
    agents = {"c": AgentDefinition("C", "C.", model=child)}
    hooks = {"SubagentStart": [HookMatcher(hooks=[add_context])]}
    parent = ScriptedModel([[task_call("c", "measure it")], "done"])
    await collect("go", AgentOptions(model=parent, agents=agents, hooks=hooks, persist_session=False))
    assert child.requests[0].messages[0].content == "measure it\n\nUse metric units."

    blocked = ScriptedModel([[task_call("c", "measure it")], "done"])
    hooks = {"SubagentStart": [HookMatcher(hooks=[block])]}
    messages = await collect(
        "go", AgentOptions(model=blocked, agents=agents, hooks=hooks, persist_session=False)
    )
    result = top_result(messages)
    assert result.is_error
    assert "no subagents today" in result.content
    assert len(child.requests) == 1  # the blocked one never ran


async def test_a_context_carrying_the_parents_tools_is_inherited_without_reopening_toolsets() -> None:
    from dataclasses import dataclass, field

    @dataclass
    class ContextWithTools(ToolContext):
        tools: dict[str, Any] = field(default_factory=dict)

    child = ScriptedModel([[tool_call("add", {"a": 2, "b": 2})], "4"])
    options = AgentOptions(model="test:echo", mcp_servers={"srv": {"command": "never-started"}})
    context = ContextWithTools(tool_use_id="t", session_id="s", cwd=".", options=options, tools={"add": add})
    task = task_tool({"math": AgentDefinition("Math", "Math.", model=child)})
    result = await task.call("t", {"description": "d", "prompt": "2+2", "subagent_type": "math"}, context)
    assert result.content == "4"
    assert [t.name for t in child.requests[0].tools] == ["add"]
