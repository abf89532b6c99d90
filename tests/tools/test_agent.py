"""TodoWrite, AskUserQuestion, registration by name, and full agent runs over a temp project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tool_calls import call

from openagent import (
    AgentOptions,
    ResultMessage,
    ToolContext,
    ToolError,
    ToolResultBlock,
    UserMessage,
    query,
)
from openagent.plugins import load_plugins
from openagent.testing import ScriptedModel, tool_call
from openagent_tools import all_tools, ask_user_question, todo_write

pytestmark = pytest.mark.anyio


QUESTION = {
    "question": "Which database?",
    "header": "Database",
    "options": [
        {"label": "SQLite", "description": "a file"},
        {"label": "Postgres", "description": "a server"},
    ],
    "multiSelect": False,
}


async def test_todo_write_renders_the_list(context: ToolContext) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
    ]
    result = await call(todo_write, context, todos=todos)
    assert result.content == (
        "Todo list updated: 1/3 completed.\n[x] Read the code\n[~] Fix the bug\n[ ] Run the tests"
    )
    assert (await call(todo_write, context, todos=[])).content == "Todo list cleared."
    two = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]
    assert "Only one task should be in_progress" in str((await call(todo_write, context, todos=two)).content)


@pytest.mark.parametrize(
    "todos",
    [
        [{"content": "x", "status": "doing"}],
        [{"content": "", "status": "pending"}],
        [{"status": "pending"}],
        "x",
    ],
    ids=["bad-status", "empty-content", "no-content", "not-a-list"],
)
async def test_todo_write_rejects_bad_items(context: ToolContext, todos: Any) -> None:
    result = await call(todo_write, context, todos=todos)
    assert result.is_error and "Invalid arguments for tool TodoWrite" in str(result.content)


async def test_ask_user_question_calls_the_callback(context: ToolContext) -> None:
    asked: list[Any] = []

    async def callback(questions: list[dict[str, Any]]) -> dict[str, Any]:
        asked.extend(questions)
        return {"Which database?": "SQLite"}

    result = await call(ask_user_question(callback), context, questions=[QUESTION])
    assert asked == [QUESTION]
    assert result.content == "The user answered:\nWhich database? → SQLite"


async def test_ask_user_question_accepts_a_sync_callback_and_lists(context: ToolContext) -> None:
    multi = {**QUESTION, "multiSelect": True}
    tool = ask_user_question(lambda qs: {qs[0]["question"]: ["SQLite", "Postgres"]})
    assert (await call(tool, context, questions=[multi])).content.endswith("→ SQLite, Postgres")  # type: ignore[union-attr]
    unanswered = ask_user_question(lambda qs: {})
    assert str((await call(unanswered, context, questions=[QUESTION])).content).endswith("→ (no answer)")


async def test_ask_user_question_errors(context: ToolContext) -> None:
    result = await call(ask_user_question(), context, questions=[QUESTION])
    assert result.is_error and "ask_user_question(my_callback)" in str(result.content)

    def dismissed(questions: Any) -> Any:
        raise ToolError("the user dismissed the questions")

    result = await call(ask_user_question(dismissed), context, questions=[QUESTION])
    assert result.is_error and result.content == "the user dismissed the questions"
    result = await call(ask_user_question(lambda qs: "SQLite"), context, questions=[QUESTION])
    assert result.is_error and "not a dict of answers" in str(result.content)
    one_option = {**QUESTION, "options": [{"label": "only"}]}
    result = await call(ask_user_question(lambda qs: {}), context, questions=[one_option])
    assert result.is_error and "options" in str(result.content)


def test_every_tool_has_a_schema_description_and_flags() -> None:
    tools = {t.name: t for t in all_tools()}
    names = "Read Write Edit Glob Grep Bash WebFetch WebSearch TodoWrite AskUserQuestion"
    assert set(tools) == set(names.split())
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"]
        assert len(tool.description) > 80 and "context" not in tool.input_schema["properties"]
    assert {n for n, t in tools.items() if t.is_read_only} >= {"Read", "Glob", "Grep"}
    assert {n for n, t in tools.items() if t.requires_permission} == {"Write", "Edit", "Bash", "WebFetch",
                                                                       "WebSearch"}  # fmt: skip


def test_the_entry_point_registers_the_tools_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "tools")
    registry = load_plugins()
    assert registry.plugins["tools"].error is None
    assert set(registry.plugins["tools"].tools) >= {"Read", "Grep", "Bash", "AskUserQuestion"}


async def _run(options: AgentOptions, prompt: str) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=options)]


def _results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list) for b in m.content
    ]


async def test_an_agent_reads_edits_and_greps_a_project(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "tools")
    model = ScriptedModel(
        [
            [tool_call("Grep", {"pattern": "a \\+ b", "output_mode": "content"})],
            [tool_call("Read", {"file_path": "src/pkg/core.py", "limit": 2})],
            [
                tool_call(
                    "Edit", {"file_path": "src/pkg/core.py", "old_string": "a + b", "new_string": "a + b + 0"}
                )
            ],
            [
                tool_call("Glob", {"pattern": "**/*.py"}),
                tool_call("Grep", {"pattern": "b \\+ 0", "-n": True}),
            ],
            "Done: add() now returns a + b + 0.",
        ]
    )
    options = AgentOptions(
        model=model, tools=["Read", "Edit", "Glob", "Grep"], allowed_tools=["Edit(src/**)"], cwd=project,
        persist_session=False,
    )  # fmt: skip
    messages = await _run(options, "Make add() add zero.")
    results = _results(messages)
    assert [r.is_error for r in results] == [None] * 5
    assert [r.content for r in results] == [
        "src/pkg/core.py:2:    return a + b",
        "     1\tdef add(a, b):\n     2\t    return a + b\n"
        "[more lines follow: call Read with offset=3 to continue]",
        "Edited src/pkg/core.py: replaced 1 occurrence",
        "src/pkg/core.py\nsrc/pkg/__init__.py",
        "src/pkg/core.py",
    ]
    assert "return a + b + 0" in (project / "src/pkg/core.py").read_text()
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "success" and final.num_turns == 5
    assert final.result == "Done: add() now returns a + b + 0."
    assert [t.name for t in model.requests[0].tools] == ["Read", "Edit", "Glob", "Grep"]


async def test_an_agent_is_denied_edits_outside_its_rules(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "tools")
    model = ScriptedModel(
        [
            [tool_call("Edit", {"file_path": "README.md", "old_string": "Demo", "new_string": "Hacked"})],
            [tool_call("Write", {"file_path": "../escape.txt", "content": "x"})],
            "ok",
        ]
    )
    options = AgentOptions(
        model=model, tools=["Edit", "Write"], allowed_tools=["Edit(src/**)"], cwd=project,
        persist_session=False,
    )  # fmt: skip
    results = _results(await _run(options, "go"))
    assert results[0].is_error and "Edit needs permission" in str(results[0].content)
    assert results[1].is_error and "Write needs permission" in str(results[1].content)
    assert (project / "README.md").read_text().startswith("# Demo")
    options.permission_mode = "acceptEdits"
    model2 = ScriptedModel([[tool_call("Write", {"file_path": "../escape.txt", "content": "x"})], "ok"])
    options.model = model2
    (result,) = _results(await _run(options, "go"))
    assert result.is_error and "outside the directories this agent may use" in str(result.content)
    assert not (project.parent / "escape.txt").exists()


def test_the_registered_names_are_the_tools_made_on_first_use() -> None:
    import subprocess
    import sys

    code = (
        "import sys, openagent_tools\n"
        "from openagent.plugins import load_plugins\n"
        "found = load_plugins(extra=[('tools', openagent_tools)])\n"
        "print(sorted(found.plugins['tools'].tools) == sorted(openagent_tools.REGISTERED))\n"
        "print(any(m.startswith('openagent_tools._') for m in sys.modules))\n"
        "print(found.tools['Read'].name, found.tools['MemoryWrite'].name)\n"
        "from openagent_tools._registered import TOOLS\n"
        "print(sorted(TOOLS) == sorted(openagent_tools.REGISTERED))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["True", "False", "Read MemoryWrite", "True"]
