"""Run-time hooks: matchers, failures and timeouts, combining outputs, and every event and output field
through a real run (`openagent._query` over `ScriptedModel`).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import anyio
import pytest

from openagent import (
    AgentOptions,
    AssistantMessage,
    ConfigError,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    TextBlock,
    ToolError,
    ToolResultBlock,
    UserMessage,
    hookimpl,
    query,
    tool,
)
from openagent._agents import AgentDefinition
from openagent._hooks import HOOK_EVENTS, HookContext, merge_hooks, run_hooks
from openagent._models import ModelRequest
from openagent._permissions import PLAN_MODE_NOTE
from openagent._plugins import Registry, load_plugins
from openagent.testing import ScriptedModel, tool_call

pytestmark = pytest.mark.anyio

WIRED = "ask_tools" in {f.name for f in dataclasses.fields(AgentOptions)}
needs_wiring = pytest.mark.xfail(
    not WIRED,
    strict=True,
    reason="needs the loop/options/hookspecs/plugins wiring written in the hooks-and-permissions report",
)


class Recorder:
    """A hook callback that records its inputs and answers with ``output``."""

    def __init__(self, output: dict[str, Any] | None = None) -> None:
        self.calls: list[tuple[dict[str, Any], str | None]] = []
        self.output = output or {}

    async def __call__(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> dict[str, Any]:
        self.calls.append((dict(data), tool_use_id))
        return self.output

    @property
    def events(self) -> list[str]:
        return [data["hook_event_name"] for data, _ in self.calls]

    def first(self, event: str) -> dict[str, Any]:
        return next(data for data, _ in self.calls if data["hook_event_name"] == event)


def specific(event: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


# --- matchers and run_hooks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "name", "hit"),
    [
        (None, "Bash", True),
        ("*", "Bash", True),
        ("", "Bash", True),
        ("Bash", "Bash", True),
        ("Bash", "BashX", False),
        ("Write|Edit", "Edit", True),
        ("Write|Edit", "Read", False),
        ("mcp__srv__.*", "mcp__srv__query", True),
        ("mcp__srv__.*", "mcp__other__query", False),
        ("Bash", None, True),
    ],
)
def test_matchers(matcher: str | None, name: str | None, hit: bool) -> None:
    assert HookMatcher(matcher=matcher).matches(name) is hit


def test_an_invalid_matcher_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a valid regex"):
        HookMatcher(matcher="Write(")


async def test_run_hooks_filters_by_matcher_and_keeps_order() -> None:
    first, second, other = Recorder(), Recorder(), Recorder()
    hooks = {"PreToolUse": [HookMatcher("Bash", [first, second]), HookMatcher("Read", [other])]}
    outcome = await run_hooks(hooks, "PreToolUse", {"tool_name": "Bash"}, tool_use_id="t1", target="Bash")
    assert not outcome.is_blocked
    assert first.calls == second.calls == [({"hook_event_name": "PreToolUse", "tool_name": "Bash"}, "t1")]
    assert other.calls == []
    assert (await run_hooks(None, "Stop", {})).continue_


async def test_outputs_combine() -> None:
    hooks = {
        "PreToolUse": [
            HookMatcher(
                hooks=[
                    Recorder(specific("PreToolUse", permissionDecision="allow", updatedInput={"n": 1})),
                    Recorder({"decision": "block", "reason": "no", "systemMessage": "careful"}),
                    Recorder(
                        specific("PreToolUse", permissionDecision="deny", permissionDecisionReason="nope")
                    ),
                    Recorder(specific("PreToolUse", permissionDecision="ask", additionalContext="ctx")),
                    Recorder({"continue_": False, "stopReason": "halt"}),
                ]
            )
        ]
    }
    outcome = await run_hooks(hooks, "PreToolUse", {"tool_input": {"n": 0}})
    assert outcome.permission_decision == "deny" and outcome.permission_decision_reason == "nope"
    assert outcome.updated_input == {"n": 1}
    assert outcome.block_reason == "no" and outcome.system_messages == ["careful"]
    assert outcome.additional_context == ["ctx"]
    assert not outcome.continue_ and outcome.stop_reason == "halt" and outcome.is_blocked


async def test_a_later_hook_sees_the_rewritten_input() -> None:
    second = Recorder()
    hooks = {
        "PreToolUse": [HookMatcher(hooks=[Recorder(specific("PreToolUse", updatedInput={"n": 2})), second])]
    }
    await run_hooks(hooks, "PreToolUse", {"tool_input": {"n": 1}})
    assert second.calls[0][0]["tool_input"] == {"n": 2}


async def test_deprecated_approve_and_plain_continue_keys() -> None:
    hooks = {"PreToolUse": [HookMatcher(hooks=[Recorder({"decision": "approve", "continue": False})])]}
    outcome = await run_hooks(hooks, "PreToolUse", {})
    assert outcome.permission_decision == "allow" and not outcome.continue_


async def test_sync_callbacks_work() -> None:
    hooks = {"Stop": [HookMatcher(hooks=[lambda data, tid, ctx: {"decision": "block", "reason": "more"}])]}  # type: ignore[list-item]
    assert (await run_hooks(hooks, "Stop", {})).block_reason == "more"


async def _raises(data: dict[str, Any], tool_use_id: str | None, ctx: HookContext) -> dict[str, Any]:
    raise RuntimeError("boom")


async def _hangs(data: dict[str, Any], tool_use_id: str | None, ctx: HookContext) -> dict[str, Any]:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


async def _not_a_dict(data: dict[str, Any], tool_use_id: str | None, ctx: HookContext) -> Any:
    return "allow"


@pytest.mark.parametrize(
    ("callback", "problem"),
    [
        (_raises, "raised RuntimeError: boom"),
        (_hangs, "timed out after 0.05 s"),
        (_not_a_dict, "returned str"),
    ],
    ids=["raises", "times-out", "not-a-dict"],
)
async def test_a_failing_hook_is_logged_and_skipped_or_blocks(
    callback: Any, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    after = Recorder({"systemMessage": "still ran"})
    skip = {"PreToolUse": [HookMatcher(hooks=[callback, after], timeout=0.05)]}
    with caplog.at_level(logging.INFO, logger="openagent.hooks"):
        outcome = await run_hooks(skip, "PreToolUse", {})
    assert not outcome.is_blocked and len(after.calls) == 1
    assert any(problem in r.getMessage() for r in caplog.records)
    assert any("still ran" in r.getMessage() for r in caplog.records)  # systemMessage reaches the user's log
    block = {"PreToolUse": [HookMatcher(hooks=[callback], timeout=0.05, on_error="block")]}
    outcome = await run_hooks(block, "PreToolUse", {})
    assert outcome.block_reason is not None and problem in outcome.block_reason
    stop = {"Stop": [HookMatcher(hooks=[callback], timeout=0.05, on_error="block")]}
    assert (await run_hooks(stop, "Stop", {})).block_reason is None  # blocking a Stop would mean "go on"


def test_merge_hooks() -> None:
    a, b = HookMatcher("Bash"), HookMatcher("Read")
    assert merge_hooks({"PreToolUse": [a]}, None, {"PreToolUse": [b], "Stop": [a]}) == {
        "PreToolUse": [a, b],
        "Stop": [a],
    }
    assert merge_hooks({"Stop": a}) == {"Stop": [a]}  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="unknown hook event 'PreToolUSE'"):
        merge_hooks({"PreToolUSE": [a]})
    with pytest.raises(ConfigError, match="must hold HookMatcher"):
        merge_hooks({"Stop": [lambda *a: {}]})  # type: ignore[list-item]


# --- through a real run -------------------------------------------------------------------------------------

seen: list[dict[str, Any]] = []


@tool
def echo(text: str) -> str:
    """Echo the text."""
    seen.append({"text": text})
    return f"echo: {text}"


@tool
def broken(text: str) -> str:
    """Always fails."""
    raise ToolError(f"cannot handle {text}")


@tool(requires_permission=True)
def guarded(text: str) -> str:
    """Needs permission."""
    seen.append({"guarded": text})
    return f"guarded: {text}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    seen.clear()


async def run(
    turns: list[Any], hooks: dict[str, Any], prompt: str = "go", **options: Any
) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel(turns)
    opts = AgentOptions(
        model=model, tools=[echo, broken, guarded], hooks=hooks, persist_session=False, **options
    )
    return [m async for m in query(prompt=prompt, options=opts)], model


def results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        b
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list) and m.parent_tool_use_id is None
        for b in m.content
    ]


BASE = {"hook_event_name", "session_id", "cwd", "transcript_path"}
KEYS = {
    "SessionStart": {"source"},
    "UserPromptSubmit": {"prompt"},
    "PreModelRequest": {"request"},
    "PostModelResponse": {"response"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PostToolUse": {"tool_name", "tool_input", "tool_use_id", "tool_response"},
    "PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "tool_response"},
    "Stop": {"stop_hook_active"},
    "SessionEnd": set(),
}


async def test_every_loop_event_fires_with_its_input() -> None:
    rec = Recorder()
    hooks = {event: [HookMatcher(hooks=[rec])] for event in HOOK_EVENTS}
    turns = [
        [tool_call("echo", {"text": "hi"}, id="c1"), tool_call("broken", {"text": "x"}, id="c2")],
        "done",
    ]
    messages, model = await run(turns, hooks, prompt="hello", parallel_tool_calls=False)
    assert rec.events == [
        "SessionStart", "UserPromptSubmit",
        "PreModelRequest", "PostModelResponse",
        "PreToolUse", "PostToolUse", "PreToolUse", "PostToolUseFailure",
        "PreModelRequest", "PostModelResponse", "Stop", "SessionEnd",
    ]  # fmt: skip
    for event, keys in KEYS.items():
        assert BASE | keys <= set(rec.first(event)), event
    session = messages[-1].session_id
    assert {data["session_id"] for data, _ in rec.calls} == {session}
    assert rec.first("SessionStart")["source"] == "startup"
    assert rec.first("UserPromptSubmit")["prompt"] == "hello"
    assert rec.first("PreModelRequest")["request"] is model.requests[0]
    assert isinstance(rec.first("PostModelResponse")["response"], AssistantMessage)
    pre = rec.first("PreToolUse")
    assert (pre["tool_name"], pre["tool_input"], pre["tool_use_id"]) == ("echo", {"text": "hi"}, "c1")
    assert rec.first("PostToolUse")["tool_response"] == "echo: hi"
    assert rec.first("PostToolUseFailure")["tool_response"] == "cannot handle x"
    assert rec.first("Stop")["stop_hook_active"] is False
    assert [tid for data, tid in rec.calls if data["hook_event_name"].endswith("ToolUse")] == [
        "c1",
        "c1",
        "c2",
    ]


@needs_wiring
async def test_every_input_carries_the_rest_of_the_claude_keys() -> None:
    rec = Recorder()
    hooks = {event: [HookMatcher(hooks=[rec])] for event in HOOK_EVENTS}
    turns = [[tool_call("broken", {"text": "x"}), tool_call("guarded", {"text": "y"})], "done"]
    await run(turns, hooks, can_use_tool=lambda n, i, c: PermissionResultAllow())
    assert all(data["permission_mode"] == "default" for data, _ in rec.calls)
    assert rec.first("PostToolUseFailure")["error"] == "cannot handle x"
    assert rec.first("Stop")["last_assistant_message"] == "done"
    assert rec.first("SessionEnd")["reason"] == "other"
    note = rec.first("Notification")
    assert note["notification_type"] == "permission_prompt" and "guarded" in note["message"]


async def test_subagent_events() -> None:
    rec = Recorder()
    hooks = {"SubagentStart": [HookMatcher(hooks=[rec])], "SubagentStop": [HookMatcher(hooks=[rec])]}
    turns = [[tool_call("Task", {"description": "d", "prompt": "sub", "subagent_type": "helper"}, id="t1")],
             "child answer", "final"]  # fmt: skip
    messages, _ = await run(turns, hooks, agents={"helper": AgentDefinition("Helps", "You help.")})
    assert rec.events == ["SubagentStart", "SubagentStop"]
    start, stop = rec.first("SubagentStart"), rec.first("SubagentStop")
    assert (start["agent_id"], start["agent_type"]) == ("t1", "helper")
    assert {"session_id", "cwd"} <= set(start)
    assert stop["last_assistant_message"] == "child answer" and stop["stop_hook_active"] is False
    assert results(messages)[0].content == "child answer"


async def test_subagent_start_can_add_context_or_block() -> None:
    context = {"SubagentStart": [HookMatcher(hooks=[Recorder({"additionalContext": "be brief"})])]}
    turns = [
        [tool_call("Task", {"description": "d", "prompt": "sub", "subagent_type": "helper"})],
        "ok",
        "end",
    ]
    _, model = await run(turns, context, agents={"helper": AgentDefinition("Helps", "You help.")})
    assert model.requests[1].messages[-1].content == "sub\n\nbe brief"
    block = {"SubagentStart": [HookMatcher(hooks=[Recorder({"decision": "block", "reason": "no agents"})])]}
    turns = [[tool_call("Task", {"description": "d", "prompt": "sub", "subagent_type": "helper"})], "end"]
    messages, _ = await run(turns, block, agents={"helper": AgentDefinition("Helps", "You help.")})
    assert results(messages)[0].is_error and results(messages)[0].content == "no agents"


# --- each output field, end to end -------------------------------------------------------------------------


async def test_user_prompt_submit_additional_context_reaches_the_model() -> None:
    hooks = {
        "UserPromptSubmit": [
            HookMatcher(hooks=[Recorder(specific("UserPromptSubmit", additionalContext="today is Sunday"))])
        ]
    }
    _, model = await run(["ok"], hooks, prompt="what day is it?")
    assert model.requests[0].messages[-1].content == "what day is it?\n\ntoday is Sunday"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ({"decision": "block", "reason": "no secrets"}, "no secrets"),
        ({"continue_": False, "stopReason": "halt"}, "halt"),
    ],
    ids=["block", "continue-false"],
)
async def test_user_prompt_submit_can_block(output: dict[str, Any], reason: str) -> None:
    messages, model = await run(["never"], {"UserPromptSubmit": [HookMatcher(hooks=[Recorder(output)])]})
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error and result.result == reason
    assert model.requests == []


async def test_pre_tool_use_block_and_continue() -> None:
    block = {"PreToolUse": [HookMatcher("echo", [Recorder({"decision": "block", "reason": "not now"})])]}
    messages, model = await run([[tool_call("echo", {"text": "a"})], "end"], block)
    assert results(messages)[0].content == "not now" and results(messages)[0].is_error and seen == []
    assert len(model.requests) == 2  # the model hears why and goes on
    halt = {"PreToolUse": [HookMatcher(hooks=[Recorder({"continue_": False, "stopReason": "stop it"})])]}
    messages, model = await run([[tool_call("echo", {"text": "a"})], "never"], halt)
    assert results(messages)[0].content == "stop it" and len(model.requests) == 1
    assert isinstance(messages[-1], ResultMessage)


async def test_pre_tool_use_permission_decisions() -> None:
    deny = Recorder(
        specific("PreToolUse", permissionDecision="deny", permissionDecisionReason="policy says no")
    )
    messages, _ = await run(
        [[tool_call("echo", {"text": "a"})], "end"], {"PreToolUse": [HookMatcher(hooks=[deny])]}
    )
    assert results(messages)[0].content == "policy says no" and seen == []
    allow = Recorder(specific("PreToolUse", permissionDecision="allow"))
    messages, _ = await run(
        [[tool_call("guarded", {"text": "b"})], "end"], {"PreToolUse": [HookMatcher(hooks=[allow])]}
    )
    assert results(messages)[0].content == "guarded: b"


async def test_pre_tool_use_updated_input() -> None:
    rewrite = Recorder(specific("PreToolUse", updatedInput={"text": "rewritten"}))
    post = Recorder()
    hooks = {"PreToolUse": [HookMatcher(hooks=[rewrite])], "PostToolUse": [HookMatcher(hooks=[post])]}
    messages, _ = await run([[tool_call("echo", {"text": "original"})], "end"], hooks)
    assert seen == [{"text": "rewritten"}] and results(messages)[0].content == "echo: rewritten"
    assert post.calls[0][0]["tool_input"] == {"text": "rewritten"}


@needs_wiring
async def test_pre_tool_use_additional_context_reaches_the_model() -> None:
    hooks = {
        "PreToolUse": [HookMatcher(hooks=[Recorder(specific("PreToolUse", additionalContext="note this"))])]
    }
    messages, _ = await run([[tool_call("echo", {"text": "a"})], "end"], hooks)
    assert results(messages)[0].content == "echo: a\n\nnote this"


async def test_post_tool_use_outputs() -> None:
    replace = Recorder(specific("PostToolUse", updatedToolOutput="[redacted]"))
    messages, model = await run(
        [[tool_call("echo", {"text": "secret"})], "end"], {"PostToolUse": [HookMatcher(hooks=[replace])]}
    )
    assert results(messages)[0].content == "[redacted]"
    sent = model.requests[1].messages[-1]
    assert isinstance(sent, UserMessage) and sent.content[0].content == "[redacted]"  # type: ignore[union-attr]
    notes = Recorder(
        {
            "decision": "block",
            "reason": "check the output",
            **specific("PostToolUse", additionalContext="lint ok"),
        }
    )
    messages, _ = await run(
        [[tool_call("echo", {"text": "a"})], "end"], {"PostToolUse": [HookMatcher(hooks=[notes])]}
    )
    assert results(messages)[0].content == "echo: a\n\nlint ok\n\ncheck the output"
    halt = Recorder({"continue_": False})
    messages, model = await run(
        [[tool_call("echo", {"text": "a"})], "never"], {"PostToolUse": [HookMatcher(hooks=[halt])]}
    )
    assert len(model.requests) == 1 and results(messages)[0].content == "echo: a"


async def test_post_tool_use_failure_fires_for_failures_only() -> None:
    failure = Recorder(specific("PostToolUseFailure", additionalContext="try another text"))
    success = Recorder()
    hooks = {
        "PostToolUseFailure": [HookMatcher(hooks=[failure])],
        "PostToolUse": [HookMatcher(hooks=[success])],
    }
    messages, _ = await run(
        [[tool_call("broken", {"text": "a"}), tool_call("echo", {"text": "b"})], "end"], hooks
    )
    assert results(messages)[0].content == "cannot handle a\n\ntry another text"
    assert [d["tool_name"] for d, _ in failure.calls] == ["broken"]
    assert [d["tool_name"] for d, _ in success.calls] == ["echo"]


async def test_stop_hook_can_keep_the_agent_going_once() -> None:
    calls: list[bool] = []

    async def not_yet(data: dict[str, Any], tid: str | None, ctx: HookContext) -> dict[str, Any]:
        calls.append(data["stop_hook_active"])
        return {} if data["stop_hook_active"] else {"decision": "block", "reason": "run the tests first"}

    messages, model = await run(["first answer", "tests pass"], {"Stop": [HookMatcher(hooks=[not_yet])]})
    assert calls == [False, True]
    assert model.requests[1].messages[-1].content == "run the tests first"
    assert messages[-1].result == "tests pass"


async def test_model_io_hooks_observe_each_turn() -> None:
    requests, responses = Recorder(), Recorder()
    hooks = {
        "PreModelRequest": [HookMatcher(hooks=[requests])],
        "PostModelResponse": [HookMatcher(hooks=[responses])],
    }
    _, model = await run([[tool_call("echo", {"text": "a"})], "end"], hooks)
    assert [d["request"] for d, _ in requests.calls] == model.requests
    assert [d["response"].stop_reason for d, _ in responses.calls] == ["tool_use", "end_turn"]


@needs_wiring
async def test_model_io_hooks_can_rewrite() -> None:
    async def add_system(data: dict[str, Any], tid: str | None, ctx: HookContext) -> dict[str, Any]:
        request: ModelRequest = data["request"]
        return specific("PreModelRequest", updatedRequest=dataclasses.replace(request, system="be terse"))

    async def censor(data: dict[str, Any], tid: str | None, ctx: HookContext) -> dict[str, Any]:
        response = data["response"].model_copy(update={"content": [TextBlock(text="[censored]")]})
        return specific("PostModelResponse", updatedResponse=response)

    hooks = {
        "PreModelRequest": [HookMatcher(hooks=[add_system])],
        "PostModelResponse": [HookMatcher(hooks=[censor])],
    }
    messages, model = await run(["rude words"], hooks)
    assert model.requests[0].system == "be terse"
    assert messages[-1].result == "[censored]"


@needs_wiring
async def test_session_start_context_and_plan_mode_note_reach_the_model() -> None:
    hooks = {
        "SessionStart": [
            HookMatcher(hooks=[Recorder(specific("SessionStart", additionalContext="repo: demo"))])
        ]
    }
    _, model = await run(["ok"], hooks, prompt="hi", permission_mode="plan")
    assert model.requests[0].messages[-1].content == "hi\n\nrepo: demo"
    assert PLAN_MODE_NOTE in (model.requests[0].system or "")


@needs_wiring
async def test_ask_rules_and_hidden_tools_through_options() -> None:
    options = {"allowed_tools": ["echo"], "ask_tools": ["echo"], "disallowed_tools": ["broken"]}
    messages, model = await run([[tool_call("echo", {"text": "a"})], "end"], {}, **options)
    assert "needs permission" in str(results(messages)[0].content)
    assert [t.name for t in model.requests[0].tools] == ["echo", "guarded"]


async def test_a_failing_hook_does_not_lose_the_run() -> None:
    hooks = {event: [HookMatcher(hooks=[_raises])] for event in HOOK_EVENTS}
    messages, _ = await run([[tool_call("echo", {"text": "a"})], "end"], hooks)
    assert results(messages)[0].content == "echo: a" and messages[-1].subtype == "success"
    seen.clear()
    blocking = {"PreToolUse": [HookMatcher(hooks=[_hangs], timeout=0.05, on_error="block")]}
    messages, _ = await run([[tool_call("echo", {"text": "a"})], "end"], blocking)
    assert results(messages)[0].is_error and "timed out" in str(results(messages)[0].content) and seen == []


class _HookPlugin:
    """A plugin contributing a PreToolUse hook that every run gets."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @hookimpl
    def register_hooks(self, register: Any) -> None:
        register("PreToolUse", HookMatcher("echo", [self.recorder]))


@pytest.mark.xfail(
    "hooks" not in {f.name for f in dataclasses.fields(Registry)},
    strict=True,
    reason="needs the register_hooks hookspec and Registry.hooks",
)
async def test_plugins_contribute_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    from openagent import _runtime

    plugin_hook = Recorder(specific("PreToolUse", updatedInput={"text": "from plugin"}))
    registry = load_plugins(extra=[("hooky", _HookPlugin(plugin_hook))])
    assert registry.plugins["hooky"].error is None
    monkeypatch.setattr(_runtime, "registry", lambda: registry)
    own = Recorder()
    messages, _ = await run(
        [[tool_call("echo", {"text": "a"})], "end"], {"PreToolUse": [HookMatcher(hooks=[own])]}
    )
    assert len(plugin_hook.calls) == 1 and own.calls[0][0]["tool_input"] == {"text": "from plugin"}
    assert results(messages)[0].content == "echo: from plugin"
