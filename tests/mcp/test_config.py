"""Server configs, their defaults and errors, the status view of them, and tool names (no server needed)."""

from __future__ import annotations

from typing import Any

import pytest

from openagent.errors import ConfigError
from openagent.retry import NoRetry, StaminaRetry
from openagent_mcp import tool_name
from openagent_mcp._config import parse_config
from openagent_mcp._names import allocate, server_prefixes


def test_defaults_and_claude_code_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = parse_config("s", {"command": "srv"})
    assert (plain.timeout, plain.startup_wait, plain.tool_timeout, plain.max_tool_timeout) == (
        30,
        5,
        60,
        3600,
    )
    monkeypatch.setenv("MCP_TIMEOUT", "2000")  # milliseconds, as Claude Code reads them
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "90000")
    from_env = parse_config("s", {"command": "srv", "tool_timeouts": {"build": 600}})
    assert (from_env.timeout, from_env.startup_wait, from_env.tool_timeout) == (2, 3, 90)
    assert (from_env.timeout_for("build"), from_env.timeout_for("other")) == (600, 90)
    assert parse_config("s", {"command": "srv", "tool_timeout": 5}).tool_timeout == 5  # the config wins


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "websocket"}, "unknown MCP server type 'websocket'"),
        ({"command": ""}, "a stdio server needs a 'command' string"),
        ({"command": "x", "args": "--flag"}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "'env' must map names to strings"),
        (
            {"type": "http", "url": "file:///etc/passwd"},
            "an http server needs a 'url' string (http:// or https://)",
        ),
        ({"type": "sse", "url": "x", "headers": []}, "an sse server needs a 'url' string"),
        ({"command": "x", "tool_timeout": 0}, "'tool_timeout' must be a positive number of seconds, not 0"),
        ({"command": "x", "timeout": True}, "'timeout' must be a positive number of seconds, not True"),
        ({"command": "x", "max_binary_bytes": -1}, "'max_binary_bytes' must be a whole number of bytes"),
        (
            {"command": "x", "reconnect": "often"},
            "'reconnect' must be true, a number of attempts or a retry policy",
        ),
        ({"type": "sdk", "instance": object()}, "an sdk server needs an 'instance'"),
        ("npx server", "a server config must be a dict, not str"),
    ],
)
def test_bad_configs_are_config_errors_naming_the_key(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config("s", raw)


def test_reconnect_policies() -> None:
    assert parse_config("s", {"command": "x"}).reconnect is None
    assert parse_config("s", {"command": "x", "reconnect": 3}).reconnect == StaminaRetry(attempts=3)
    assert isinstance(parse_config("s", {"command": "x", "reconnect": True}).reconnect, StaminaRetry)
    assert parse_config("s", {"command": "x", "reconnect": True}, retry=NoRetry()).reconnect == NoRetry()


def test_the_status_view_redacts_secrets() -> None:
    stdio = parse_config("s", {"command": "srv", "args": ["-v"], "env": {"TOKEN": "hunter2"}})
    assert stdio.for_status() == {
        "type": "stdio",
        "command": "srv",
        "args": ["-v"],
        "env": {"TOKEN": "[redacted]"},
    }
    http = parse_config(
        "s", {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer k"}}
    )
    assert http.for_status() == {
        "type": "http",
        "url": "https://x/mcp",
        "headers": {"Authorization": "[redacted]"},
    }


def test_names() -> None:
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"
    assert tool_name("files__evil", "rm") == "mcp__files_evil__rm"  # never covered by a rule for "files"
    assert tool_name("__", "x") == "mcp__server__x"
    long = tool_name("srv", "t" * 100)
    assert len(long) == 64 and long.startswith("mcp__srv__ttt") and long == tool_name("srv", "t" * 100)
    assert tool_name("srv", "t" * 100) != tool_name("srv", "t" * 101)  # the digest tells them apart
    assert len(tool_name("s" * 80, "x")) <= 64
    taken: set[str] = set()
    assert [allocate("a", taken) for _ in range(3)] == ["a", "a_2", "a_3"]
    assert allocate("x" * 64, {"x" * 64}) == "x" * 62 + "_2"


def test_server_prefix_collisions_are_resolved_in_order_with_a_warning() -> None:
    prefixes, warnings = server_prefixes(["my.fs", "my_fs", "my-fs", "my_fs_2"])
    assert prefixes == {"my.fs": "my_fs", "my_fs": "my_fs_3", "my-fs": "my-fs", "my_fs_2": "my_fs_2"}
    assert list(warnings) == ["my_fs"]
