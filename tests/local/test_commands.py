from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from openagent.plugins import load_plugins
from openagent_local import LocalProvider, register_commands, running_servers, stop_server
from openagent_local._commands import local


@pytest.fixture
def cache(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the user cache directory at the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(root.parent))
    return root


def test_start_status_stop(cache: Path, model: Path):
    runner = CliRunner()
    started = runner.invoke(local, ["start", "smollm2", "--ctx-size", "512"])
    assert started.exit_code == 0, started.output
    assert "local:smollm2 on http://127.0.0.1:" in started.output
    [server] = running_servers(cache)
    assert server.owner_pid is None  # detached: outlives the command

    status = runner.invoke(local, ["status"])
    assert status.exit_code == 0
    assert f"running: smollm2 on {server.base_url} (pid {server.pid}, detached)" in status.output
    assert "engine: xllamacpp 20" in status.output
    assert f"model local:smollm2: {model}" in status.output

    stopped = runner.invoke(local, ["stop"])
    assert stopped.exit_code == 0
    assert f"stopped smollm2 (pid {server.pid})" in stopped.output
    assert running_servers(cache) == []
    assert "no server running" in runner.invoke(local, ["status"]).output


def test_run_streams_an_answer(cache: Path):
    result = CliRunner().invoke(local, ["run", "Say hello.", "--max-tokens", "8"])
    [server] = running_servers(cache)  # owned by this process, for the next request
    stop_server(server, root=cache)
    assert result.exit_code == 0, result.output
    assert result.output.strip()


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
    for name in ("start", "status", "stop", "run"):
        assert name in result.output


def test_the_provider_is_registered_through_the_entry_point(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAGENT_PLUGINS", "local")
    registry = load_plugins()
    assert registry.plugins["local"].error is None
    assert registry.provider_factory("local") is LocalProvider
    assert "install" not in CliRunner().invoke(local, ["--help"]).output  # nothing to build any more
