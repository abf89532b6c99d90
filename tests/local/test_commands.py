from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from openagent._plugins import load_plugins
from openagent_local import LocalProvider, register_commands, running_servers
from openagent_local._commands import local


@pytest.fixture
def cache(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the user cache directory at the stand-in build."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(root.parent))
    return root


def test_start_status_stop(cache: Path, model: Path):
    runner = CliRunner()
    started = runner.invoke(local, ["start", str(model)])
    assert started.exit_code == 0, started.output
    assert "local:tiny on http://127.0.0.1:" in started.output
    [server] = running_servers(cache)
    assert server.owner_pid is None  # detached: outlives the command

    status = runner.invoke(local, ["status"])
    assert status.exit_code == 0
    assert f"running: tiny on {server.base_url} (pid {server.pid}, detached)" in status.output
    assert str(cache / "llama-server" / "11434.0.0" / "llama-server") in status.output

    stopped = runner.invoke(local, ["stop"])
    assert stopped.exit_code == 0
    assert f"stopped tiny (pid {server.pid})" in stopped.output
    assert running_servers(cache) == []
    assert "no server running" in runner.invoke(local, ["status"]).output


def test_install_with_a_cached_build_only_reports_it(cache: Path):
    result = CliRunner().invoke(local, ["install"])
    assert result.exit_code == 0
    assert "llama-server: " + str(cache / "llama-server" / "11434.0.0" / "llama-server") in result.output


def test_status_without_a_build_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = CliRunner().invoke(local, ["status"])
    assert "not built (run: openagent local install)" in result.output


@pytest.mark.parametrize("command", ["start", "run"])
def test_an_unknown_model_is_a_clean_error(cache: Path, command: str):
    args = [command, "no-such-model"] if command == "start" else [command, "hi", "--model", "no-such-model"]
    result = CliRunner().invoke(local, args)
    assert result.exit_code == 1
    assert "Error: no installed model package provides 'no-such-model'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_commands_join_the_openagent_command_line():
    cli = click.Group("openagent")
    register_commands(cli)
    result = CliRunner().invoke(cli, ["local", "--help"])
    assert result.exit_code == 0
    for name in ("install", "start", "status", "stop", "run"):
        assert name in result.output


def test_the_provider_is_registered_through_the_entry_point(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAGENT_PLUGINS", "local")
    registry = load_plugins()
    assert registry.plugins["local"].error is None
    assert registry.provider_factory("local") is LocalProvider
