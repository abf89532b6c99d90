"""A hostile model calling the tools of a configured MCP server: they run only when the user allowed them.

An MCP server's tool can do anything its server can (write files, send mail, run commands), and its
annotations (``readOnlyHint``) are the server's word, not the user's: as in Claude Code, a server's tools need
a rule (``mcp__server`` or ``mcp__server__tool``), a mode or ``can_use_tool``; deny rules win; and path rules
cover the path arguments of a server's tools like those of the built-in file tools (test_paths.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack import attack, outside, results

from openagent import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext
from openagent_mcp import create_sdk_mcp_server

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _mcp_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "mcp")


def _server(calls: list[dict[str, Any]]) -> Any:
    def write_note(path: str, text: str) -> str:
        """Write a note to a file."""
        calls.append({"path": path, "text": text})
        Path(path).write_text(text)
        return "written"

    def read_note(path: str) -> str:
        """Read a note."""
        calls.append({"path": path})
        return Path(path).read_text()

    return create_sdk_mcp_server("notes", tools=[write_note, read_note])


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
async def test_a_server_tool_nothing_allows_does_not_run(tmp_path: Path, mode: str) -> None:
    sentinel = outside(tmp_path) / "planted.txt"
    calls: list[dict[str, Any]] = []
    messages = await attack(
        [("mcp__notes__write_note", {"path": str(sentinel), "text": "pwned"})],
        mcp_servers={"notes": _server(calls)},
        permission_mode=mode,
        cwd=str(tmp_path),
    )
    (result,) = results(messages)
    assert result.is_error and ("needs permission" in str(result.content) or "denied" in str(result.content))
    assert calls == [] and not sentinel.exists()


async def test_the_user_is_asked_and_a_refusal_is_final(tmp_path: Path) -> None:
    sentinel = outside(tmp_path) / "planted.txt"
    calls: list[dict[str, Any]] = []
    asked: list[str] = []

    async def refuse(name: str, _input: dict[str, Any], _context: ToolPermissionContext) -> Any:
        asked.append(name)
        return PermissionResultDeny(message="not today")

    messages = await attack(
        [("mcp__notes__write_note", {"path": str(sentinel), "text": "pwned"})],
        mcp_servers={"notes": _server(calls)},
        can_use_tool=refuse,
        cwd=str(tmp_path),
    )
    assert asked == ["mcp__notes__write_note"]
    assert "not today" in str(results(messages)[0].content)
    assert calls == [] and not sentinel.exists()


async def test_a_deny_rule_beats_a_server_wide_allow_and_an_approval(tmp_path: Path) -> None:
    sentinel = outside(tmp_path) / "planted.txt"
    calls: list[dict[str, Any]] = []

    async def approve(*_: Any) -> Any:
        return PermissionResultAllow()

    messages = await attack(
        [("mcp__notes__write_note", {"path": str(sentinel), "text": "pwned"})],
        mcp_servers={"notes": _server(calls)},
        allowed_tools=["mcp__notes"],
        disallowed_tools=["mcp__notes__write_note"],
        can_use_tool=approve,
        cwd=str(tmp_path),
    )
    assert results(messages)[0].is_error
    assert calls == [] and not sentinel.exists()


async def test_control_an_allowed_server_tool_runs(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    calls: list[dict[str, Any]] = []
    messages = await attack(
        [("mcp__notes__write_note", {"path": str(note), "text": "hello"})],
        mcp_servers={"notes": _server(calls)},
        allowed_tools=["mcp__notes__write_note"],
        cwd=str(tmp_path),
    )
    assert not results(messages)[0].is_error
    assert note.read_text() == "hello"
