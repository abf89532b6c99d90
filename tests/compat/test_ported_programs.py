"""Programs in the style of the Claude Agent SDK's own examples, run with only their imports changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ToolCall, Turn

from openagent import register_price

from .programs import (
    control_protocol,
    filesystem_agents,
    max_budget,
    mcp_calculator,
    permission_redirect,
    session_stores,
    setting_sources,
    stream_events,
    streaming_input,
    trio_conversation,
    typed_hooks,
)

pytestmark = pytest.mark.anyio


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_hooks_with_typed_inputs(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bash = lambda command, id: ToolCall("Bash", {"command": command}, id=id)  # noqa: E731
    requests = script(
        [
            Turn(tool_calls=[bash("./foo.sh --help", "b1")]),
            Turn(text="That command is not allowed."),
            Turn(tool_calls=[bash("echo 'Hello from hooks example!'", "b2")]),
            Turn(text="It printed a greeting."),
            Turn(text="Hot pink!"),
            Turn(tool_calls=[bash("ls /nonexistent_directory", "b3")]),
            Turn(text="That directory does not exist."),
            Turn(tool_calls=[bash("echo 'CRITICAL ERROR'", "b4")]),
        ],
        mode="queue",
    )
    await typed_hooks.main()
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if not line.startswith("User:")] == [
        "Claude: That command is not allowed.",
        "Result ended: success",
        "Claude: It printed a greeting.",
        "Result ended: success",
        "Claude: Hot pink!",
        "Result ended: success",
        "Claude: That directory does not exist.",
        "Result ended: success",
        "Result ended: success",
    ]
    assert tool_messages(requests[1]) == ["Error: Command contains invalid pattern: foo.sh"]
    assert "Hello from hooks example!" in tool_messages(requests[3])[-1]
    assert "My favorite color is hot pink" in requests[4]["messages"][-1]["content"]
    assert tool_messages(requests[6])[-1].endswith("The command failed. Try a different approach.")
    assert len(requests) == 8  # the critical error stopped the last run before another model turn


async def test_every_stream_event_of_a_message(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    requests = script(
        [Turn(thinking=["Three jokes: ", "a, b, c."], text=["Why did ", "the chicken…"], usage=(12, 7))]
    )
    await stream_events.main()
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "message_start ",
        "content_block_start thinking",
        "content_block_delta thinking_delta",
        "content_block_delta thinking_delta",
        "content_block_stop ",
        "content_block_start text",
        "content_block_delta text_delta",
        "content_block_delta text_delta",
        "content_block_stop ",
        "message_delta ",
        "  stop: end_turn output tokens: 7",
        "message_stop ",
        "assistant: ['ThinkingBlock', 'TextBlock']",
        "result: success",
    ]
    assert requests[0]["reasoning_effort"] == "medium"  # env MAX_THINKING_TOKENS=8000 → thinking → effort


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the program uses asyncio.timeout, as the SDK's does
async def test_streaming_input_drained_with_a_timeout(
    script: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    requests = script([Turn(text="Hi!"), Turn(text="Tokyo."), Turn(text="30.")])
    assert await streaming_input.main() == 3
    assert capsys.readouterr().out.splitlines() == [
        "User: Hello! I have multiple questions.",
        "User: First, what's the capital of Japan?",
        "User: Second, what's 15% of 200?",
        "Claude: Hi!",
        "Result ended",
        "Claude: Tokyo.",
        "Result ended",
        "Claude: 30.",
        "Result ended",
    ]
    assert [m["content"] for m in requests[2]["messages"] if m["role"] == "user"][
        -1
    ] == "Second, what's 15% of 200?"


def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    claude = tmp_path / ".claude"
    (claude / "commands").mkdir(parents=True)
    (claude / "commands" / "commit.md").write_text(
        "---\ndescription: Make a commit\n---\nCommit the staged changes."
    )
    (claude / "agents").mkdir()
    (claude / "agents" / "test-agent.md").write_text(
        "---\nname: test-agent\ndescription: A test agent\n---\nBe terse."
    )
    (tmp_path / "CLAUDE.md").write_text("Answer in one word.")
    (tmp_path / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash"]}})
    )
    return tmp_path


async def test_setting_sources_from_a_claude_folder(
    script: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script([Turn(text="4")] * 4, mode="queue")
    await setting_sources.main(project(tmp_path))
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" [")[0] for line in out] == [
        "default: commit available",
        "disable_all: commit NOT available",
        "user_only: commit NOT available",
        "project_and_user: commit available",
    ]


async def test_filesystem_agents(script: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    requests = script([Turn(text="Hello there, friend.")])
    assert await filesystem_agents.main(project(tmp_path)) == ["test-agent"]
    assert "Answer in one word." in requests[0]["messages"][0]["content"]  # the project's CLAUDE.md
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "Result: subtype=success, cost=$0.0000",
        "Message types received: ['SystemMessage', 'AssistantMessage', 'ResultMessage']",
    ]


async def test_max_budget_with_a_priced_model(
    script: Any,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: Any,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("A project.")
    model = request.node.name.replace("[", "-").rstrip("]")
    register_price(model, input=1000.0, output=1000.0)  # $0.001 a token: the scripted turns cost cents
    script(
        [Turn(text="4", usage=(10, 1)), Turn(text="4", usage=(10, 1)),
         Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})], usage=(10, 1)), Turn(text="never")],
        mode="queue",
    )  # fmt: skip
    await max_budget.main()
    assert capsys.readouterr().out.splitlines() == [
        "Claude: 4",
        "Total cost: $0.0110",
        "Status: success",
        "Claude: 4",
        "Total cost: $0.0110",
        "Status: success",
        "Total cost: $0.0110",
        "Status: error_max_budget_usd",
        "Run ended with an error result: error_max_budget_usd",
    ]


async def test_in_process_mcp_calculator(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    script(
        [
            Turn(tool_calls=[ToolCall("mcp__calc__add", {"a": 15, "b": 27})]), Turn(text="42"),
            Turn(tool_calls=[ToolCall("mcp__calc__divide", {"a": 100, "b": 0})]), Turn(text="Not possible."),
            Turn(tool_calls=[ToolCall("mcp__calc__sqrt", {"n": 144})]), Turn(text="12"),
        ],
        mode="queue",
    )  # fmt: skip
    await mcp_calculator.main()
    out = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("Prompt")]
    assert out == [
        "Using tool: mcp__calc__add {'a': 15, 'b': 27}",
        "Tool Result: 15.0 + 27.0 = 42.0 error=None",
        "Claude: 42",
        "Result ended",
        "Using tool: mcp__calc__divide {'a': 100, 'b': 0}",
        "Tool Result: Error: Division by zero is not allowed error=True",
        "Claude: Not possible.",
        "Result ended",
        "Using tool: mcp__calc__sqrt {'n': 144}",
        "Tool Result: √144.0 = 12.0 error=None",
        "Claude: 12",
        "Result ended",
    ]


async def test_permission_callback_redirects_a_write(
    script: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    permission_redirect.tool_usage_log.clear()
    requests = script(
        [
            Turn(
                tool_calls=[ToolCall("Write", {"file_path": "/home/me/hello.py", "content": "print('hi')\n"})]
            ),
            Turn(tool_calls=[ToolCall("Bash", {"command": "python3 safe_output/hello.py"})]),
            Turn(tool_calls=[ToolCall("Bash", {"command": "rm -rf safe_output"})]),
            Turn(text="Created and ran it; cleaning up was refused."),
        ]
    )
    await permission_redirect.main()
    assert (tmp_path / "safe_output" / "hello.py").read_text() == "print('hi')\n"
    assert [entry["tool"] for entry in permission_redirect.tool_usage_log] == ["Write", "Bash", "Bash"]
    assert "hi" in tool_messages(requests[2])[-1]
    assert tool_messages(requests[3])[-1] == "Error: Dangerous command pattern detected: rm -rf"
    out = capsys.readouterr().out.splitlines()
    assert "  Redirecting write from /home/me/hello.py to ./safe_output/hello.py" in out
    assert out[-1] == "Task completed: success, denials: ['Bash']"


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_multi_turn_under_trio(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    requests = script([Turn(text="42"), Turn(text="84"), Turn(text="12.00")])
    await trio_conversation.multi_turn_conversation()
    out = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("User:")]
    assert out == ["Claude: 42", "Result ended", "Claude: 84", "Result ended", "Claude: 12.00", "Result ended",
                   "Conversation complete!"]  # fmt: skip
    assert [m["role"] for m in requests[2]["messages"]] == ["user", "assistant"] * 2 + ["user"]


async def test_sessions_in_a_store(script: Any, capsys: pytest.CaptureFixture[str]) -> None:
    requests = script([Turn(text="Noted: 42."), Turn(text="Noted: 7."), Turn(text="Only 42.")], mode="queue")
    await session_stores.main()
    assert capsys.readouterr().out.splitlines() == [
        "'Remember the number 42.' -> 'Noted: 42.'",
        "'And the number 7.' -> 'Noted: 7.'",
        "session numbers: first prompt 'Remember the number 42.'",
        "messages: [('user', 'Remember the number 42.'), ('assistant', '...'), ('user', 'And the number 7.'), "
        "('assistant', '...')]",
        "fork: only 42",
        "'Which numbers did I give you?' -> 'Only 42.'",
    ]
    resumed_fork = [m.get("content") for m in requests[2]["messages"]]
    assert resumed_fork == ["Remember the number 42.", "Noted: 42.", "Which numbers did I give you?"]


async def test_control_protocol_and_file_checkpoints(
    script: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    script(
        [
            Turn(tool_calls=[ToolCall("Write", {"file_path": "notes.txt", "content": "todo"})]),
            Turn(text="Done."),
        ]
    )
    await control_protocol.main()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Available commands: 0, output style: default"
    assert out[1:3] == ["result: success", "notes.txt: 'todo'"]
    assert out[3].startswith("context: ") and "'Messages'" in out[3]
    assert out[4] == "rewound: notes.txt is gone"
