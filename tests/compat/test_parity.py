"""Parity checked against the real claude_agent_sdk package: names, option fields, methods, stores."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import claude_agent_sdk
import claude_agent_sdk.types
import pytest
from claude_agent_sdk.testing import run_session_store_conformance

import openagent.compat.claude as compat
import openagent.compat.claude.types as compat_types
from openagent.sessions import JSONLSessionStore, MemorySessionStore

CLAUDE_TYPES = [
    name
    for name, value in vars(claude_agent_sdk.types).items()
    if not name.startswith("_")
    and not name.startswith(("SDKControl", "SDKHook", "Control"))  # the CLI's wire protocol
    and (inspect.isclass(value) or name in claude_agent_sdk.__all__ or isinstance(value, frozenset))
    and getattr(value, "__module__", "claude_agent_sdk.types").startswith("claude_agent_sdk")
]


def test_every_public_name_exists() -> None:
    assert [name for name in claude_agent_sdk.__all__ if not hasattr(compat, name)] == []


def test_the_types_module_has_every_type() -> None:
    assert len(CLAUDE_TYPES) > 100
    assert [name for name in CLAUDE_TYPES if not hasattr(compat_types, name)] == []


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def test_every_option_field_exists_with_the_same_default() -> None:
    ours = {f.name: f for f in dataclasses.fields(compat.ClaudeAgentOptions)}
    theirs = dataclasses.fields(claude_agent_sdk.ClaudeAgentOptions)
    assert [f.name for f in theirs if f.name not in ours] == []
    assert [f.name for f in theirs] == list(ours)  # same order: positional construction works too
    different = {
        f.name: (_default(f), _default(ours[f.name]))
        for f in theirs
        if _default(f) != _default(ours[f.name]) and f.name != "debug_stderr"  # deprecated, never read
    }
    assert different == {}


def _parameters(function: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


CLIENT_METHODS = [
    name
    for name, value in vars(claude_agent_sdk.ClaudeSDKClient).items()
    if callable(value) and not name.startswith("_")
]


@pytest.mark.parametrize("method", [*CLIENT_METHODS, "__init__", "__aenter__", "__aexit__"])
def test_every_client_method_exists_with_a_compatible_signature(method: str) -> None:
    theirs = getattr(claude_agent_sdk.ClaudeSDKClient, method)
    ours = getattr(compat.ClaudeSDKClient, method)
    assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(
        theirs
    ) or inspect.isasyncgenfunction(theirs)
    assert [p[:2] for p in _parameters(ours)] == [p[:2] for p in _parameters(theirs)]
    assert [p[2] for p in _parameters(ours)] == [p[2] for p in _parameters(theirs)]


FUNCTIONS = [
    name
    for name in claude_agent_sdk.__all__
    if inspect.isfunction(getattr(claude_agent_sdk, name)) and name not in ("tool",)
]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_takes_the_same_arguments(name: str) -> None:
    theirs, ours = getattr(claude_agent_sdk, name), getattr(compat, name)
    assert [p[:2] for p in _parameters(ours)] == [p[:2] for p in _parameters(theirs)]
    asynchronous = inspect.iscoroutinefunction(theirs)
    assert inspect.iscoroutinefunction(ours) == asynchronous or name == "query"


def test_tool_takes_the_same_arguments() -> None:
    assert [p[0] for p in _parameters(compat.tool)] == [p[0] for p in _parameters(claude_agent_sdk.tool)]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the conformance suite is the SDK's, on asyncio
async def test_the_default_store_passes_the_sdk_conformance_suite(tmp_path: Path) -> None:
    roots = iter(range(1000))
    await run_session_store_conformance(lambda: JSONLSessionStore(tmp_path / str(next(roots))))


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_memory_store_passes_the_sdk_conformance_suite() -> None:
    await run_session_store_conformance(MemorySessionStore)
