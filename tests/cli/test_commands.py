"""``openagent plugins``, ``doctor`` and ``config show``; commands added by plugins."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def test_plugins_lists_what_each_registered_and_the_broken_ones(openagent):
    result = openagent("plugins", env={"OPENAGENT_PLUGINS": "clitest,clibroken,clibadcommands,cli"})
    assert result.returncode == 0
    rows = result.stdout
    assert "clitest" in rows and "providers: clitest; tools: Shout, Danger; commands: clitest-hello" in rows
    assert "BROKEN: ImportError: openagent_clibroken needs a library that is not installed" in rows
    assert "BROKEN: register_commands failed: RuntimeError: cannot add my command" in rows
    assert "2 plugin(s) failed; the others work" in rows
    assert "openagent" in rows and "providers: test" in rows


def test_a_plugin_command_runs_and_a_broken_plugin_does_not_stop_the_others(openagent):
    env = {"OPENAGENT_PLUGINS": "clitest,clibroken,clibadcommands"}
    hello = openagent("clitest-hello", env=env)
    assert hello.returncode == 0 and hello.stdout == "hello from a plugin\n"
    listed = openagent("--help", env=env)
    assert "clitest-hello" in listed.stdout and "Say hello" in listed.stdout
    run = openagent("run", "--model", "test:echo", "still works", env=env)
    assert run.returncode == 0 and run.stdout == "still works\n"


class _Models(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "qwen3:8b"}, {"id": "llama3.2"}]}).encode()
        status = 200 if self.path == "/v1/models" else 404
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def model_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_doctor_reports_reachable_and_down_servers_with_next_steps(openagent, model_server):
    from socket import socket

    with socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    result = openagent(
        "doctor", "--url", f"{model_server}/v1", "--url", closed, "--url", f"{model_server}/nope"
    )
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert any(line.startswith("✓ --url 1") and "models: qwen3:8b, llama3.2" in line for line in lines)
    assert any(line.startswith("✗ --url 2") and "not running" in line for line in lines)
    assert any(line.startswith("✓ --url 3") and "HTTP 404 from /models" in line for line in lines)
    for name in ("ollama", "lmstudio", "llamacpp", "vllm"):
        assert any(line[2:].startswith(name) for line in lines), name
    assert "• try: openagent run --model openai-compatible:qwen3:8b 'Hello'" in lines


def test_doctor_probes_the_configured_endpoint(openagent, model_server, project):
    (project / ".openagent").mkdir()
    (project / ".openagent" / "settings.toml").write_text(
        f'model = "vllm:qwen3:8b"\nbase_url = "{model_server}/v1"\n'
    )
    assert "✓ vllm (configured)" not in openagent("doctor").stdout  # an untrusted folder's endpoint
    result = openagent("doctor", env={"OPENAGENT_TRUST": "1"})
    assert any(line.startswith("✓ vllm (configured)") for line in result.stdout.splitlines())
    assert "model: vllm:qwen3:8b" in result.stdout
    assert "needs the 'vllm' provider" in result.stdout  # the openai plugin is not installed here


def test_config_show_merges_the_layers_and_names_the_source(openagent, project, tmp_path):
    import os
    from pathlib import Path

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "openagent" / "settings.toml"
    user.parent.mkdir(parents=True)
    user.write_text('model = "ollama:qwen3"\nmax_turns = 5\napi_key = "sk-secret-123456"\ntools = ["Read"]\n')
    (project / ".openagent").mkdir()
    (project / ".openagent" / "settings.toml").write_text(
        'model = "lmstudio:x"\npermission_mode = "acceptEdits"\n'
    )
    layers = {"OPENAGENT_MAX_TURNS": "9", "OPENAGENT_TOOLS": "Read,Grep", "OPENAGENT_TRUST": "1"}
    result = openagent("config", "show", env=layers)
    assert result.returncode == 0
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
        for line in result.stdout.splitlines()
        if line.count("│") == 4
    }
    assert rows["model"] == ["lmstudio:x", f"project {project / '.openagent' / 'settings.toml'}"]
    assert rows["max_turns"] == ["9", "env OPENAGENT_MAX_TURNS"]
    assert rows["tools"] == ["Read, Grep", "env OPENAGENT_TOOLS"]
    assert rows["permission_mode"] == ["acceptEdits", f"project {project / '.openagent' / 'settings.toml'}"]
    assert rows["api_key"] == ["****3456", f"user {user}"]
    assert "sk-secret" not in result.stdout
    assert rows["base_url"] == ["-", "default"]


def test_flags_beat_env_beat_project_beat_user(openagent, project):
    import os
    from pathlib import Path

    user = Path(os.environ["XDG_CONFIG_HOME"]) / "openagent" / "settings.toml"
    user.parent.mkdir(parents=True)
    user.write_text('model = "nope:from-user-file"\n')
    assert "unknown provider 'nope'" in openagent("run", "hi").stderr
    (project / ".openagent").mkdir()
    (project / ".openagent" / "settings.toml").write_text('model = "test:echo"\n')
    assert "unknown provider 'nope'" in openagent("run", "hi").stderr  # the folder is not trusted yet
    trusted = {"OPENAGENT_TRUST": "1"}
    assert openagent("run", "from the project file", env=trusted).stdout == "from the project file\n"
    env = {"OPENAGENT_MODEL": "nope:from-env", **trusted}
    assert "unknown provider 'nope'" in openagent("run", "hi", env=env).stderr
    assert openagent("run", "--model", "test:echo", "flag wins", env=env).stdout == "flag wins\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("model = ", "is not valid TOML"),
        ('modle = "x"', "unknown setting 'modle' (did you mean 'model'?)"),
        ("max_turns = 0", "expected a whole number of at least 1"),
        ('permission_mode = "yolo"', "permission mode must be one of"),
        ("tools = 3", "expected a list of names"),
    ],
    ids=["not-toml", "misspelled-key", "bad-number", "bad-mode", "bad-list"],
)
def test_bad_settings_files_exit_2_naming_the_file(openagent, project, content, message):
    (project / ".openagent").mkdir()
    path = project / ".openagent" / "settings.toml"
    path.write_text(content)
    for args in (["config", "show"], ["run", "--model", "test:echo", "hi"], ["doctor"], ["sessions", "list"]):
        result = openagent(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("openagent: error: ") and message in result.stderr, args
        assert str(path) in result.stderr or "project" in result.stderr, args


def test_tool_support_and_key_advice_come_from_the_provider_profiles(monkeypatch):
    from openagent.models import ProviderProfile
    from openagent_cli._doctor import Probe, _next_steps, tool_support
    from openagent_cli._settings import Settings

    profiles = {
        "hosted": ProviderProfile(name="hosted", api_key_env="HOSTED_API_KEY"),
        "local": ProviderProfile(name="local", requires_api_key=False, supports_parallel_tool_calls=False),
        "texty": ProviderProfile(name="texty", requires_api_key=False, tool_call_protocol="text"),
        "none": ProviderProfile(name="none", requires_api_key=False, supports_tools=False),
    }
    assert tool_support("hosted", profiles) == "yes, native"
    assert tool_support("local", profiles) == "yes, native (one call per turn)"
    assert tool_support("texty", profiles) == "yes, through prompted <tool_call> tags"
    assert tool_support("none", profiles) == "no"
    assert tool_support("other", profiles) == "unknown (no profile)"
    assert tool_support("hosted", None).startswith("unknown (pip install")

    up = [Probe("local", "http://127.0.0.1:1/v1", reachable=True, status=200, models=["m"])]
    settings = Settings(values={"model": "hosted:big"}, sources={"model": "flag --model"})
    monkeypatch.delenv("HOSTED_API_KEY", raising=False)
    steps = _next_steps(up, settings, ["hosted"], profiles)
    assert steps == ["hosted needs an API key: export HOSTED_API_KEY=… (or api_key in the settings)"]
    monkeypatch.setenv("HOSTED_API_KEY", "k")
    assert _next_steps(up, settings, ["hosted"], profiles) == []
