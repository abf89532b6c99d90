"""A hostile model's Bash call through `query()`, and the sentinel it tries to create outside the project."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from openagent import AgentOptions, ToolResultBlock, UserMessage, query
from openagent.testing import ScriptedModel, tool_call
from openagent_tools import bash


@dataclass
class Arena:
    """A git project to run in, and a sentinel path outside it that no allowed command may create."""

    project: Path
    sentinel: Path

    def payload(self, template: str) -> str:
        return template.format(S=self.sentinel)

    def pwned(self) -> bool:
        return self.sentinel.exists()


def make_arena(tmp_path: Path, outside: Path | None = None) -> Arena:
    """A project under ``tmp_path``; the sentinel in ``outside`` (default: beside the project)."""
    project, outside = tmp_path / "project", outside or tmp_path / "outside"
    project.mkdir()
    outside.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "README.md").write_text("# demo\n")
    return Arena(project, outside / "pwned")


async def run_bash(command: str, cwd: Path, **options: Any) -> ToolResultBlock:
    """One scripted turn calling Bash with ``command``; the tool result the run produced."""
    model = ScriptedModel([[tool_call("Bash", {"command": command})], "done"])
    opts = AgentOptions(model=model, tools=[bash], cwd=cwd, persist_session=False, **options)
    with anyio.fail_after(60):
        messages = [m async for m in query(prompt="go", options=opts)]
    blocks = [
        b
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert len(blocks) == 1, messages
    return blocks[0]


def text(result: ToolResultBlock) -> str:
    assert isinstance(result.content, str)
    return result.content
