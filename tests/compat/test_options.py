"""ClaudeAgentOptions → AgentOptions: what maps, what is ignored with a warning, what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from openagent import AgentOptions
from openagent._errors import ConfigError
from openagent.compat import claude
from openagent.compat.claude import ClaudeAgentOptions, ClaudeSDKClient, to_agent_options


def test_claude_fields_map_onto_agent_options(tmp_path: Any) -> None:
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("from a file")
    options = to_agent_options(
        ClaudeAgentOptions(
            model="ollama:qwen3",
            system_prompt={"type": "preset", "preset": "claude_code", "append": "Be brief."},
            permission_mode=None,
            max_turns=3,
            allowed_tools=["Read"],
            mcp_servers={},
            resume="abc",
            fork_session=True,
        )
    )
    assert isinstance(options, AgentOptions)
    assert (options.model, options.system_prompt, options.permission_mode) == (
        "ollama:qwen3",
        "Be brief.",
        "default",
    )
    assert (options.max_turns, list(options.allowed_tools), options.mcp_servers) == (3, ["Read"], None)
    assert (options.resume, options.fork_session) == ("abc", True)
    from_file = to_agent_options(ClaudeAgentOptions(system_prompt={"type": "file", "path": str(prompt_file)}))
    assert from_file.system_prompt == "from a file"


def test_claude_model_names_yield_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        to_agent_options(ClaudeAgentOptions(model="claude-sonnet-4-5")).model == "anthropic:claude-sonnet-4-5"
    )
    monkeypatch.setenv("OPENAGENT_MODEL", "ollama:qwen3")
    assert to_agent_options(ClaudeAgentOptions(model="claude-sonnet-4-5")).model is None
    assert to_agent_options(ClaudeAgentOptions(model="openai:gpt-4.1")).model == "openai:gpt-4.1"


def test_cli_only_options_are_ignored_with_a_warning() -> None:
    with pytest.warns(claude.IgnoredOptionWarning, match="cli_path"):
        options = to_agent_options(ClaudeAgentOptions(cli_path="/usr/bin/claude", model="test:echo"))
    assert options.model == "test:echo"


def test_unknown_options_are_a_type_error() -> None:
    with pytest.raises(TypeError):
        ClaudeAgentOptions(no_such_option=1)  # type: ignore[call-arg]


def test_a_custom_transport_is_refused() -> None:
    with pytest.raises(ConfigError, match="transports"):
        ClaudeSDKClient(transport=object())
    with pytest.raises(ConfigError, match="transports"):
        claude.query(prompt="hi", transport=object())


def test_agent_options_pass_through() -> None:
    options = AgentOptions(model="test:echo")
    assert to_agent_options(options) is options


def test_an_in_process_server_without_the_mcp_plugin_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from openagent._errors import ConfigError
    from openagent._query import run_sync

    server = claude.create_sdk_mcp_server("x")  # made by core: creating one needs no plugin
    assert server["type"] == "sdk" and server["instance"].name == "x"
    monkeypatch.setenv("OPENAGENT_PLUGINS", "")  # as if openagent-mcp were not installed
    with pytest.raises(ConfigError, match=r'pip install "openagent\[mcp\]"'):
        run_sync("hi", AgentOptions(model="test:echo", mcp_servers={"x": server}))


@pytest.mark.parametrize("field", ["permission_prompt_tool_name", "plugins", "extra_args"])
def test_options_not_honoured_say_so(field: str) -> None:
    value = {"x": None} if field == "extra_args" else "tool"
    value = [{"type": "local", "path": "."}] if field == "plugins" else value
    with pytest.warns(claude.IgnoredOptionWarning, match=field):
        to_agent_options(ClaudeAgentOptions(**{field: value}))


def test_claude_defaults_every_tool_and_every_setting_source_without_project_permission_rules() -> None:
    options = to_agent_options(None)
    assert tuple(options.setting_sources) == ("user", "project", "local") and options.trust_project is False
    explicit = to_agent_options(ClaudeAgentOptions(setting_sources=["local"]))
    assert explicit.trust_project is True  # naming the sources is the caller's opt-in
    assert to_agent_options(ClaudeAgentOptions(tools=[])).tools == []


def test_thinking_effort_and_settings_map_onto_agent_options(tmp_path: Any) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(
        '{"permissions": {"allow": ["Bash(git status:*)"], "defaultMode": "acceptEdits"}, "env": {"A": "1"}}'
    )
    options = to_agent_options(
        ClaudeAgentOptions(
            max_thinking_tokens=0, effort="high", settings=str(settings), betas=["b"], user="u"
        )
    )
    assert options.thinking == {"type": "disabled"} and options.effort == "high"
    assert list(options.allowed_tools) == ["Bash(git status:*)"] and options.permission_mode == "acceptEdits"
    assert options.env == {"A": "1"} and list(options.betas) == ["b"] and options.user == "u"
    assert to_agent_options(ClaudeAgentOptions(env={"MAX_THINKING_TOKENS": "9000"})).thinking == {
        "type": "enabled",
        "budget_tokens": 9000,
    }
    with pytest.raises(ConfigError, match="settings"):
        to_agent_options(ClaudeAgentOptions(settings="{not json"))


def test_sandbox_maps_onto_the_bash_sandbox(tmp_path: Any) -> None:
    settings = {"enabled": True, "network": {"allowedDomains": ["*"]}}
    assert to_agent_options(ClaudeAgentOptions(sandbox=settings)).sandbox == settings
    from_file = tmp_path / "settings.json"
    from_file.write_text('{"sandbox": {"enabled": true}}')
    assert to_agent_options(ClaudeAgentOptions(settings=str(from_file))).sandbox == {"enabled": True}
