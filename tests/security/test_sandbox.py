"""The Bash sandbox against a hostile model, on the real bubblewrap (the security session installs it).

With ``sandbox`` on, Bash calls run without asking (``autoAllowBashIfSandboxed``), so every test here is a
command the model gets to run: what it may change is the sandbox's doing alone.
"""

from __future__ import annotations

import logging
import os
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hostile_bash import Arena, make_arena, run_bash, text

from openagent import AgentOptions, PermissionResultAllow, SystemMessage, ToolPermissionContext, query
from openagent.testing import ScriptedModel
from openagent_tools import _sandbox

pytestmark = pytest.mark.anyio

ON: dict[str, Any] = {"enabled": True}


@pytest.fixture(autouse=True)
def _bwrap_works() -> Iterator[None]:
    _sandbox.probe.cache_clear()
    reason = _sandbox.probe()
    assert reason is None, f"these tests need a working bubblewrap: {reason}"
    yield
    _sandbox.probe.cache_clear()


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    """The sentinel lives outside /tmp, which the sandbox replaces with its own: only read-only stops it."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="oa-sandbox-") as outside:
        yield make_arena(tmp_path, Path(outside))


def _running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and marker.encode() in cmdline and b"bash" not in cmdline:
            found.append(int(entry.name))
    return found


async def _gone(marker: str) -> bool:
    with anyio.move_on_after(5):
        while _running(marker):  # noqa: ASYNC110 - polling other processes
            await anyio.sleep(0.02)
    return not _running(marker)


# --- the filesystem -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "touch {S}",
        "echo x > {S}",
        "cp README.md {S}",
        "ln -s /etc/passwd {S}",
        "mkdir {S}",
        "python3 -c \"open('{S}', 'w')\"",
    ],
)
async def test_nothing_outside_the_project_can_be_written(arena: Arena, template: str) -> None:
    result = await run_bash(arena.payload(template), arena.project, sandbox=ON)
    assert not arena.pwned()
    assert result.is_error and "Read-only file system" in text(result)


async def test_the_project_is_writable(arena: Arena) -> None:
    result = await run_bash("echo hi > made.txt && mkdir sub && cat made.txt", arena.project, sandbox=ON)
    assert text(result) == "hi" and (arena.project / "made.txt").read_text() == "hi\n"


async def test_add_dirs_are_writable(arena: Arena) -> None:
    result = await run_bash(
        arena.payload("touch {S}"), arena.project, sandbox=ON, add_dirs=[arena.sentinel.parent]
    )
    assert not result.is_error and arena.pwned()


@pytest.mark.parametrize(
    "command",
    [
        "echo '[core]\n\tfsmonitor = touch /tmp/x' >> .git/config",
        "echo 'touch /tmp/x' > .git/hooks/pre-commit",
        "rm -rf .git",
        "mv .git elsewhere",
        "echo '{}' > .claude/settings.json",
        "echo 'permission_mode = \"bypassPermissions\"' > .openagent/settings.toml",
        "echo '{\"mcpServers\": {}}' > .mcp.json",
    ],
)
async def test_what_other_programs_act_on_stays_read_only(arena: Arena, command: str) -> None:
    for folder in (".claude", ".openagent"):
        (arena.project / folder).mkdir()
    (arena.project / ".mcp.json").write_text("{}")
    before = {p: p.read_bytes() for p in arena.project.rglob("*") if p.is_file()}
    result = await run_bash(command, arena.project, sandbox=ON)
    assert result.is_error
    assert {p: p.read_bytes() for p in arena.project.rglob("*") if p.is_file()} == before


async def test_a_created_git_folder_is_reported(arena: Arena, caplog: pytest.LogCaptureFixture) -> None:
    bare = arena.project / "sub"
    bare.mkdir()
    with caplog.at_level(logging.WARNING, logger="openagent.tools.sandbox"):
        result = await run_bash("git init -q && echo '[core] fsmonitor = x' >> .git/config", bare, sandbox=ON)
    assert f"it created {bare / '.git'}, which other programs act on outside the sandbox" in text(result)
    assert "review before git or openagent use it" in caplog.text


async def test_a_subagent_runs_in_the_same_sandbox(arena: Arena) -> None:
    from openagent import AgentDefinition
    from openagent.testing import tool_call

    model = ScriptedModel(
        [
            [tool_call("Task", {"description": "d", "prompt": "p", "subagent_type": "helper"})],
            [_call(arena.payload("touch {S}"))],
            "child done",
            "parent done",
        ]
    )
    helper = AgentDefinition(description="helps", prompt="You help.", tools=["Bash"])
    options = AgentOptions(
        model=model, cwd=arena.project, persist_session=False, sandbox=ON, agents={"helper": helper}
    )
    with anyio.fail_after(30):
        messages = [m async for m in query(prompt="go", options=_with_tools(options))]
    assert not arena.pwned() and "Read-only file system" in str(messages)


async def test_tmp_is_private(arena: Arena) -> None:
    name = f"/tmp/oa-sandbox-{uuid.uuid4().hex}"
    result = await run_bash(f"echo inside > {name} && cat {name}", arena.project, sandbox=ON)
    assert text(result) == "inside" and not await anyio.Path(name).exists()


async def test_credentials_are_hidden(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    home = arena.sentinel.parent / "home"  # outside /tmp, so only the hiding hides it
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    (home / ".netrc").write_text("machine x password hunter2")
    (home / "notes.txt").write_text("visible\n")
    monkeypatch.setenv("HOME", str(home))
    result = await run_bash(
        "cat ~/notes.txt ~/.ssh/id_ed25519 ~/.netrc; ls -A ~/.ssh | wc -l", arena.project, sandbox=ON
    )
    assert "visible" in text(result)
    assert "PRIVATE KEY" not in text(result) and "hunter2" not in text(result)
    assert text(result).splitlines()[:2] == ["visible", "0"], text(result)


async def test_credentials_in_the_environment_stay_outside(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-user")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-from-the-user")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    result = await run_bash("env", arena.project, sandbox=ON, env={"PROJECT_TOKEN": "given-on-purpose"})
    assert "sk-from-the-user" not in text(result) and "ghp-from-the-user" not in text(result)
    assert "HARMLESS_SETTING=visible" in text(result) and "PROJECT_TOKEN=given-on-purpose" in text(result)


async def test_read_deny_rules_hide_their_paths(arena: Arena) -> None:
    (arena.project / ".env").write_text("API_KEY=sk-secret")
    (arena.project / "secrets").mkdir()
    (arena.project / "secrets" / "db.txt").write_text("db-password")
    result = await run_bash(
        "cat .env secrets/db.txt; ls secrets",
        arena.project,
        sandbox=ON,
        disallowed_tools=["Read(.env)", "Read(secrets/**)"],
    )
    assert "sk-secret" not in text(result) and "db-password" not in text(result)


# --- processes and network ----------------------------------------------------------------------------------


async def test_setsid_cannot_outlive_the_command(arena: Arena) -> None:
    marker = f"{3600 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 1000}"
    result = await run_bash(
        f"setsid sleep {marker} > /dev/null 2>&1 & echo started", arena.project, sandbox=ON
    )
    assert text(result) == "started"
    assert await _gone(marker)


async def test_a_timeout_kills_everything_the_command_started(arena: Arena) -> None:
    marker = f"{3600 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 1000}"
    model = ScriptedModel(
        [[_call(f"setsid sleep {marker} & (nohup sleep {marker} &) ; sleep 60", timeout=1500)], "done"]
    )
    options = AgentOptions(model=model, tools=["Bash"], cwd=arena.project, persist_session=False, sandbox=ON)
    with anyio.fail_after(30):
        async for _ in query(prompt="go", options=_with_tools(options)):
            pass
    assert await _gone(marker)


def _call(command: str, **more: Any) -> Any:
    from openagent.testing import tool_call

    return tool_call("Bash", {"command": command, **more})


def _with_tools(options: AgentOptions) -> AgentOptions:
    from openagent_tools import bash

    return options.replace(tools=[bash])


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


async def test_no_network_by_default(arena: Arena, listener: int) -> None:
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    assert text(await run_bash(probe, arena.project, permission_mode="bypassPermissions")) == "connected"
    result = await run_bash(probe, arena.project, sandbox=ON)
    assert result.is_error and "connected" not in text(result)


async def test_network_when_every_domain_is_allowed(arena: Arena, listener: int) -> None:
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    result = await run_bash(
        probe, arena.project, sandbox={"enabled": True, "network": {"allowedDomains": ["*"]}}
    )
    assert text(result) == "connected"


async def test_a_domain_list_keeps_the_network_off_and_says_so(arena: Arena, listener: int) -> None:
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    settings = {"enabled": True, "network": {"allowedDomains": ["example.com"]}}
    result = await run_bash(probe, arena.project, sandbox=settings)
    assert "connected\n" not in text(
        result
    ) and "per-domain filtering (allowedDomains) is not supported" in text(result)


# --- permissions under the sandbox ---------------------------------------------------------------------------


async def test_deny_rules_still_hold(arena: Arena) -> None:
    result = await run_bash("\\touch inside", arena.project, sandbox=ON, disallowed_tools=["Bash(touch:*)"])
    assert result.is_error and "denied by the rule" in text(result)
    assert not (arena.project / "inside").exists()


async def test_auto_allow_can_be_turned_off(arena: Arena) -> None:
    result = await run_bash(
        "touch inside", arena.project, sandbox={"enabled": True, "autoAllowBashIfSandboxed": False}
    )
    assert result.is_error and "needs permission" in text(result)


async def test_leaving_the_sandbox_needs_approval(arena: Arena) -> None:
    command = {"command": arena.payload("touch {S}"), "dangerouslyDisableSandbox": True}
    model = ScriptedModel([[_call_input(command)], "done"])
    asked: list[str] = []

    async def approve(name: str, data: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append(name)
        return PermissionResultAllow()

    options = AgentOptions(
        model=model, cwd=arena.project, persist_session=False, sandbox=ON, can_use_tool=approve
    )
    with anyio.fail_after(30):
        messages = [m async for m in query(prompt="go", options=_with_tools(options))]
    assert asked == ["Bash"] and arena.pwned()
    assert "ran outside the sandbox (dangerouslyDisableSandbox)" in str(messages)


async def test_leaving_the_sandbox_can_be_forbidden(arena: Arena) -> None:
    command = {"command": arena.payload("touch {S}"), "dangerouslyDisableSandbox": True}
    settings = {"enabled": True, "allowUnsandboxedCommands": False}
    options = AgentOptions(
        model=ScriptedModel([[_call_input(command)], "done"]),
        cwd=arena.project,
        persist_session=False,
        sandbox=settings,
    )
    with anyio.fail_after(30):
        messages = [m async for m in query(prompt="go", options=_with_tools(options))]
    assert not arena.pwned() and "dangerouslyDisableSandbox is ignored" in str(messages)


async def test_excluded_commands_run_outside_only_with_a_rule(arena: Arena) -> None:
    settings = {"enabled": True, "excludedCommands": ["touch"]}
    denied = await run_bash(arena.payload("touch {S}"), arena.project, sandbox=settings)
    assert denied.is_error and "needs permission" in text(denied) and not arena.pwned()
    ran = await run_bash(
        arena.payload("touch {S}"), arena.project, sandbox=settings, allowed_tools=["Bash(touch:*)"]
    )
    assert "sandbox.excludedCommands lists it" in text(ran) and arena.pwned()


def _call_input(arguments: dict[str, Any]) -> Any:
    from openagent.testing import tool_call

    return tool_call("Bash", arguments)


# --- where the sandbox cannot run ----------------------------------------------------------------------------


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with the usual programs and no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "sh", "touch", "ls", "cat", "true", "git"):
        (bin_dir / name).symlink_to(f"/usr/bin/{name}")
    monkeypatch.setenv("PATH", str(bin_dir))
    _sandbox.probe.cache_clear()


@pytest.fixture
def refusing_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bwrap that fails as it does where the kernel refuses unprivileged namespaces (not producible as root)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    _sandbox.probe.cache_clear()


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("no_bwrap", "bubblewrap is not installed"),
        ("refusing_bwrap", "No permissions to create new namespace"),
    ],
)
async def test_without_bwrap_it_says_so_and_falls_back_to_the_rules(
    arena: Arena, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture, setup: str, reason: str
) -> None:
    request.getfixturevalue(setup)
    with caplog.at_level(logging.WARNING, logger="openagent.tools.sandbox"):
        asked = await run_bash(arena.payload("touch {S}"), arena.project, sandbox=ON)
    assert asked.is_error and "needs permission" in text(asked) and not arena.pwned()  # never auto-allowed
    assert reason in caplog.text and "Bash runs without it" in caplog.text
    ran = await run_bash(
        arena.payload("touch {S}"), arena.project, sandbox=ON, allowed_tools=["Bash(touch:*)"]
    )
    assert arena.pwned() and "the sandbox is not available" in text(ran) and reason in text(ran)


async def test_the_init_message_reports_the_sandbox(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "tools")
    options = AgentOptions(
        model=ScriptedModel(["hi"]), tools=["Bash"], cwd=arena.project, persist_session=False, sandbox=ON
    )
    init = [m async for m in query(prompt="go", options=options) if isinstance(m, SystemMessage)][0]
    assert init.data["sandbox"] == {"enabled": True, "active": True, "network": False}


async def test_the_init_message_reports_a_missing_sandbox(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, no_bwrap: None
) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "tools")
    options = AgentOptions(
        model=ScriptedModel(["hi"]), tools=["Bash"], cwd=arena.project, persist_session=False, sandbox=ON
    )
    init = [m async for m in query(prompt="go", options=options) if isinstance(m, SystemMessage)][0]
    assert init.data["sandbox"]["active"] is False and "not installed" in init.data["sandbox"]["reason"]


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("yes", "sandbox must be True, False or a dict"),
        ({"enabled": True, "autoAllow": True}, "unknown key(s) autoAllow"),
        ({"enabled": True, "network": {"allowDomains": []}}, "sandbox.network: unknown key(s) allowDomains"),
        ({"enabled": True, "excludedCommands": "docker"}, "excludedCommands must be a list of strings"),
    ],
)
async def test_malformed_settings_are_a_clear_error(arena: Arena, value: Any, error: str) -> None:
    result = await run_bash("true", arena.project, sandbox=value, permission_mode="bypassPermissions")
    assert result.is_error and error in text(result)
