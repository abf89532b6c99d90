"""Project settings from temp project trees: memory, imports, skills, commands, agents, local rules."""

import logging
from pathlib import Path

import pytest

from openagent import AgentOptions, Client, run
from openagent.models import ProviderProfile
from openagent.settings import load_settings
from openagent.testing import ScriptedModel, tool_call
from openagent.types import AssistantMessage, ResultMessage, SystemMessage, ToolResultBlock, UserMessage

pytestmark = pytest.mark.anyio


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    repo = write(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "CLAUDE.md": "Root rules. See @docs/style.md for style.\n",
            "docs/style.md": "Use four spaces. Also @../../outside.md and @missing.md\n",
            "AGENTS.md": "Agents read this too.\n",
            "app/.claude/CLAUDE.md": "App-specific rules.\n",
            "app/.claude/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy the app\n---\nRun make deploy.\n",
            "app/.claude/skills/deploy/checklist.md": "1. tests green\n",
            "app/.claude/skills/broken/SKILL.md": "---\nname: [unclosed\n---\nbody\n",
            "app/.claude/commands/review.md": "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 carefully. All: $ARGUMENTS\n",
            "app/.claude/agents/tester.md": "---\nname: tester\ndescription: Writes tests\ntools: Read, Grep\nmodel: inherit\n---\nYou write tests.\n",
            "app/CLAUDE.local.md": "Local notes.\n",
            "app/.claude/settings.local.json": '{"permissions": {"allow": ["Bash(make test)"], "deny": ["Bash(rm:*)"]}}',
        },
    )
    write(tmp_path, {"outside.md": "SECRET outside the project\n"})
    write(tmp_path / "home", {".claude/CLAUDE.md": "User-wide rules.\n"})
    return repo / "app"


def test_nothing_is_read_without_setting_sources(project):
    settings = load_settings([], project)
    assert settings.memory == [] and settings.skills == {} and settings.commands == {}


def test_memory_files_load_in_order_with_imports_confined_to_the_project(project, caplog):
    caplog.set_level(logging.WARNING, "openagent.settings")
    settings = load_settings(["user", "project", "local"], project)
    names = [str(path).split("/repo/")[-1].split("/home/")[-1] for path, _ in settings.memory]
    assert names == [
        ".claude/CLAUDE.md",
        "CLAUDE.md",
        "AGENTS.md",
        "app/.claude/CLAUDE.md",
        "app/CLAUDE.local.md",
    ]
    root_rules = settings.memory[1][1]
    assert "Use four spaces." in root_rules and "SECRET" not in root_rules
    assert any("outside.md not imported: outside" in w for w in settings.warnings)
    assert any("docs/style.md:1: @missing.md not imported: no such file" in w for w in settings.warnings)
    prompt = settings.system_prompt("Base prompt.")
    assert prompt.startswith("Base prompt.") and "# Memory from" in prompt and "Root rules." in prompt


def test_malformed_front_matter_warns_with_file_and_line_and_the_rest_loads(project, caplog):
    caplog.set_level(logging.WARNING, "openagent.settings")
    settings = load_settings(["project"], project)
    assert list(settings.skills) == ["deploy"]
    warning = next(w for w in settings.warnings if "broken/SKILL.md" in w)
    assert "SKILL.md:2: malformed front matter" in warning
    assert warning in caplog.text


def test_skills_commands_agents_and_local_rules(project):
    settings = load_settings(["project", "local"], project)
    assert settings.skills["deploy"].description == "Deploy the app"
    assert settings.commands["review"].argument_hint == "FILE"
    assert settings.expand("/review a.py b.py") == "Review a.py carefully. All: a.py b.py\n"
    with pytest.raises(ValueError, match=r"unknown command /nope; known commands: /review"):
        settings.expand("/nope")
    tester = settings.agents["tester"]
    assert (tester.description, list(tester.tools), tester.prompt) == (
        "Writes tests",
        ["Read", "Grep"],
        "You write tests.\n",
    )
    # the deny rule applies from any folder; the allow rule only once the project is trusted
    assert settings.allowed_tools == [] and settings.disallowed_tools == ["Bash(rm:*)"]
    assert any("settings.local.json: permissions.allow" in line for line in settings.untrusted)
    trusted = load_settings(["project", "local"], project, trust_project=True)
    assert trusted.allowed_tools == ["Bash(make test)"] and trusted.disallowed_tools == ["Bash(rm:*)"]
    assert "deploy" in settings.system_prompt(None) and "Run make deploy." not in settings.system_prompt(None)


def test_selecting_skills_by_name(project):
    settings = load_settings(["project"], project, skills=["other"])
    assert settings.skills == {} and "skills not found: other" in settings.warnings[-1]


