"""Fixtures for the built-in tools: a temp project, a directory outside it, a ToolContext over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from openagent import AgentOptions, ToolContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "core.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (root / "README.md").write_text("# Demo\n\nA demo project.\nTODO: write docs\n")
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("top secret\n")
    return secret


@pytest.fixture
def context(project: Path) -> ToolContext:
    return ToolContext(
        tool_use_id="call_1", session_id="s", cwd=str(project), options=AgentOptions(cwd=project)
    )
