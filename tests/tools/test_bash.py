"""Bash: output, exit codes, cwd and env, the timeout, the output cap, and killing what it started."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from tool_calls import call

from openagent import AgentOptions, ToolContext
from openagent_tools import bash

pytestmark = pytest.mark.anyio


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


async def _dies(pid: int) -> bool:
    """SIGKILL lands asynchronously: wait (up to 5 s) for the process to be gone."""
    with anyio.move_on_after(5):
        while _alive(pid):  # noqa: ASYNC110 - polling another process's state
            await anyio.sleep(0.01)
    return not _alive(pid)


async def test_runs_in_cwd_with_env(project: Path) -> None:
    context = ToolContext("c", "s", str(project), AgentOptions(cwd=project, env={"GREETING": "hello"}))
    result = await call(bash, context, command='pwd; echo "$GREETING"; ls README.md')
    assert not result.is_error
    assert result.content == f"{os.path.realpath(project)}\nhello\nREADME.md"  # noqa: ASYNC240


async def test_stderr_and_exit_code(context: ToolContext) -> None:
    result = await call(bash, context, command="echo out; echo err >&2; exit 3")
    assert result.is_error
    assert result.content == "out\nerr\nExit code 3"


async def test_no_output(context: ToolContext) -> None:
    result = await call(bash, context, command="true")
    assert result.content == "(no output)" and not result.is_error


async def test_timeout_kills_the_command(context: ToolContext, project: Path) -> None:
    result = await call(bash, context, command="echo $$ > pid; echo started; sleep 30", timeout=1500)
    assert result.is_error
    assert result.content == "started\nCommand timed out after 1.5 s and was killed"
    assert await _dies(int((project / "pid").read_text()))


async def test_output_is_capped(context: ToolContext) -> None:
    result = await call(bash, context, command="head -c 100000 /dev/zero | tr '\\0' x")
    assert isinstance(result.content, str)
    assert result.content.startswith("x" * 30_000)
    assert result.content.endswith("[output truncated: 70000 more bytes not shown]")


async def test_background_jobs_are_killed_when_the_shell_exits(context: ToolContext, project: Path) -> None:
    result = await call(bash, context, command="sleep 60 & echo $! > bg; echo done")
    assert result.content == "done"
    assert await _dies(int((project / "bg").read_text()))


async def test_cancellation_kills_the_process_group(context: ToolContext, project: Path) -> None:
    pid_file = project / "child"
    with anyio.move_on_after(5) as outer:
        async with anyio.create_task_group() as group:
            group.start_soon(bash.call, "c", {"command": "sleep 60 & echo $! > child; wait"}, context)
            while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110
                await anyio.sleep(0.01)
            group.cancel_scope.cancel()
    assert not outer.cancelled_caught
    assert await _dies(int(pid_file.read_text()))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"command": "  "}, "command is empty"), ({"command": "ls", "timeout": 0}, "timeout"), ({}, "command")],
    ids=["blank", "zero-timeout", "missing"],
)
async def test_errors(context: ToolContext, arguments: Any, message: str) -> None:
    result = await call(bash, context, **arguments)
    assert result.is_error and isinstance(result.content, str) and message in result.content


async def test_a_missing_cwd_is_an_error_result(tmp_path: Path) -> None:
    context = ToolContext("c", "s", str(tmp_path / "gone"), AgentOptions())
    result = await call(bash, context, command="ls")
    assert result.is_error and "could not start the shell" in str(result.content)
