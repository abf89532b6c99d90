"""Hostile input never crashes or hangs the run: catastrophic regexes, tool arguments built to break the
parser, the validator or the session file, and secrets that must not show in ``repr()`` or errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from attack import attack, results, tree

from openagent import AgentOptions, ToolContext, query, tool
from openagent.errors import ProviderError, masked
from openagent.sessions import JSONLSessionStore
from openagent.testing import ScriptedModel, tool_call
from openagent_tools import grep

pytestmark = pytest.mark.anyio

KEY = "sk-live-0123456789abcdef0123"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tree(
        tmp_path / "project", {"long.txt": "a" * 200_000 + "!\n", "code.py": "def main():\n    pass\n"}
    )


# --- Grep -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern", ["^(a+)+$", "(a|a)*b", "(a*)*$", "(?:a|aa)+c", "^(([a-z])+.)+[A-Z]([a-z])+$", "(x+x+)+y"]
)
async def test_a_catastrophic_pattern_on_a_long_line_returns_within_the_deadline(
    project: Path, pattern: str
) -> None:
    calls = [("Grep", {"pattern": pattern, "output_mode": "count"})] * 3
    messages = await attack(calls, seconds=10, cwd=project, tools=[grep])  # backtracking engines: hours
    assert [r.is_error for r in results(messages)] == [None] * 3


@pytest.mark.parametrize("pattern", [r"(?<=a)b", r"(a)\1", "(?=x)"])
async def test_patterns_re2_cannot_run_are_a_clear_error(project: Path, pattern: str) -> None:
    (result,) = results(await attack([("Grep", {"pattern": pattern})], cwd=project, tools=[grep]))
    assert result.is_error and "RE2 syntax" in str(result.content)


async def test_control_grep_still_finds_things(project: Path) -> None:
    (result,) = results(
        await attack(
            [("Grep", {"pattern": r"def \w+\(", "output_mode": "content"})], cwd=project, tools=[grep]
        )
    )
    assert result.content == "code.py:1:def main():"


# --- tool arguments -------------------------------------------------------------------------------------------


@tool
def record(value: Any = None, count: int = 0) -> str:
    """Record something."""
    return "recorded"


DEEP = '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}"
HOSTILE_ARGUMENTS = {
    "deep-json": DEEP,
    "deep-but-parsable": '{"value": ' + "[" * 500 + "]" * 500 + "}",
    "lone-surrogate": '{"value": "\\ud800"}',
    "lone-surrogate-key": '{"\\udfff": 1}',
    "huge-invalid": json.dumps({"count": "9" * 5_000_000}),
    "huge-extra": json.dumps({"x" * 1000: "y" * 5_000_000}),
    "not-an-object": "[" * 50_000,
    "nul-and-garbage": '{"value": "\\u0000\x00"}' + "\x00" * 10,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_ARGUMENTS))
async def test_hostile_arguments_become_an_error_result_and_the_run_goes_on(
    tmp_path: Path, name: str
) -> None:
    model = ScriptedModel([[tool_call("record", HOSTILE_ARGUMENTS[name])], "still here"])
    store = JSONLSessionStore(tmp_path / "sessions")
    options = AgentOptions(model=model, tools=[record], cwd=tmp_path, session_store=store)
    with anyio.fail_after(30):
        messages = [m async for m in query(prompt="go", options=options)]
        (result,) = results(messages)
        assert messages[-1].subtype == "success" and messages[-1].result == "still here"
        assert result.is_error and len(str(result.content)) <= record.max_result_chars + 200
        reloaded = await JSONLSessionStore(tmp_path / "sessions").load(
            {"project_key": _project(tmp_path), "session_id": messages[-1].session_id}
        )
    assert reloaded is not None  # every message was persisted (the prompt too), the bad call kept as data
    messages_kept = [e["type"] for e in reloaded if "message" in e or e["type"] in ("system", "result")]
    assert messages_kept == ["system", "user", "assistant", "user", "assistant", "result"]


async def test_a_huge_tool_name_is_an_error_result_of_bounded_size(tmp_path: Path) -> None:
    model = ScriptedModel([[tool_call("x" * 5_000_000, {})], "ok"])
    with anyio.fail_after(30):
        messages = [
            m
            async for m in query(
                prompt="go", options=AgentOptions(model=model, tools=[record], persist_session=False)
            )
        ]
    (result,) = results(messages)
    assert result.is_error and len(str(result.content)) < 2_000


def _project(cwd: Path) -> str:
    from openagent.sessions import project_key_for

    return project_key_for(cwd)


# --- secrets --------------------------------------------------------------------------------------------------


def test_no_secret_in_the_repr_of_options_or_a_tool_context() -> None:
    options = AgentOptions(
        model="openai:m", api_key=KEY, base_url="https://user:pa55word@proxy.example/v1",
        env={"GITHUB_TOKEN": KEY, "PLAIN": "visible"},
        mcp_servers={"s": {"type": "http", "url": "https://x.example", "headers": {"Authorization": f"Bearer {KEY}"}}},
        extra_body={"api_key": KEY}, session_store="redis://:r3dispw@cache.example:6379/0",
    )  # fmt: skip
    context = ToolContext(tool_use_id="t", session_id="s", cwd="/", options=options)
    for shown in (repr(options), repr(context), str(options)):
        assert [s for s in (KEY, KEY[-12:], "pa55word", "r3dispw") if s in shown] == []
        assert "visible" in shown and "proxy.example" in shown


@pytest.mark.parametrize("plugin", ["openai", "anthropic"])
def test_no_key_in_the_repr_of_a_provider(plugin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(f"openagent_{plugin}")
    monkeypatch.setenv("OPENAGENT_PLUGINS", plugin)
    from openagent.models import resolve_provider

    provider, _ = resolve_provider(
        AgentOptions(model=f"{plugin}:m", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    )
    assert KEY not in repr(provider) and KEY not in str(provider)


def test_credentials_in_urls_are_masked_in_errors() -> None:
    error = ProviderError(
        "cannot reach https://bob:hunter2@llm.example/v1: ConnectError",
        provider="openai", body="redirected to http://admin:s3cret@10.0.0.1/",
    )  # fmt: skip
    assert "hunter2" not in str(error) and "s3cret" not in (error.body or "")
    assert "https://****@llm.example/v1" in str(error)
    assert masked({"Authorization": "Bearer abc123456789", "nested": [{"token": "t0k3n-123456"}]}) == {
        "Authorization": "****6789", "nested": [{"token": "****3456"}],
    }  # fmt: skip
