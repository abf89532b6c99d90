"""One path policy for every tool that reads or writes files, attacked by a scripted hostile model.

Classes: reading outside the allowed directories; reading what a Read deny rule covers through another
tool (Grep, Glob, an MCP filesystem tool, a symlink); writing protected places (``.git/``, ``.claude/``,
shell start-up files) without a rule naming them; swapping a symlink in between the check and the write;
writing through a hard link; a symlink loop or a FIFO making a search fail or hang; ``add_dirs`` as a string.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from attack import SECRET, attack, outside, results, texts, tree

from openagent import AgentOptions, PermissionResultAllow, ToolContext, tool
from openagent.errors import ConfigError
from openagent_mcp import create_sdk_mcp_server
from openagent_tools import edit, glob, grep, read, write

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tree(
        tmp_path / "project",
        {
            "src/app.py": "print('hello')\n",
            ".env": "API_TOKEN=ENV-SECRET\n",
            "config/.env": "DB_PASSWORD=CONFIG-SECRET\n",
            "secrets/key.pem": "PEM-SECRET\n",
            "README.md": "# Demo\n",
            ".git/config": "[core]\n\trepositoryformatversion = 0\n",
        },
    )


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    return outside(tmp_path)


# --- reading outside ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "how",
    ["dotdot", "absolute", "symlink-file", "symlink-dir", "home", "grep-path", "glob-path"],
)
async def test_nothing_outside_the_project_comes_back(project: Path, secret_dir: Path, how: str) -> None:
    (project / "link.txt").symlink_to(secret_dir / "secret.txt")
    (project / "linkdir").symlink_to(secret_dir)
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "dotdot": ("Read", {"file_path": "../outside/secret.txt"}),
        "absolute": ("Read", {"file_path": str(secret_dir / "secret.txt")}),
        "symlink-file": ("Read", {"file_path": "link.txt"}),
        "symlink-dir": ("Read", {"file_path": "linkdir/secret.txt"}),
        "home": ("Read", {"file_path": "~/../../" + str(secret_dir / "secret.txt").lstrip("/")}),
        "grep-path": ("Grep", {"pattern": "SECRET", "path": str(secret_dir), "output_mode": "content"}),
        "glob-path": ("Glob", {"pattern": "**/*", "path": "linkdir"}),
    }
    messages = await attack([calls[how]], cwd=project, **_tools())
    (result,) = results(messages)
    assert result.is_error and SECRET not in texts(messages)


async def test_a_search_of_the_project_skips_links_that_leave_it(project: Path, secret_dir: Path) -> None:
    (project / "src" / "leak.py").symlink_to(secret_dir / "secret.txt")
    calls = [
        ("Grep", {"pattern": "SECRET|print", "output_mode": "content"}),
        ("Glob", {"pattern": "**/*.py"}),
    ]
    messages = await attack(calls, cwd=project, **_tools())
    grep_out, glob_out = (str(r.content) for r in results(messages))
    assert "print('hello')" in grep_out and "leak.py" not in grep_out  # the control: a normal search works
    assert "src/app.py" in glob_out and "leak.py" not in glob_out


# --- read deny rules, whatever the tool -----------------------------------------------------------------------


DENIED = [
    ("Read(.env)", ("Grep", {"pattern": "TOKEN|PASSWORD", "output_mode": "content"}), ["ENV-", "CONFIG-"]),
    ("Read(.env)", ("Grep", {"pattern": ".", "path": "config", "output_mode": "content"}), ["CONFIG-"]),
    ("Read(.env)", ("Read", {"file_path": "config/.env"}), ["CONFIG-"]),
    ("Read(secrets/**)", ("Grep", {"pattern": "PEM", "output_mode": "count"}), ["key.pem"]),
    ("Read(secrets/**)", ("Read", {"file_path": "src/../secrets/key.pem"}), ["PEM-"]),
    ("Read(secrets/**)", ("Grep", {"pattern": "PEM", "path": "secrets/key.pem"}), ["PEM-"]),
    ("Read(./secrets/)", ("Grep", {"pattern": "PEM", "path": "secrets", "output_mode": "content"}), ["PEM-"]),
    ("Read(**/*.pem)", ("Glob", {"pattern": "**/*"}), ["key.pem"]),
    ("Read(.env)", ("Edit", {"file_path": ".env", "old_string": "API_TOKEN=E", "new_string": "x"}), ["ENV-"]),
]


@pytest.mark.parametrize(("rule", "call", "hidden"), DENIED, ids=[f"{r}-{c[0]}" for r, c, _ in DENIED])
async def test_a_read_deny_rule_holds_for_every_tool(
    project: Path, rule: str, call: Any, hidden: list[str]
) -> None:
    messages = await attack(
        [call], cwd=project, disallowed_tools=[rule], permission_mode="acceptEdits", **_tools()
    )
    shown = texts(messages)
    assert [h for h in hidden if h in shown] == [], shown
    assert _read(project / ".env") == "API_TOKEN=ENV-SECRET\n"


async def test_a_read_deny_rule_holds_through_a_symlink(project: Path) -> None:
    (project / "innocent.txt").symlink_to(project / ".env")
    calls = [
        ("Read", {"file_path": "innocent.txt"}),
        ("Grep", {"pattern": "TOKEN", "output_mode": "content"}),
        ("Glob", {"pattern": "*.txt"}),
    ]
    messages = await attack(calls, cwd=project, disallowed_tools=["Read(.env)"], **_tools())
    read_out, grep_out, glob_out = (r for r in results(messages))
    assert read_out.is_error and "Read(.env)" in str(read_out.content)
    assert "ENV-SECRET" not in texts(messages) and "innocent.txt" not in str(glob_out.content)
    assert "No matches" in str(grep_out.content)


async def test_a_read_deny_rule_holds_for_an_mcp_filesystem_tool_and_a_plain_function(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "mcp")

    @tool(is_read_only=True)
    def read_file(path: str) -> str:
        """Read a file (as MCP filesystem servers do, with no path declaration)."""
        return (project / path).read_text()

    server = create_sdk_mcp_server("fs", tools=[read_file])
    calls = [("mcp__fs__read_file", {"path": "secrets/key.pem"}), ("read_file", {"path": ".env"})]
    messages = await attack(
        calls, cwd=project, tools=[read_file], mcp_servers={"fs": server},
        disallowed_tools=["Read(secrets/**)", "Read(.env)"], allowed_tools=["mcp__fs"],
    )  # fmt: skip
    assert all(r.is_error and "denied by the rule" in str(r.content) for r in results(messages))
    assert "PEM-SECRET" not in texts(messages) and "ENV-SECRET" not in texts(messages)


async def test_control_reading_and_searching_inside_the_project(project: Path) -> None:
    calls = [
        ("Read", {"file_path": "src/app.py"}),
        ("Grep", {"pattern": "hello", "output_mode": "content"}),
        ("Glob", {"pattern": "**/*.md"}),
    ]
    messages = await attack(calls, cwd=project, disallowed_tools=["Read(.env)"], **_tools())
    read_out, grep_out, glob_out = (str(r.content) for r in results(messages))
    assert "print('hello')" in read_out and "src/app.py:1:print('hello')" in grep_out
    assert glob_out == "README.md"


# --- protected places --------------------------------------------------------------------------------------


PROTECTED = [
    (".git/config", "[core]\n\tfsmonitor = touch ../pwned\n"),
    (".git/hooks/pre-commit", "#!/bin/sh\ntouch ../pwned\n"),
    (".GIT/config", "[core]\n\tfsmonitor = touch ../pwned\n"),
    ("sub/.git/config", "[core]\n\tfsmonitor = touch ../pwned\n"),
    (".claude/settings.json", '{"permissions": {"allow": ["Bash"]}}'),
    (".openagent/settings.toml", 'permission_mode = "bypassPermissions"\n'),
    (".mcp.json", '{"mcpServers": {"x": {"command": "touch", "args": ["pwned"]}}}'),
    (".bashrc", "touch pwned\n"),
    (".envrc", "touch pwned\n"),
    (".vscode/tasks.json", '{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}'),
]


@pytest.mark.parametrize(("path", "content"), PROTECTED, ids=[p for p, _ in PROTECTED])
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
async def test_protected_places_need_a_rule_naming_them(
    project: Path, path: str, content: str, mode: str
) -> None:
    before = _snapshot(project)
    calls = [
        ("Write", {"file_path": path, "content": content}),
        ("Edit", {"file_path": path, "old_string": "", "new_string": content}),
    ]
    messages = await attack(
        calls, cwd=project, permission_mode=mode, allowed_tools=["Write", "Edit(**)"], **_tools()
    )
    assert all(r.is_error for r in results(messages)), texts(messages)
    assert _snapshot(project) == before


async def test_a_symlink_to_a_protected_place_is_protected_too(project: Path) -> None:
    (project / "notes.txt").symlink_to(project / ".git" / "config")
    calls = [("Write", {"file_path": "notes.txt", "content": "[core]\n\tfsmonitor = touch pwned\n"})]
    messages = await attack(calls, cwd=project, permission_mode="acceptEdits", **_tools())
    assert results(messages)[0].is_error and "protected place (.git" in texts(messages)
    assert "fsmonitor" not in (project / ".git" / "config").read_text()


async def test_control_a_rule_naming_the_place_or_an_approval_lets_it_through(project: Path) -> None:
    calls = [("Write", {"file_path": ".git/info/exclude", "content": "*.log\n"})]
    await attack(calls, cwd=project, allowed_tools=["Edit(.git/info/**)"], **_tools())
    assert (project / ".git" / "info" / "exclude").read_text() == "*.log\n"
    asked: list[str] = []

    async def approve(name: str, data: dict[str, Any], context: Any) -> PermissionResultAllow:
        asked.append(context.decision_reason)
        return PermissionResultAllow()

    calls = [("Write", {"file_path": ".claude/CLAUDE.md", "content": "notes\n"})]
    await attack(calls, cwd=project, permission_mode="acceptEdits", can_use_tool=approve, **_tools())
    assert (project / ".claude" / "CLAUDE.md").read_text() == "notes\n"
    assert asked and "protected place (.claude" in asked[0]
    await attack(
        [("Write", {"file_path": "src/new.py", "content": "x = 1\n"})],
        cwd=project,
        permission_mode="acceptEdits",
        **_tools(),
    )
    assert (project / "src" / "new.py").read_text() == "x = 1\n"  # ordinary edits in acceptEdits still run


# --- the check-then-use window ------------------------------------------------------------------------------


async def test_a_symlink_swapped_in_during_writes_never_leads_outside(
    project: Path, secret_dir: Path
) -> None:
    """A thread flips ``project/box`` between a real folder and a link to the outside while Write and Edit
    run hundreds of times; not one byte may land outside."""
    box, parked = project / "box", project / "parked"
    box.mkdir()
    (box / "f.txt").write_text("inside\n")
    (secret_dir / "f.txt").write_text(SECRET)
    context = _context(project)
    stop = threading.Event()

    def swap() -> None:  # each step may lose a race with the tool (which may recreate box): go on
        while not stop.is_set():
            for step in (
                lambda: os.rename(box, parked),
                lambda: os.symlink(secret_dir, box),
                lambda: os.unlink(box),
                lambda: os.rename(parked, box),
            ):
                with contextlib.suppress(OSError):
                    step()

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        with anyio.fail_after(60):
            for index in range(300):
                await write.call("w", {"file_path": "box/f.txt", "content": f"write {index}\n"}, context)
                await write.call("n", {"file_path": f"box/new{index}.txt", "content": "new\n"}, context)
                replace = {"file_path": "box/f.txt", "old_string": "write", "new_string": "edit"}
                await edit.call("e", replace, context)
    finally:
        stop.set()
        thread.join(10)
    assert _snapshot(secret_dir) == {"f.txt": SECRET.encode(), "secret.txt": (SECRET + "\n").encode()}


SWAPPED = [
    (write, {"file_path": "box/f.txt", "content": "PWNED\n"}),
    (write, {"file_path": "box/new.txt", "content": "PWNED\n"}),
    (write, {"file_path": "box/deeper/new.txt", "content": "PWNED\n"}),
    (edit, {"file_path": "box/f.txt", "old_string": "inside", "new_string": "PWNED"}),
    (read, {"file_path": "box/f.txt"}),
]


@pytest.mark.parametrize(
    ("victim", "arguments"), SWAPPED, ids=["write", "create", "create-deeper", "edit", "read"]
)
async def test_a_symlink_swapped_in_right_after_the_check_is_not_followed(
    project: Path, secret_dir: Path, monkeypatch: pytest.MonkeyPatch, victim: Any, arguments: dict[str, Any]
) -> None:
    """The attacker wins the race every time: the folder becomes a link to the outside just after the
    path was checked. The open, made component by component without following links, refuses."""
    from openagent_tools import _files

    box = project / "box"
    box.mkdir()
    (box / "f.txt").write_text("inside\n")
    (secret_dir / "f.txt").write_text(SECRET)
    checked = _files.resolve

    def resolve_then_swap(raw: str, context: ToolContext, *, what: str = "path") -> Path:
        path = checked(raw, context, what=what)
        os.rename(box, project / "parked")
        os.symlink(secret_dir, box)
        return path

    monkeypatch.setattr(_files, "resolve", resolve_then_swap)
    with anyio.fail_after(10):
        result = await victim.call("t", arguments, _context(project))
    assert result.is_error and "changed while it was being opened" in str(result.content)
    assert SECRET not in str(result.content)
    assert _snapshot(secret_dir) == {"f.txt": SECRET.encode(), "secret.txt": (SECRET + "\n").encode()}


@pytest.mark.parametrize(
    "call",
    [
        ("Edit", {"file_path": "linked.txt", "old_string": "TOP-SECRET-7d1e", "new_string": "PWNED"}),
        ("Write", {"file_path": "linked.txt", "content": "PWNED\n"}),
    ],
    ids=["edit", "write"],
)
async def test_a_file_hard_linked_outside_is_replaced_not_written_through(
    project: Path, secret_dir: Path, call: Any
) -> None:
    os.link(secret_dir / "secret.txt", project / "linked.txt")
    messages = await attack([call], cwd=project, permission_mode="acceptEdits", **_tools())
    assert "other hard link(s), left unchanged" in texts(messages)
    assert _read(secret_dir / "secret.txt") == SECRET + "\n"
    assert _read(project / "linked.txt") == "PWNED\n"


# --- hostile trees ------------------------------------------------------------------------------------------


async def test_symlink_loops_and_fifos_do_not_break_or_hang_a_search(project: Path) -> None:
    (project / "loop").symlink_to(project / "loop")
    (project / "a").symlink_to(project / "b")
    (project / "b").symlink_to(project / "a")
    (project / "src" / "deep").symlink_to(project / "src")
    os.mkfifo(project / "src" / "pipe.py")
    calls = [
        ("Glob", {"pattern": "**/*"}),
        ("Grep", {"pattern": "hello", "output_mode": "files_with_matches"}),
        ("Read", {"file_path": "loop"}),
        ("Read", {"file_path": "src/pipe.py"}),
    ]
    messages = await attack(calls, seconds=10, cwd=project, **_tools())
    globbed, grepped, loop, pipe = results(messages)
    assert "src/app.py" in str(globbed.content) and not globbed.is_error
    assert str(grepped.content) == "src/app.py"
    assert loop.is_error and pipe.is_error


@pytest.mark.parametrize(
    "name", ["add_dirs", "allowed_tools", "disallowed_tools", "tools", "setting_sources"]
)
def test_a_list_option_given_as_one_string_is_a_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match=f"{name} must be a list"):
        AgentOptions(**{name: "/x"})


def test_add_dirs_as_a_string_never_grants_the_root(project: Path) -> None:
    with pytest.raises(ConfigError):
        AgentOptions(cwd=project, add_dirs="/")  # type: ignore[arg-type]


# --- helpers --------------------------------------------------------------------------------------------------


def _tools() -> dict[str, Any]:
    return {"tools": [read, write, edit, glob, grep]}


def _context(project: Path) -> ToolContext:
    options = AgentOptions(cwd=project)
    return ToolContext(tool_use_id="t", session_id="s", cwd=str(project), options=options)


def _read(path: Path) -> str:
    return path.read_text()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
