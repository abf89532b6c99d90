"""Programs written against the Claude Agent SDK, run through openagent.compat.claude on the scripted server."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ToolCall, Turn

from .programs import (
    custom_tools,
    errors,
    hooks,
    interrupt,
    max_turns,
    multi_turn,
    partial_messages,
    permissions,
    quick_start,
    resume,
    subagents,
)

pytestmark = pytest.mark.anyio

PROGRAMS = Path(__file__).with_name("programs")


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def contents(body: dict[str, Any]) -> list[Any]:
    return [m.get("content") for m in body["messages"]]


async def test_quick_start(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    requests = script([Turn(text=["2 + 2 ", "= 4."])])
    await quick_start.main()
    out = capsys.readouterr().out
    assert out == "Claude: 2 + 2 = 4.\nDone: success in 1 turn(s)\n"
    assert requests[0]["messages"][0] == {"role": "system", "content": "You are a concise assistant."}
    assert requests[0]["messages"][-1] == {"role": "user", "content": "What is 2 + 2?"}


async def test_custom_tools(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    requests = script(
        [
            Turn(tool_calls=[ToolCall("mcp__calc__add", {"a": 2, "b": 3}, id="c1", fragments=3)]),
            Turn(tool_calls=[ToolCall("mcp__calc__multiply", {"a": 5, "b": 4}, id="c2")]),
            Turn(text="(2 + 3) * 4 = 20"),
        ]
    )
    await custom_tools.main()
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "tool: mcp__calc__add {'a': 2, 'b': 3}",
        "tool: mcp__calc__multiply {'a': 5, 'b': 4}",
        "Claude: (2 + 3) * 4 = 20",
        "result: (2 + 3) * 4 = 20",
    ]
    offered = {t["function"]["name"] for t in requests[0]["tools"]}
    assert {
        "mcp__calc__add",
        "mcp__calc__multiply",
        "Read",
        "Bash",
    } <= offered  # Claude's default: every tool
    assert tool_messages(requests[1]) == ["5"]
    assert tool_messages(requests[2]) == ["5", "20"]


async def test_multi_turn_client_keeps_history(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    requests = script([Turn(text="Nice to meet you, Ada."), Turn(text="Your name is Ada.")])
    await multi_turn.main()
    assert capsys.readouterr().out.splitlines() == [
        "Claude: Nice to meet you, Ada.",
        "turn done: success",
        "Claude: Your name is Ada.",
        "turn done: success",
    ]
    assert contents(requests[1])[1:] == ["My name is Ada.", "Nice to meet you, Ada.", "What is my name?"]


async def test_hooks_block_and_log(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    hooks.executed.clear()
    requests = script(
        [
            Turn(tool_calls=[ToolCall("mcp__shell__run", {"command": "rm -rf build"}, id="c1")]),
            Turn(tool_calls=[ToolCall("mcp__shell__run", {"command": "ls build"}, id="c2")]),
            Turn(text="I listed it instead."),
        ]
    )
    await hooks.main()
    assert hooks.executed == ["ls build"]
    assert tool_messages(requests[1]) == ["Error: Dangerous command blocked: rm -rf build"]
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "used mcp__shell__run: [{'type': 'text', 'text': 'ran ls build'}]",
        "result: I listed it instead.",
    ]


async def test_permission_callback(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    permissions.asked.clear()
    requests = script(
        [
            Turn(
                tool_calls=[
                    ToolCall("mcp__files__read", {"path": "/etc/hosts"}, id="r"),
                    ToolCall("mcp__files__write", {"path": "copy", "text": "x"}, id="w"),
                ]
            ),
            Turn(text="I could read it but not save it."),
        ]
    )
    await permissions.main()
    assert sorted(permissions.asked) == ["mcp__files__read", "mcp__files__write"]  # asked concurrently
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "tool result: [{'type': 'text', 'text': 'contents of /sandbox/etc/hosts'}] error=None",
        "tool result: 'Writing is not allowed in this session' error=True",
        "result: I could read it but not save it.",
    ]
    assert len(requests) == 2


async def test_partial_messages_stream_text_deltas(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    script([Turn(text=["Water ", "finds ", "its way"])])
    await partial_messages.main()
    assert capsys.readouterr().out == "Water |finds |its way|\ncomplete: Water finds its way\n"


async def test_resume_and_fork(
    script: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # sessions are kept per working directory, as Claude Code keeps them
    requests = script([Turn(text="Noted: 42."), Turn(text="You gave me 42."), Turn(text="84.")])
    first, resumed, forked = await resume.main()
    assert resumed == first
    assert forked != first
    assert contents(requests[1]) == ["Remember the number 42.", "Noted: 42.", "What number did I give you?"]
    assert contents(requests[2])[:4] == contents(requests[1]) + [
        "You gave me 42."
    ]  # the fork starts from all
    assert capsys.readouterr().out.count("in session True") == 3


# Under trio, an interrupted stream leaves httpcore's PoolByteStream.__aiter__ generator to the garbage
# collector (the openai plugin closes httpx's byte iterator; httpx does not close the one it wraps), and trio
# reports it as a ResourceWarning. That belongs to the openai plugin / httpx; this test is about the compat API.
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in.*PoolByteStream:pytest.PytestUnraisableExceptionWarning"
)
async def test_interrupt_then_continue(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    script([Turn(text=[f"{i} " for i in range(1, 400)], delay=0.02), Turn(text="hi")])
    interrupted, then = await interrupt.main()
    assert interrupted.subtype == "error_during_execution"
    assert interrupted.stop_reason == "interrupted"
    assert then.subtype == "success" and then.result == "hi"
    assert "then: hi" in capsys.readouterr().out


async def test_max_turns(script: Any) -> None:
    call = ToolCall("mcp__web__search", {"q": "it"})
    script([Turn(tool_calls=[call]), Turn(tool_calls=[call]), Turn(tool_calls=[call])])
    result = await max_turns.main()
    assert result is not None
    assert result.subtype == "error_max_turns"
    assert result.is_error
    assert result.num_turns == 2


async def test_subagents(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    task = {"description": "review", "prompt": "Review utils.py", "subagent_type": "code-reviewer"}
    requests = script(
        [
            Turn(tool_calls=[ToolCall("Task", task, id="t1")]),
            Turn(text="utils.py looks fine."),  # the subagent, with its own history
            Turn(text="The reviewer found no bugs."),
        ],
        mode="queue",
    )
    await subagents.main()
    assert capsys.readouterr().out.splitlines() == [
        "subagent: utils.py looks fine.",
        "main: The reviewer found no bugs.",
    ]
    assert requests[1]["messages"][0] == {"role": "system", "content": "You are a careful code reviewer."}
    assert tool_messages(requests[2]) == ["utils.py looks fine."]


async def test_errors_map_onto_the_sdk_classes(script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    script([Turn(fault="400", message="bad request")])
    assert await errors.main() == "process failed: ResultError (caused by BadRequestError)"
    monkeypatch.delenv("OPENAGENT_MODEL")
    assert await errors.main() == "not configured"


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("[a-z]*.py")), ids=lambda p: p.stem)
def test_only_the_imports_differ_from_a_claude_agent_sdk_program(path: Path) -> None:
    """Every name a program imports from the compat module exists in claude_agent_sdk itself."""
    claude = importlib.import_module("claude_agent_sdk")
    tree = ast.parse(path.read_text())
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "openagent.compat.claude"
        for alias in node.names
    ]
    assert imported
    assert [name for name in imported if not hasattr(claude, name)] == []
