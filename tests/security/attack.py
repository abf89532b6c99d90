"""What the attacks in this folder share: a hostile model's run, sentinels, and the results it got back.

A scripted hostile model (`openagent.testing.ScriptedModel`) plays tool calls through the public `query()`;
a sentinel is a file outside the working directory whose content (or absence) says whether an attack
reached it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from openagent import AgentOptions, Message, ToolResultBlock, UserMessage, query
from openagent.testing import ScriptedModel, tool_call

__all__ = ["OPENAGENT", "SECRET", "attack", "outside", "results", "texts", "tree"]

SECRET = "TOP-SECRET-7d1e"
"""Content of every sentinel: it must never show up in what the model gets back."""
OPENAGENT = str(Path(sys.executable).parent / "openagent")
"""The real console script of this environment."""


def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding ``secret.txt`` (the sentinel) and nothing the run may touch."""
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


async def attack(
    calls: list[tuple[str, dict[str, Any] | str]], seconds: float = 20, **options: Any
) -> list[Message]:
    """Run a hostile model that makes ``calls`` (one turn each, then "done"), under a deadline."""
    turns: list[Any] = [[tool_call(name, arguments)] for name, arguments in calls] + ["done"]
    options.setdefault("persist_session", False)
    with anyio.fail_after(seconds):
        return [
            m async for m in query(prompt="go", options=AgentOptions(model=ScriptedModel(turns), **options))
        ]


def results(messages: list[Message]) -> list[ToolResultBlock]:
    """Every tool result the model got back, in order."""
    return [
        block
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for block in m.content
        if isinstance(block, ToolResultBlock)
    ]


def texts(messages: list[Message]) -> str:
    """Everything the model got back from tools, as one string (to search for leaked secrets)."""
    return "\n".join(str(r.content) for r in results(messages))


def tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
