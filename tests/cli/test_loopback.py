"""``openagent run`` and ``chat`` over HTTP: the openai plugin against the project's scripted loopback server.

This is the whole path a user takes with a local server (``--model openai-compatible:NAME --base-url …``):
the CLI process, the provider plugin found by its entry point, the OpenAI wire format over real sockets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_support import Terminal

pytest.importorskip("openagent_openai", reason="needs openagent-openai installed beside the CLI")

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
from scripted_server import ScriptedServer, ToolCall, Turn

PLUGINS = {"OPENAGENT_PLUGINS": "clitest,openai"}


@pytest.fixture
def server():
    with ScriptedServer() as running:
        yield running


def test_run_streams_from_a_loopback_server(openagent, server):
    server.add_script(
        "scripted",
        [
            Turn(text=["Let me ", "shout."], tool_calls=[ToolCall("Shout", {"text": "hi"}, fragments=3)]),
            Turn(text=["Done: ", "HI"]),
        ],
    )
    result = openagent(
        "run",
        "--model",
        "openai-compatible:scripted",
        "--base-url",
        server.url,
        "--tools",
        "Shout",
        "go",
        env=PLUGINS,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Let me shout.\nDone: HI\n"
    assert result.stderr.splitlines() == ["→ Shout(text='hi')", "← Shout: HI"]
    first, second = server.bodies("/chat/completions")
    assert first["model"] == "scripted" and first["stream"] is True
    assert [t["function"]["name"] for t in first["tools"]] == ["Shout"]
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": second["messages"][-2]["tool_calls"][0]["id"],
        "content": "HI",
    }


def test_run_reports_a_server_error_in_one_line(openagent, server):
    server.add_script("broken", [Turn(fault="400", message="model 'broken' not found")])
    result = openagent(
        "run", "--json", "--model", "openai-compatible:broken", "--base-url", server.url, "go", env=PLUGINS
    )
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("openagent: error: BadRequestError: ") and "HTTP 400" in line
    assert "model 'broken' not found" in line
    assert json.loads(result.stdout.splitlines()[-1])["subtype"] == "error_during_execution"


def test_run_fails_cleanly_when_nothing_listens(openagent):
    from scripted_server import closed_port

    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = openagent("run", "--model", "openai-compatible:x", "--base-url", url, "go", env=PLUGINS)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()  # retries are not logged without --verbose
    assert line.startswith("openagent: error: ProviderConnectionError: openai-compatible: cannot reach")
    verbose = openagent("-v", "run", "--model", "openai-compatible:x", "--base-url", url, "go", env=PLUGINS)
    assert "stamina" in verbose.stderr and verbose.returncode == 1


def test_chat_approves_a_tool_call_streamed_over_http(project, cli_env, server):
    server.add_script(
        "scripted",
        [
            Turn(
                text=["I will **act**."], tool_calls=[ToolCall("Danger", {"action": "deploy"}, fragments=4)]
            ),
            Turn(text=["Deployed."]),
        ],
    )
    args = ["chat", "--model", "openai-compatible:scripted", "--base-url", server.url, "--tools", "Danger"]
    term = Terminal(args, project, {**cli_env, **PLUGINS})
    try:
        term.prompt()
        term.type("deploy it")
        term.expect("I will act.")
        term.expect("permission Danger(action='deploy')")
        term.type("y")
        term.expect("← Danger: did deploy")
        term.expect("Deployed.")
        term.prompt()
        term.type("/exit")
        assert term.finish() == 0
    finally:
        term.child.close(force=True)
    assert server.bodies("/chat/completions")[1]["messages"][-1]["content"] == "did deploy"