async def test_a_run_loads_a_skill_through_the_skill_tool(project):
    model = ScriptedModel([[tool_call("Skill", {"skill": "deploy"})], "Deploying."])
    messages = []
    options = AgentOptions(model=model, cwd=project, setting_sources=["project"], on_message=messages.append)
    result = await run("ship it", options)
    init = next(m for m in messages if isinstance(m, SystemMessage))
    assert init.data["skills"] == ["deploy"] and init.data["slash_commands"] == ["review"]
    assert init.data["agents"] == ["tester"] and len(init.data["memory_files"]) == 3
    assert {"Skill", "SlashCommand", "Task"} <= set(init.data["tools"])
    answer = next(m for m in result.messages if isinstance(m, UserMessage)).content[0]
    assert isinstance(answer, ToolResultBlock) and answer.content.startswith("Run make deploy.")
    assert "checklist.md" in answer.content
    assert "Deploy the app" in model.requests[0].system


async def test_a_slash_prompt_expands_and_an_unknown_one_lists_the_known(project):
    model = ScriptedModel(["Reviewed."])
    result = await run("/review main.py", AgentOptions(model=model, cwd=project, setting_sources=["project"]))
    assert result.text == "Reviewed." and model.requests[0].messages[0].content.startswith(
        "Review main.py carefully."
    )

    failed = await run(
        "/deploy-now", AgentOptions(model=ScriptedModel([]), cwd=project, setting_sources=["project"])
    )
    assert failed.is_error and "known commands: /review" in failed.result.result


async def test_code_agents_win_over_file_agents(project):
    from openagent.agents import AgentDefinition

    model = ScriptedModel(
        [
            [tool_call("Task", {"description": "t", "prompt": "go", "subagent_type": "tester"})],
            "child done",
            "parent done",
        ]
    )
    options = AgentOptions(
        model=model, cwd=project, setting_sources=["project"],
        agents={"tester": AgentDefinition(description="From code", prompt="You are the code tester.")},
    )  # fmt: skip
    await run("test", options)
    assert model.requests[1].system.startswith("You are the code tester.")


async def test_callbacks_see_every_message_and_failing_ones_are_only_logged(caplog):
    seen = []

    async def on_assistant(message):
        seen.append(("async", message.type))

    def broken(message):
        raise RuntimeError("callback bug")

    async with Client(AgentOptions(model=ScriptedModel(["hi"]))) as client:
        client.on(AssistantMessage, on_assistant)
        client.on("result", lambda m: seen.append(("sync", m.subtype)))
        client.on(None, broken)
        await client.query("x")
        messages = [m async for m in client.receive_response()]
    assert seen == [("async", "assistant"), ("sync", "success")]
    assert isinstance(messages[-1], ResultMessage)
    assert "a message callback failed" in caplog.text


async def test_client_status_follows_the_run():
    async with Client(AgentOptions(model=ScriptedModel(["hi", RuntimeError("boom")]))) as client:
        assert client.status == "idle"
        await client.query("x")
        async for message in client.receive_response():
            assert client.status == ("finished" if isinstance(message, ResultMessage) else "running")
        assert client.status == "finished"
        await client.query("y")
        with pytest.raises(Exception, match="boom"):
            async for _ in client.receive_response():
                pass
        assert client.status == "error"


async def test_a_warning_once_per_model_when_the_profile_cannot_call_tools(anyio_backend):
    from openagent import tool

    @tool
    def noop() -> str:
        """Nothing."""
        return ""

    profile = ProviderProfile(name="tiny", supports_tools=False)
    name = f"no-tools-{anyio_backend}"  # warnings are once per model and process
    with pytest.warns(UserWarning, match="cannot call tools natively.*tool_call_protocol='text'"):
        await run("x", AgentOptions(model=ScriptedModel(["a"], model=name, profile=profile), tools=[noop]))
    await run(
        "x", AgentOptions(model=ScriptedModel(["a"], model=name, profile=profile), tools=[noop])
    )  # silent


async def test_plugins_contribute_skills_and_project_files_override_them(project, monkeypatch):
    from openagent import settings as settings_module
    from openagent.hookspecs import hookimpl
    from openagent.plugins import load_plugins

    class SkillPlugin:
        @hookimpl
        def register_skills(self, register):
            register("review", "Review code carefully", "Read the diff, then list problems.")
            register("deploy", "Plugin deploy (overridden)", "never used")

    registry = load_plugins(extra=[("skilled", SkillPlugin())])
    assert registry.plugins["skilled"].skills == ["review", "deploy"]
    monkeypatch.setattr("openagent.plugins.registry", lambda: registry)
    loaded = settings_module.load_settings(["project"], project)
    assert loaded.skills["review"].description == "Review code carefully"
    assert loaded.skills["deploy"].description == "Deploy the app"  # the project's file wins

    model = ScriptedModel([[tool_call("Skill", {"skill": "review"})], "done"])
    result = await run("review it", AgentOptions(model=model, cwd=project, setting_sources=["project"]))
    answer = next(m for m in result.messages if isinstance(m, UserMessage)).content[0]
    assert answer.content == "Read the diff, then list problems."
