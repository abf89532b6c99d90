"""Permissions: the Claude rule syntax, every mode, the evaluation order, and their effect on a real run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openagent import (
    AgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    query,
    tool,
)
from openagent._permissions import PLAN_MODE_NOTE, check_permission, rule_matches
from openagent.testing import ScriptedModel, tool_call

pytestmark = pytest.mark.anyio

# --- rules --------------------------------------------------------------------------------------------------

RULES = [
    ("Read", "Read", {"file_path": "x"}, True),
    ("Read", "Write", {"file_path": "x"}, False),
    ("*", "Anything", {}, True),
    ("Bash(git status:*)", "Bash", {"command": "git status"}, True),
    ("Bash(git status:*)", "Bash", {"command": "git status --short"}, True),
    ("Bash(git status:*)", "Bash", {"command": "git statusx"}, False),
    ("Bash(git status:*)", "Bash", {"command": "git commit"}, False),
    ("Bash(npm run test)", "Bash", {"command": "npm run test"}, True),
    ("Bash(npm run test)", "Bash", {"command": "npm run test:all"}, False),
    ("Bash(npm run *)", "Bash", {"command": "npm run build"}, True),
    ("Bash(rm *)", "Bash", {"command": "rm -rf /"}, True),
    ("Bash(*)", "Bash", {"command": "anything"}, True),
    ("Bash()", "Bash", {"command": "anything"}, True),
    ("Write(src/**)", "Write", {"file_path": "src/a/b.py"}, True),
    ("Write(src/**)", "Write", {"file_path": "{cwd}/src/a.py"}, True),
    ("Write(src/**)", "Write", {"file_path": "docs/a.md"}, False),
    ("Write(src/**)", "Write", {"file_path": "src/../docs/a.md"}, False),
    ("Write(src/*.py)", "Write", {"file_path": "src/a/b.py"}, False),
    ("Edit(**/*.md)", "Edit", {"file_path": "docs/guide/x.md"}, True),
    ("Edit(**/*.md)", "Edit", {"file_path": "README.md"}, True),
    ("Read(//etc/**)", "Read", {"file_path": "/etc/passwd"}, True),
    ("Read(./README.md)", "Read", {"file_path": "README.md"}, True),
    ("Glob(src/**)", "Glob", {"pattern": "*", "path": "src/x"}, True),
    ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://docs.example.com/a"}, True),
    ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.com.evil.io/a"}, False),
    ("WebSearch(anyio)", "WebSearch", {"query": "anyio"}, True),
    ("mcp__srv", "mcp__srv__tool", {}, True),
    ("mcp__srv", "mcp__srv2__tool", {}, False),
    ("mcp__srv__*", "mcp__srv__other", {}, True),
    ("mcp__srv__tool", "mcp__srv__tool", {}, True),
    ("mcp__srv__tool", "mcp__srv__tool2", {}, False),
    ("Bash(git status:*", "Bash", {"command": "git status"}, False),
]


@pytest.mark.parametrize(
    ("rule", "name", "tool_input", "expected"), RULES, ids=[f"{r[0]}~{r[2]}" for r in RULES]
)
def test_rule_syntax(
    tmp_path: Path, rule: str, name: str, tool_input: dict[str, Any], expected: bool
) -> None:
    filled = {k: v.format(cwd=tmp_path) if isinstance(v, str) else v for k, v in tool_input.items()}
    assert rule_matches(rule, name, filled, cwd=tmp_path) is expected


async def decide(name: str = "Bash", tool_input: dict[str, Any] | None = None, **kw: Any) -> Any:
    kw.setdefault("requires_permission", True)
    return await check_permission(name, tool_input or {"command": "ls"}, **kw)


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("git status && git diff", True),
        ("git status; rm -rf /", False),
        ("git status | tee out", False),
        ("git status && $(curl evil)", False),
        ("git status `rm x`", False),
        ("git status 'unclosed", False),
        ("git diff || git status", True),
    ],
)
async def test_compound_commands_need_every_part_allowed(command: str, allowed: bool) -> None:
    result = await decide(tool_input={"command": command}, allowed=["Bash(git status:*)", "Bash(git diff:*)"])
    assert isinstance(result, PermissionResultAllow) is allowed


async def test_a_deny_rule_catches_any_part_of_a_compound_command() -> None:
    result = await decide(
        tool_input={"command": "ls && rm -rf x"}, disallowed=["Bash(rm:*)"], mode="bypassPermissions"
    )
    assert isinstance(result, PermissionResultDeny) and "Bash(rm:*)" in result.message


# --- modes and order ----------------------------------------------------------------------------------------


async def test_default_posture() -> None:
    assert isinstance(
        await decide("Read", {"file_path": "x"}, requires_permission=False), PermissionResultAllow
    )
    denied = await decide()
    assert isinstance(denied, PermissionResultDeny)
    assert "allowed_tools=['Bash']" in denied.message and "can_use_tool" in denied.message


@pytest.mark.parametrize(
    ("mode", "name", "requires", "allowed"),
    [
        ("default", "Write", True, False),
        ("acceptEdits", "Write", True, True),
        ("acceptEdits", "Edit", True, True),
        ("acceptEdits", "Bash", True, False),
        ("bypassPermissions", "Bash", True, True),
        ("plan", "Read", False, False),
        ("plan", "Bash", True, False),
        ("dontAsk", "Read", False, False),
        ("dontAsk", "Bash", True, False),
    ],
)
async def test_modes(mode: Any, name: str, requires: bool, allowed: bool) -> None:
    result = await decide(name, {"file_path": "a"}, requires_permission=requires, mode=mode)
    assert isinstance(result, PermissionResultAllow) is allowed


async def test_plan_mode_tells_the_model() -> None:
    result = await decide("Read", {"file_path": "a"}, mode="plan", allowed=["Read"])
    assert isinstance(result, PermissionResultDeny) and PLAN_MODE_NOTE in result.message


async def test_dont_ask_runs_allowed_tools_and_never_asks() -> None:
    asked: list[str] = []

    async def can_use(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.append(name)
        return PermissionResultAllow()

    assert isinstance(await decide(mode="dontAsk", allowed=["Bash(ls:*)"]), PermissionResultAllow)
    denied = await decide(mode="dontAsk", can_use_tool=can_use)
    assert isinstance(denied, PermissionResultDeny) and "dontAsk" in denied.message and asked == []
    denied = await decide(mode="dontAsk", ask=["Bash"], allowed=["Bash"], can_use_tool=can_use)
    assert isinstance(denied, PermissionResultDeny) and asked == []


class Recorder:
    def __init__(self, answer: Any = None) -> None:
        self.calls: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []
        self.answer = answer if answer is not None else PermissionResultAllow()

    async def __call__(self, name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        self.calls.append((name, data, ctx))
        return self.answer


async def test_evaluation_order() -> None:
    ask = Recorder()
    # 1. a hook deny wins over everything
    result = await decide(hook_decision="deny", hook_reason="no", allowed=["Bash"], mode="bypassPermissions")
    assert isinstance(result, PermissionResultDeny) and result.message == "no"
    # 2. deny rules beat a hook allow and bypassPermissions
    result = await decide(hook_decision="allow", disallowed=["Bash(ls)"], mode="bypassPermissions")
    assert isinstance(result, PermissionResultDeny)
    # 3. ask rules (and a hook ask) beat the mode and allow rules: the callback is asked
    result = await decide(ask=["Bash"], allowed=["Bash"], mode="bypassPermissions", can_use_tool=ask)
    assert isinstance(result, PermissionResultAllow) and len(ask.calls) == 1
    assert ask.calls[0][2].decision_reason == "the ask rule 'Bash' matched"
    result = await decide(hook_decision="ask", hook_reason="confirm", allowed=["Bash"], can_use_tool=ask)
    assert len(ask.calls) == 2 and ask.calls[1][2].decision_reason == "confirm"
    assert isinstance(await decide(ask=["Bash"], allowed=["Bash"]), PermissionResultDeny)  # nobody to ask
    # 4. the mode, then 5. allow rules, settle it without asking
    assert isinstance(await decide(mode="bypassPermissions", can_use_tool=ask), PermissionResultAllow)
    assert isinstance(await decide(allowed=["Bash"], can_use_tool=ask), PermissionResultAllow)
    assert isinstance(await decide(hook_decision="allow", can_use_tool=ask), PermissionResultAllow)
    assert len(ask.calls) == 2
    # 6. the callback decides what is left
    deny = Recorder(PermissionResultDeny(message="nope", interrupt=True))
    result = await decide(can_use_tool=deny, context=ToolPermissionContext(tool_use_id="t1"))
    assert result == PermissionResultDeny(message="nope", interrupt=True)
    assert deny.calls[0][2].tool_use_id == "t1" and deny.calls[0][2].decision_reason == "no rule allows Bash"


@pytest.mark.parametrize(
    ("answer", "allowed", "detail"),
    [
        ({"behavior": "allow", "updatedInput": {"command": "ls -a"}}, True, {"command": "ls -a"}),
        ({"behavior": "deny", "message": "no", "interrupt": True}, False, "no"),
        ("yes", False, "not PermissionResultAllow/Deny"),
        (None, False, "not PermissionResultAllow/Deny"),
    ],
    ids=["dict-allow", "dict-deny", "string", "none"],
)
async def test_callback_answers_are_checked(answer: Any, allowed: bool, detail: Any) -> None:
    async def can_use(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return answer

    result = await decide(can_use_tool=can_use)
    if allowed:
        assert isinstance(result, PermissionResultAllow) and result.updated_input == detail
    else:
        assert isinstance(result, PermissionResultDeny) and detail in result.message


async def test_a_raising_callback_denies() -> None:
    async def broken(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        raise RuntimeError("db down")

    result = await decide(can_use_tool=broken)
    assert isinstance(result, PermissionResultDeny) and "RuntimeError: db down" in result.message


async def test_a_sync_callback_works() -> None:
    result = await decide(can_use_tool=lambda name, data, ctx: PermissionResultAllow())  # type: ignore[arg-type,return-value]
    assert isinstance(result, PermissionResultAllow)


# --- through a real run -------------------------------------------------------------------------------------

ran: list[dict[str, Any]] = []


@tool(requires_permission=True)
def shell(command: str) -> str:
    """Pretend to run a command."""
    ran.append({"command": command})
    return f"ran {command}"


@tool(is_read_only=True)
def look(path: str) -> str:
    """Pretend to read."""
    ran.append({"path": path})
    return f"saw {path}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


async def run_calls(calls: list[Any], **options: Any) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel([calls, "finished"])
    opts = AgentOptions(model=model, tools=[shell, look], persist_session=False, **options)
    return [m async for m in query(prompt="go", options=opts)], model


def results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list) for b in m.content
    ]


async def test_run_default_posture_denies_and_tells_the_model() -> None:
    messages, model = await run_calls(
        [tool_call("look", {"path": "a"}), tool_call("shell", {"command": "ls"})]
    )
    looked, shelled = results(messages)
    assert not looked.is_error and shelled.is_error and "shell needs permission" in str(shelled.content)
    assert ran == [{"path": "a"}]
    sent = model.requests[1].messages[-1]
    assert isinstance(sent, UserMessage) and sent.content[1].is_error  # type: ignore[union-attr]


async def test_run_allow_and_deny_rules() -> None:
    messages, _ = await run_calls(
        [tool_call("shell", {"command": "git status"}), tool_call("shell", {"command": "rm -rf /"})],
        allowed_tools=["shell(git status:*)"],
        disallowed_tools=["shell(rm:*)"],
    )
    ok, denied = results(messages)
    assert ok.content == "ran git status"
    assert denied.is_error and "shell(rm:*)" in str(denied.content)
    assert ran == [{"command": "git status"}]


@pytest.mark.parametrize("mode", ["plan", "dontAsk", "bypassPermissions", "acceptEdits", "default"])
async def test_run_modes(mode: Any) -> None:
    messages, model = await run_calls(
        [tool_call("look", {"path": "a"}), tool_call("shell", {"command": "ls"})], permission_mode=mode
    )
    outcome = [not r.is_error for r in results(messages)]
    expected = {"plan": [False, False], "dontAsk": [False, False], "bypassPermissions": [True, True],
                "acceptEdits": [True, False], "default": [True, False]}[mode]  # fmt: skip
    assert outcome == expected
    if mode == "plan":
        assert ran == [] and all("plan mode is active" in str(r.content) for r in results(messages))


async def test_run_can_use_tool_rewrites_input() -> None:
    decider = Recorder(PermissionResultAllow(updated_input={"command": "ls -la"}))
    messages, _ = await run_calls([tool_call("shell", {"command": "ls"}, id="c1")], can_use_tool=decider)
    assert results(messages)[0].content == "ran ls -la"
    name, data, ctx = decider.calls[0]
    assert (name, data, ctx.tool_use_id) == ("shell", {"command": "ls"}, "c1")


async def test_run_deny_with_interrupt_ends_the_turn() -> None:
    decider = Recorder(PermissionResultDeny(message="stop right there", interrupt=True))
    messages, model = await run_calls([tool_call("shell", {"command": "ls"})], can_use_tool=decider)
    assert results(messages)[0].content == "stop right there"
    assert len(model.requests) == 1  # the model was not asked again
    assert isinstance(messages[-1], ResultMessage) and ran == []


async def test_run_a_hook_ask_goes_to_the_callback_even_when_allowed() -> None:
    async def ask_hook(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}

    decider = Recorder(PermissionResultDeny(message="user said no"))
    messages, _ = await run_calls(
        [tool_call("shell", {"command": "ls"})],
        allowed_tools=["shell"],
        can_use_tool=decider,
        hooks={"PreToolUse": [HookMatcher(matcher="shell", hooks=[ask_hook])]},
    )
    assert results(messages)[0].content == "user said no" and len(decider.calls) == 1


async def test_run_a_hook_allow_does_not_beat_a_deny_rule() -> None:
    async def allow_hook(data: dict[str, Any], tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}

    hooks = {"PreToolUse": [HookMatcher(hooks=[allow_hook])]}
    messages, _ = await run_calls(
        [tool_call("shell", {"command": "rm x"}), tool_call("shell", {"command": "ls"})],
        disallowed_tools=["shell(rm:*)"],
        hooks=hooks,
    )
    denied, allowed = results(messages)
    assert denied.is_error and allowed.content == "ran ls"
