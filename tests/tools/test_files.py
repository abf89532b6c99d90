"""Read, Write, Edit and the confinement every file tool shares."""

from __future__ import annotations

import base64
import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from tool_calls import call, failed, ok

from openagent import AgentOptions, Tool, ToolContext
from openagent_tools import edit, glob, grep, read, write

pytestmark = pytest.mark.anyio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


# --- Read ---------------------------------------------------------------------------------------------------


async def test_read_numbers_lines(context: ToolContext) -> None:
    out = ok(await call(read, context, file_path="notes.txt"))
    assert out == "     1\talpha\n     2\tbeta\n     3\tgamma"


async def test_read_offset_and_limit(context: ToolContext, project: Path) -> None:
    (project / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 51)))
    out = ok(await call(read, context, file_path=str(project / "long.txt"), offset=10, limit=3))
    assert out.splitlines()[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "offset=13" in out.splitlines()[-1]


async def test_read_cuts_long_lines_and_reports_empty_files(context: ToolContext, project: Path) -> None:
    (project / "wide.txt").write_text("x" * 5000 + "\n")
    (project / "empty.txt").write_text("")
    assert "line cut at 2000" in ok(await call(read, context, file_path="wide.txt"))
    assert "is empty" in ok(await call(read, context, file_path="empty.txt"))


async def test_read_image_is_an_image_block(context: ToolContext, project: Path) -> None:
    (project / "dot.png").write_bytes(PNG)
    result = await call(read, context, file_path="dot.png")
    assert not result.is_error
    assert isinstance(result.content, list)
    (block,) = result.content
    assert block["type"] == "image"
    assert block["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }


@pytest.mark.parametrize(
    ("setup", "arguments", "message"),
    [
        (
            lambda p: (p / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02"),
            {"file_path": "blob.bin"},
            "binary file",
        ),
        (lambda p: None, {"file_path": "missing.txt"}, "does not exist"),
        (lambda p: None, {"file_path": "src"}, "is a directory"),
        (lambda p: None, {"file_path": "notes.txt", "offset": 99}, "past the end"),
        (lambda p: None, {"file_path": "notes.txt", "offset": 0}, "offset"),
        (lambda p: None, {"file_path": ""}, "empty"),
        (lambda p: None, {}, "file_path"),
    ],
    ids=["binary", "missing", "directory", "offset-past-end", "offset-zero", "empty-path", "no-path"],
)
async def test_read_errors(
    context: ToolContext, project: Path, setup: Any, arguments: Any, message: str
) -> None:
    setup(project)
    assert message in failed(await call(read, context, **arguments))


async def test_read_refuses_huge_images(context: ToolContext, project: Path) -> None:
    (project / "big.png").write_bytes(PNG + b"\x00" * (5 * 1024 * 1024))
    assert "cannot be read" in failed(await call(read, context, file_path="big.png"))


# --- Write --------------------------------------------------------------------------------------------------


async def test_write_creates_parents_and_overwrites(context: ToolContext, project: Path) -> None:
    assert "Created new/dir/file.txt" in ok(
        await call(write, context, file_path="new/dir/file.txt", content="hi\n")
    )
    assert (project / "new/dir/file.txt").read_text() == "hi\n"
    assert "Overwrote" in ok(await call(write, context, file_path="new/dir/file.txt", content="bye"))
    assert (project / "new/dir/file.txt").read_text() == "bye"


async def test_write_refuses_a_directory_and_bad_arguments(context: ToolContext) -> None:
    assert "is a directory" in failed(await call(write, context, file_path="src", content="x"))
    assert "content" in failed(await call(write, context, file_path="a.txt"))


# --- Edit ---------------------------------------------------------------------------------------------------


async def test_edit_replaces_a_unique_string(context: ToolContext, project: Path) -> None:
    out = ok(await call(edit, context, file_path="src/pkg/core.py", old_string="a + b", new_string="b + a"))
    assert "replaced 1 occurrence" in out
    assert "return b + a" in (project / "src/pkg/core.py").read_text()


async def test_edit_refuses_an_ambiguous_match_unless_replace_all(
    context: ToolContext, project: Path
) -> None:
    message = failed(
        await call(edit, context, file_path="src/pkg/core.py", old_string="(a, b)", new_string="(x, y)")
    )
    assert "occurs 2 times" in message
    assert "(a, b)" in (project / "src/pkg/core.py").read_text()  # untouched
    out = ok(
        await call(
            edit,
            context,
            file_path="src/pkg/core.py",
            old_string="(a, b)",
            new_string="(x, y)",
            replace_all=True,
        )
    )
    assert "2 occurrences" in out
    assert (project / "src/pkg/core.py").read_text().count("(x, y)") == 2


async def test_edit_keeps_crlf_line_endings(context: ToolContext, project: Path) -> None:
    (project / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    ok(await call(edit, context, file_path="win.txt", old_string="two", new_string="three"))
    assert (project / "win.txt").read_bytes() == b"one\r\nthree\r\n"


async def test_edit_with_empty_old_string_creates_a_file(context: ToolContext, project: Path) -> None:
    ok(await call(edit, context, file_path="fresh.txt", old_string="", new_string="new\n"))
    assert (project / "fresh.txt").read_text() == "new\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"file_path": "notes.txt", "old_string": "delta", "new_string": "x"}, "was not found"),
        ({"file_path": "notes.txt", "old_string": "beta", "new_string": "beta"}, "are the same"),
        ({"file_path": "missing.txt", "old_string": "a", "new_string": "b"}, "does not exist"),
        ({"file_path": "notes.txt", "old_string": "", "new_string": "b"}, "already exists"),
        ({"file_path": "src", "old_string": "a", "new_string": "b"}, "is a directory"),
        ({"file_path": "blob.bin", "old_string": "a", "new_string": "b"}, "binary file"),
        ({"file_path": "latin1.txt", "old_string": "a", "new_string": "b"}, "not UTF-8"),
        ({"file_path": "notes.txt", "old_string": "a"}, "new_string"),
    ],
    ids=["not-found", "no-change", "missing-file", "empty-old-on-existing", "directory", "binary", "not-utf8",
         "missing-argument"],
)  # fmt: skip
async def test_edit_errors(context: ToolContext, project: Path, arguments: Any, message: str) -> None:
    (project / "blob.bin").write_bytes(b"a\x00b")
    (project / "latin1.txt").write_bytes("caf\xe9 a".encode("latin-1"))
    before = (project / "notes.txt").read_text()
    assert message in failed(await call(edit, context, **arguments))
    assert (project / "notes.txt").read_text() == before


# --- confinement --------------------------------------------------------------------------------------------

ATTACKS = ["../outside/secret.txt", "src/../../outside/secret.txt", "{outside}/secret.txt", "link/secret.txt",
           "filelink.txt", "/etc/passwd", "~/.bashrc"]  # fmt: skip


@pytest.fixture
def trap(project: Path, outside: Path) -> Path:
    (project / "link").symlink_to(outside, target_is_directory=True)
    (project / "filelink.txt").symlink_to(outside / "secret.txt")
    return outside


ATTACK_IDS = ["dotdot", "inner-dotdot", "absolute", "dir-symlink", "file-symlink", "etc", "home"]


@pytest.mark.parametrize("raw", ATTACKS, ids=ATTACK_IDS)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [(read, {}), (write, {"content": "pwned"}), (edit, {"old_string": "top", "new_string": "pwned"})],
    ids=["Read", "Write", "Edit"],
)
async def test_file_tools_refuse_paths_outside(
    context: ToolContext, trap: Path, raw: str, tool: Tool, extra: dict[str, Any]
) -> None:
    message = failed(await call(tool, context, file_path=raw.format(outside=trap), **extra))
    assert "outside the directories this agent may use" in message
    assert (trap / "secret.txt").read_text() == "top secret\n"
    assert not (trap / "secret.txt").with_suffix(".bak").exists()


@pytest.mark.parametrize("tool", [glob, grep], ids=["Glob", "Grep"])
async def test_search_tools_refuse_paths_outside_and_skip_escaping_links(
    context: ToolContext, trap: Path, tool: Tool
) -> None:
    pattern = "**/*" if tool is glob else "top secret"
    assert "outside" in failed(await call(tool, context, pattern=pattern, path="../outside"))
    assert "outside" in failed(await call(tool, context, pattern=pattern, path="link"))
    listing = ok(await call(tool, context, pattern=pattern))
    if tool is glob:
        assert "README.md" in listing and "secret" not in listing and "filelink" not in listing
    else:
        assert listing == "No matches for 'top secret'"


async def test_add_dirs_extend_the_allowed_places(project: Path, outside: Path) -> None:
    context = ToolContext(
        tool_use_id="c",
        session_id="s",
        cwd=str(project),
        options=AgentOptions(cwd=project, add_dirs=[outside]),
    )
    assert "top secret" in ok(await call(read, context, file_path=str(outside / "secret.txt")))
    context = dataclasses.replace(context, options=context.options.replace(add_dirs=[]))
    assert "outside" in failed(await call(read, context, file_path=str(outside / "secret.txt")))


async def test_a_symlink_inside_the_project_is_followed(context: ToolContext, project: Path) -> None:
    os.symlink(project / "notes.txt", project / "alias.txt")
    assert "alpha" in ok(await call(read, context, file_path="alias.txt"))
