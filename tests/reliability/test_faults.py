"""Every fault the scripted server can inject, through `openagent.query` with the real provider plugins.

For each: the typed error or the recovered run, the retries and waits the policy promised, no hang (every
test runs under a deadline), the session file intact and resumable afterwards, and nothing left behind
(connections on the server side, tasks on the client side).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import stamina
from reliability_support import live_tasks, wait_until
from scripted_server import ScriptedServer, ToolCall, Turn, closed_port

from openagent import AgentOptions, query, tool
from openagent.errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    StreamError,
)
from openagent.retry import StaminaRetry
from openagent.sessions import JSONLSessionStore, project_key_for
from openagent.types import AssistantMessage, Message, ResultMessage, ToolUseError, UserMessage

pytestmark = pytest.mark.anyio
DEADLINE = 20
KEY = "sk-reliability-0123456789abcdef"


@dataclass
class Wire:
    """One wire format: the model string and the URL its plugin wants."""

    name: str
    provider: str

    def url(self, server: ScriptedServer) -> str:
        return server.url


WIRES = [Wire("openai", "openai-compatible"), Wire("anthropic", "anthropic")]


@pytest.fixture(params=WIRES, ids=[w.name for w in WIRES])
def wire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Wire:
    w: Wire = request.param
    pytest.importorskip(f"openagent_{w.name}")
    pytest.importorskip(w.name)  # the vendor SDK, imported outside the test's deadline
    monkeypatch.setenv("OPENAGENT_PLUGINS", w.name)
    return w


@pytest.fixture
def retries() -> Iterator[list[Any]]:
    """stamina active in testing mode (no waits, 3 attempts); yields the retry details stamina reports."""
    seen: list[Any] = []
    hooks = stamina.instrumentation.get_on_retry_hooks()
    stamina.instrumentation.set_on_retry_hooks([seen.append])
    with stamina.set_testing(True, attempts=3):
        yield seen
    stamina.instrumentation.set_on_retry_hooks(hooks)


def options(server: ScriptedServer, wire: Wire, tmp_path: Path, **kw: Any) -> AgentOptions:
    kw.setdefault("timeout", 5.0)
    return AgentOptions(
        model=f"{wire.provider}:m",
        base_url=wire.url(server),
        api_key=KEY,
        cwd=tmp_path,
        session_store=JSONLSessionStore(tmp_path / "sessions"),
        retry=StaminaRetry(attempts=3, timeout=30),
        **kw,
    )


async def collect(opts: AgentOptions, prompt: str = "hello") -> tuple[list[Message], BaseException | None]:
    """Run one query to its end; the messages it yielded and the error it raised (if any)."""
    messages: list[Message] = []
    try:
        async for message in query(prompt=prompt, options=opts):
            messages.append(message)
    except ProviderError as exc:
        return messages, exc
    return messages, None


def result_of(messages: list[Message]) -> ResultMessage:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert len(results) == 1, messages
    return results[0]


async def assert_resumable(
    server: ScriptedServer, wire: Wire, tmp_path: Path, session_id: str, prompt: str
) -> None:
    """The session file parses line by line and a resumed run sends the earlier prompt back to the model."""
    store = JSONLSessionStore(tmp_path / "sessions")
    entries = await store.load({"project_key": project_key_for(tmp_path), "session_id": session_id})
    assert entries, "the failed run left no session"
    assert store.warnings == []
    assert all({"type", "uuid", "timestamp"} <= set(e) for e in entries)
    server.add_script("m", [Turn(text=["resumed ", "fine"])], mode="queue")
    before = len(server.requests)
    messages, error = await collect(options(server, wire, tmp_path, resume=session_id), "and now?")
    assert error is None
    assert result_of(messages).result == "resumed fine"
    sent = json.dumps(server.requests[before].body)
    assert prompt in sent and "and now?" in sent


async def assert_nothing_left(server: ScriptedServer, tasks_before: int) -> None:
    # The openai plugin keeps its idle keep-alive connections for the next query until the event loop ends;
    # closed now, nothing else may be left open.
    from openagent_openai import aclose_connections

    await aclose_connections()
    await wait_until(lambda: server.open_connections == 0)
    # An async generator abandoned mid-stream inside the HTTP library is closed by the event loop's
    # finaliser task on a later tick; that task ends by itself. A task that never ends fails here.
    gc.collect()
    await wait_until(lambda: live_tasks() <= tasks_before)


# --- recovered runs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["429", "500", "503", "529", "drop"])
async def test_transient_failures_are_retried_then_the_run_succeeds(
    server: ScriptedServer, wire: Wire, tmp_path: Path, retries: list[Any], fault: str, anyio_backend: str
) -> None:
    server.add_script("m", [Turn(fault=fault), Turn(fault=fault), Turn(text=["Hel", "lo"])], mode="queue")
    tasks = live_tasks()
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path))
        assert error is None
        result = result_of(messages)
        assert (result.subtype, result.result) == ("success", "Hello")
        assert len(server.requests) == 3
        # The openai wire sends a request once more, at once, when the connection closed before any answer
        # (a kept-alive connection the server was closing); the retry policy takes the second drop.
        resent = fault == "drop" and wire.name == "openai"
        assert [r.retry_num for r in retries] == ([1] if resent else [1, 2])
        expected = {"429": RateLimitError, "drop": ProviderConnectionError}.get(fault, ServerError)
        assert all(type(r.caused_by) is expected for r in retries)
        await assert_nothing_left(server, tasks)


async def test_retry_after_is_the_wait(
    server: ScriptedServer, wire: Wire, tmp_path: Path, anyio_backend: str
) -> None:
    """Outside testing mode, stamina's scheduled wait is the server's Retry-After (a value, not a timing)."""
    seen: list[Any] = []
    hooks = stamina.instrumentation.get_on_retry_hooks()
    stamina.instrumentation.set_on_retry_hooks([seen.append])
    try:
        server.add_script("m", [Turn(fault="429", retry_after=0.05), Turn(text="ok")], mode="queue")
        with anyio.fail_after(DEADLINE):
            messages, error = await collect(options(server, wire, tmp_path))
    finally:
        stamina.instrumentation.set_on_retry_hooks(hooks)
    assert error is None and result_of(messages).result == "ok"
    assert len(seen) == 1
    assert seen[0].wait_for == pytest.approx(0.05, abs=1e-6)
    assert isinstance(seen[0].caused_by, RateLimitError) and seen[0].caused_by.retry_after == pytest.approx(
        0.05
    )


async def test_a_reset_before_any_event_is_retried(
    server: ScriptedServer, wire: Wire, tmp_path: Path, retries: list[Any], anyio_backend: str
) -> None:
    server.add_script(
        "m", [Turn(text=["a"] * 5, fault="reset", fault_after=0), Turn(text="ok")], mode="queue"
    )
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path))
    assert error is None and result_of(messages).result == "ok"
    assert len(server.requests) == 2


async def test_truncated_tool_json_never_reaches_the_tool_and_the_model_is_told(
    server: ScriptedServer, wire: Wire, tmp_path: Path, anyio_backend: str
) -> None:
    calls: list[str] = []

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        calls.append(path)
        return "contents"

    garbled = Turn(
        tool_calls=[ToolCall("read_file", {"path": "/etc/hostname"}, fragments=4)],
        fault="truncated_tool_json",
    )
    server.add_script("m", [garbled, Turn(text="sorry")], mode="queue")
    tasks = live_tasks()
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path, tools=[read_file]))
    assert error is None
    assert calls == []
    first = next(m for m in messages if isinstance(m, AssistantMessage))
    broken = [b for b in first.content if isinstance(b, ToolUseError)]
    assert len(broken) == 1 and broken[0].name == "read_file"
    assert broken[0].raw_data and '{"path": "/etc/hostname"}'.startswith(broken[0].raw_data)
    answer = next(m for m in messages if isinstance(m, UserMessage) and not isinstance(m.content, str))
    assert answer.content[0].is_error is True  # type: ignore[union-attr]
    assert result_of(messages).result == "sorry"
    second = json.dumps(server.requests[1].body)
    assert broken[0].id in second  # the error result answers the garbled call
    await assert_nothing_left(server, tasks)


# --- typed errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["500", "529"])
async def test_persistent_server_errors_give_up_after_the_attempts(
    server: ScriptedServer, wire: Wire, tmp_path: Path, retries: list[Any], fault: str, anyio_backend: str
) -> None:
    server.add_script("m", [Turn(fault=fault, message="the scripted server is down")] * 5, mode="queue")
    tasks = live_tasks()
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path), "first prompt")
    assert isinstance(error, ServerError)
    assert error.status_code == int(fault)
    assert "the scripted server is down" in str(error)
    assert len(server.requests) == 3 and len(retries) == 2
    result = result_of(messages)
    assert result.is_error and result.subtype == "error_during_execution"
    await assert_nothing_left(server, tasks)
    await assert_resumable(server, wire, tmp_path, result.session_id, "first prompt")


async def test_refused_connections_are_retried_then_typed(
    server: ScriptedServer, wire: Wire, tmp_path: Path, retries: list[Any], anyio_backend: str
) -> None:
    opts = options(server, wire, tmp_path)
    port = closed_port()
    opts.base_url = wire.url(server).replace(f":{server.port}", f":{port}")
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(opts)
    assert isinstance(error, ProviderConnectionError)
    assert str(port) in str(error)
    assert len(retries) == 2
    assert result_of(messages).is_error


@pytest.mark.parametrize("fault_after", [None, 3])
async def test_a_stall_past_the_read_timeout_is_a_timeout(
    server: ScriptedServer,
    wire: Wire,
    tmp_path: Path,
    retries: list[Any],
    fault_after: int | None,
    anyio_backend: str,
) -> None:
    server.add_script("m", [Turn(text=["a"] * 8, fault="stall", fault_after=fault_after)] * 3, mode="queue")
    tasks = live_tasks()
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path, timeout=0.5), "stalled prompt")
    assert isinstance(error, ProviderTimeoutError)
    # Before any event the policy retries; once events were handed on it never does.
    assert len(server.requests) == (3 if fault_after is None else 1)
    result = result_of(messages)
    assert result.is_error
    await assert_nothing_left(server, tasks)
    await assert_resumable(server, wire, tmp_path, result.session_id, "stalled prompt")


async def test_a_reset_mid_stream_is_not_retried(
    server: ScriptedServer, wire: Wire, tmp_path: Path, retries: list[Any], anyio_backend: str
) -> None:
    server.add_script("m", [Turn(text=["a"] * 10, fault="reset", fault_after=4)] * 3, mode="queue")
    tasks = live_tasks()
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path), "reset prompt")
    assert isinstance(error, ProviderConnectionError | StreamError)
    assert len(server.requests) == 1 and retries == []
    result = result_of(messages)
    await assert_nothing_left(server, tasks)
    await assert_resumable(server, wire, tmp_path, result.session_id, "reset prompt")


@pytest.mark.parametrize("fault", ["garbage", "error_event", "empty", "html", "eof"])
async def test_malformed_200_responses_are_stream_errors(
    server: ScriptedServer,
    wire: Wire,
    tmp_path: Path,
    retries: list[Any],
    fault: str,
    anyio_backend: str,
    request: pytest.FixtureRequest,
) -> None:
    turn = Turn(
        text=["a"] * 6, tool_calls=[ToolCall("f", {"x": 1}, fragments=3)], fault=fault, message="boom"
    )
    server.add_script("m", [turn] * 3, mode="queue")
    tasks = live_tasks()
    with anyio.fail_after(DEADLINE):
        messages, error = await collect(options(server, wire, tmp_path), f"{fault} prompt")
    assert isinstance(error, StreamError), error
    if fault == "error_event":
        assert "boom" in str(error)
    if fault in ("garbage", "html", "error_event"):
        assert error.body, "the raw data is kept for diagnosis"
    result = result_of(messages)
    assert result.is_error
    assert not any(
        isinstance(m, AssistantMessage) and m.stop_reason not in (None, "incomplete") for m in messages
    )
    await assert_nothing_left(server, tasks)
    await assert_resumable(server, wire, tmp_path, result.session_id, f"{fault} prompt")
