"""Glob and Grep: patterns, filters, output modes, context lines and their error results."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tool_calls import call, failed, ok

from openagent import ToolContext
from openagent_tools import glob, grep
from openagent_tools._search import glob_regex

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("**/*.py", "src/pkg/core.py", True),
        ("**/*.py", "top.py", True),
        ("*.py", "src/pkg/core.py", False),
        ("src/**", "src/pkg/core.py", True),
        ("**/*.{md,txt}", "docs/a.md", True),
        ("test_?.py", "test_1.py", True),
        ("test_?.py", "test_12.py", False),
        ("[!a]*.py", "b.py", True),
        ("[!a]*.py", "a.py", False),
    ],
)
def test_glob_regex(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is hit


async def test_glob_lists_matches_newest_first(context: ToolContext, project: Path) -> None:
    os.utime(project / "src/pkg/__init__.py", (1, 1))
    out = ok(await call(glob, context, pattern="**/*.py"))
    assert out.splitlines() == ["src/pkg/core.py", "src/pkg/__init__.py"]
    assert ok(await call(glob, context, pattern="*.py", path="src/pkg")).count(".py") == 2


async def test_glob_skips_vcs_folders_and_caps_results(context: ToolContext, project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".git" / "config.py").write_text("")
    many = project / "many"
    many.mkdir()
    for i in range(105):
        (many / f"f{i}.txt").write_text("")
    out = ok(await call(glob, context, pattern="**/*.txt"))
    assert "[6 more files not shown" in out  # 105 + notes.txt, 100 shown
    assert ".git" not in ok(await call(glob, context, pattern="**/*.py"))


async def test_glob_errors(context: ToolContext) -> None:
    assert "No files found" in ok(await call(glob, context, pattern="**/*.rs"))
    assert "not a directory" in failed(await call(glob, context, pattern="*", path="notes.txt"))
    assert "does not exist" in failed(await call(glob, context, pattern="*", path="nowhere"))
    assert "pattern" in failed(await call(glob, context))


async def test_grep_modes(context: ToolContext) -> None:
    assert ok(await call(grep, context, pattern=r"def \w+")) == "src/pkg/core.py"
    assert ok(await call(grep, context, pattern=r"def \w+", output_mode="count")) == "src/pkg/core.py:2"
    content = ok(await call(grep, context, pattern="return a - b", output_mode="content"))
    assert content == "src/pkg/core.py:6:    return a - b"


async def test_grep_context_lines(context: ToolContext) -> None:
    out = ok(await call(grep, context, pattern="beta", path="notes.txt", output_mode="content", **{"-C": 1}))
    assert out.splitlines() == ["notes.txt-1-alpha", "notes.txt:2:beta", "notes.txt-3-gamma"]
    out = ok(await call(grep, context, pattern="^def", output_mode="content", **{"-A": 1, "-n": False}))
    assert out.splitlines() == [
        "src/pkg/core.py:def add(a, b):",
        "src/pkg/core.py-    return a + b",
        "--",
        "src/pkg/core.py:def sub(a, b):",
        "src/pkg/core.py-    return a - b",
    ]
    before = ok(
        await call(grep, context, pattern="gamma", path="notes.txt", output_mode="content", **{"-B": 2})
    )
    assert before.splitlines()[0] == "notes.txt-1-alpha"


async def test_grep_filters_case_and_multiline(context: ToolContext) -> None:
    assert ok(await call(grep, context, pattern="todo", **{"-i": True})) == "README.md"
    assert "No matches" in ok(await call(grep, context, pattern="todo"))
    assert ok(await call(grep, context, pattern="a", glob="*.txt")) == "notes.txt"
    assert ok(await call(grep, context, pattern="a", glob="src/**/*.py")) == "src/pkg/core.py"
    assert ok(await call(grep, context, pattern="demo", type="md")) == "README.md"
    out = ok(await call(grep, context, pattern=r"add.*?return", multiline=True, output_mode="content"))
    assert out.splitlines() == ["src/pkg/core.py:1:def add(a, b):", "src/pkg/core.py:2:    return a + b"]
    assert (
        ok(await call(grep, context, pattern=r"alpha\nbeta", multiline=True, output_mode="count"))
        == "notes.txt:1"
    )


async def test_grep_head_limit_and_skips_binaries(context: ToolContext, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"alpha\x00beta")
    out = ok(await call(grep, context, pattern="a", output_mode="content", head_limit=2))
    assert len(out.splitlines()) == 3 and "head_limit=2" in out
    assert "blob.bin" not in ok(await call(grep, context, pattern="alpha"))


async def test_grep_caps_its_output(context: ToolContext, project: Path) -> None:
    (project / "big.txt").write_text("match me\n" * 20_000)
    out = ok(await call(grep, context, pattern="match", output_mode="content"))
    assert out.endswith("[output truncated: narrow the search with path, glob or head_limit]")
    assert len(out) < 60_000


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pattern": "("}, "invalid regular expression"),
        ({"pattern": "a", "type": "cobol"}, "unknown type"),
        ({"pattern": "a", "glob": "[z-a]"}, "invalid glob"),
        ({"pattern": "a", "path": "nowhere"}, "does not exist"),
        ({"pattern": "a", "output_mode": "lines"}, "output_mode"),
        ({"pattern": "a", "-A": -1}, "-A"),
        ({"pattern": "a", "bogus": 1}, "bogus"),
    ],
    ids=[
        "bad-regex",
        "bad-type",
        "bad-glob",
        "missing-path",
        "bad-mode",
        "negative-context",
        "unknown-argument",
    ],
)
async def test_grep_errors(context: ToolContext, arguments: Any, message: str) -> None:
    assert message in failed(await call(grep, context, **arguments))


def test_grep_schema_uses_claude_names() -> None:
    properties = grep.input_schema["properties"]
    assert {"-i", "-n", "-A", "-B", "-C", "pattern", "glob", "type", "output_mode", "head_limit"} <= set(
        properties
    )
    assert grep.input_schema["required"] == ["pattern"]
