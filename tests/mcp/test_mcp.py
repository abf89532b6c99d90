"""MCP servers in a conversation: stdio, streamable HTTP, SSE, in-process; results; clean shutdown."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import pid_of, process_gone

from openagent import AgentOptions, Client, ResultMessage, SystemMessage, UserMessage, query, tool
from openagent.errors import ConfigError
from openagent.testing import ScriptedModel, tool_call
from openagent_mcp import create_sdk_mcp_server, tool_name

pytestmark = pytest.mark.anyio


async def run(servers: dict[str, Any], *turns: Any) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel(list(turns))
    # A server's tools run only when a rule allows them (a path to a JSON file names no server here).
    allow = [f"mcp__{name}" for name in servers] if isinstance(servers, dict) else ["mcp__calc"]
    options = AgentOptions(model=model, mcp_servers=servers, allowed_tools=allow, persist_session=False)
    return [m async for m in query(prompt="go", options=options)], model


def results(messages: list[Any]) -> list[Any]:
    return [
        b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list) for b in m.content
    ]


async def test_stdio_server_tools_are_called_by_prefixed_name(
    stdio_server: dict[str, Any], tmp_path: Path
) -> None:
    messages, model = await run(
        {"calc": stdio_server}, [tool_call("mcp__calc__add", {"a": 2, "b": 3})], "five"
    )
    init = messages[0]
    assert isinstance(init, SystemMessage)
    assert init.data["mcp_servers"] == [
        {
            "name": "calc",
            "status": "connected",
            "tool_count": 19,
            "skipped_tools": [
                {
                    "name": "background_only",
                    "reason": "runs only as an MCP task (execution.taskSupport: required), which is not supported",
                }
            ],
        }
    ]
    assert "mcp__calc__add" in init.data["tools"] and "mcp__calc__background_only" not in init.data["tools"]
    names = {t.name for t in model.requests[0].tools}
    assert {"mcp__calc__add", "mcp__calc__picture", "mcp__calc__explode"} <= names
    add = next(t for t in model.requests[0].tools if t.name == "mcp__calc__add")
    assert add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]
    (result,) = results(messages)
    assert result.content == [{"type": "text", "text": "5"}]
    assert not result.is_error
    assert messages[-1].result == "five"
    assert process_gone(pid_of(tmp_path))


async def test_results_map_images_resources_and_errors(http_server: str) -> None:
    calls = [
        tool_call("mcp__calc__picture", {}, id="p"),
        tool_call("mcp__calc__readme", {}, id="r"),
        tool_call("mcp__calc__explode", {}, id="e"),
    ]
    messages, _ = await run({"calc": {"type": "http", "url": http_server}}, calls, "done")
    picture, readme, explode = results(messages)
    assert picture.content[0] == {"type": "text", "text": "a pixel"}
    assert picture.content[1]["type"] == "image"
    assert picture.content[1]["source"]["media_type"] == "image/png"
    assert readme.content == [{"type": "text", "text": "[resource file:///README]\nhello from a resource"}]
    assert explode.is_error is True
    assert "boom" in explode.content[0]["text"]


async def test_streamable_http_server_with_headers(http_server: str) -> None:
    servers = {"remote": {"type": "http", "url": http_server, "headers": {"x-team": "blue"}}}
    call = tool_call("mcp__remote__header", {"name": "x-team"})
    messages, _ = await run(servers, [call, tool_call("mcp__remote__add", {"a": 40, "b": 2})], "ok")
    assert messages[0].data["mcp_servers"][0]["status"] == "connected"
    header, add = results(messages)
    assert header.content == [{"type": "text", "text": "blue"}]
    assert add.content == [{"type": "text", "text": "42"}]


async def test_sse_server(sse_server: str) -> None:
    messages, _ = await run(
        {"old": {"type": "sse", "url": sse_server}}, [tool_call("mcp__old__add", {"a": 1, "b": 1})], "2"
    )
    assert results(messages)[0].content == [{"type": "text", "text": "2"}]


async def test_in_process_sdk_server_calls_tools_directly() -> None:
    seen: list[dict[str, Any]] = []

    @tool("greet", "Greet someone", {"name": str})
    async def greet(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {
            "content": [
                {"type": "text", "text": f"hello {args['name']}"},
                {"type": "image", "data": "AAAA", "mimeType": "image/gif"},
            ]
        }

    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    server = create_sdk_mcp_server("greeter", tools=[greet, shout])
    calls = [tool_call("mcp__local__greet", {"name": "Ada"}), tool_call("mcp__local__shout", {"text": "hi"})]
    messages, model = await run({"local": server}, calls, "done")
    assert seen == [{"name": "Ada"}]
    greeting, shouted = results(messages)
    assert greeting.content == [
        {"type": "text", "text": "hello Ada"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "AAAA"}},
    ]
    assert shouted.content == "HI"
    assert messages[0].data["mcp_servers"] == [{"name": "local", "status": "connected", "tool_count": 2}]


async def test_an_mcp_server_object_runs_in_memory() -> None:
    from servers import build

    messages, _ = await run(
        {"mem": {"type": "sdk", "name": "mem", "instance": build()}},
        [tool_call("mcp__mem__add", {"a": 3, "b": 4})],
        "7",
    )
    assert results(messages)[0].content == [{"type": "text", "text": "7"}]


async def test_failing_servers_are_reported_and_the_others_work(http_server: str) -> None:
    servers = {
        "calc": {"type": "http", "url": http_server},
        "silent": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "timeout": 1},
        "typo": {"type": "websocket", "url": "ws://x"},
        "no_url": {"type": "http"},
    }
    messages, _ = await run(servers, [tool_call("mcp__calc__add", {"a": 1, "b": 2})], "3")
    status = {s["name"]: s for s in messages[0].data["mcp_servers"]}
    assert status["calc"]["status"] == "connected"
    assert status["silent"] == {
        "name": "silent",
        "status": "failed",
        "tool_count": 0,
        "error": "TimeoutError: no answer within 1 s (timeout)",
    }
    assert status["typo"]["error"] == "unknown MCP server type 'websocket'; expected stdio, sse, http or sdk"
    assert status["no_url"]["error"] == "an http server needs a 'url' string (http:// or https://)"
    assert results(messages)[0].content == [{"type": "text", "text": "3"}]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"


async def test_closing_the_generator_early_leaves_nothing_behind(
    stdio_server: dict[str, Any], tmp_path: Path
) -> None:
    options = AgentOptions(
        model=ScriptedModel(["never"]), mcp_servers={"calc": stdio_server}, persist_session=False
    )
    messages = query(prompt="go", options=options)
    first = await messages.__anext__()
    assert first.data["mcp_servers"][0]["status"] == "connected"
    assert not process_gone(pid_of(tmp_path))
    await messages.aclose()
    assert process_gone(pid_of(tmp_path))


async def test_breaking_out_of_async_for_is_cleaned_up_by_the_finalizer(
    stdio_server: dict[str, Any], tmp_path: Path
) -> None:
    options = AgentOptions(
        model=ScriptedModel(["never"]), mcp_servers={"calc": stdio_server}, persist_session=False
    )
    async for _ in query(prompt="go", options=options):
        break
    with anyio.fail_after(10):  # the servers end in the background, in their own task: no stranded scope
        while not process_gone(pid_of(tmp_path)):
            gc.collect()
            await anyio.sleep(0.05)
    with anyio.fail_after(1):  # and this task's cancel scopes are intact: a nested one still works
        with anyio.move_on_after(0.01) as scope:
            await anyio.sleep(1)
    assert scope.cancelled_caught


async def test_a_client_keeps_servers_across_prompts(stdio_server: dict[str, Any], tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            [tool_call("mcp__calc__add", {"a": 1, "b": 1})],
            "2",
            [tool_call("mcp__calc__add", {"a": 2, "b": 2})],
            "4",
        ]
    )
    async with Client(
        AgentOptions(
            model=model,
            mcp_servers={"calc": stdio_server},
            allowed_tools=["mcp__calc"],
            persist_session=False,
        )
    ) as client:
        pid = pid_of(tmp_path)
        for expected in ("2", "4"):
            await client.query("add")
            answers = [m async for m in client.receive_response()]
            assert answers[-1].result == expected
            assert pid_of(tmp_path) == pid  # the same server process
    assert process_gone(pid)


async def test_mcp_servers_from_a_json_file(tmp_path: Path, http_server: str) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"calc": {"type": "http", "url": http_server}}}))
    messages, _ = await run(str(path), [tool_call("mcp__calc__add", {"a": 5, "b": 5})], "10")  # type: ignore[arg-type]
    assert results(messages)[0].content == [{"type": "text", "text": "10"}]


async def test_an_unreadable_json_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        await run(str(tmp_path / "missing.json"), "x")  # type: ignore[arg-type]


async def test_without_the_plugin_mcp_servers_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAGENT_PLUGINS", "")
    with pytest.raises(ConfigError, match=r"openagent\[mcp\]"):
        await run({"x": create_sdk_mcp_server("x")}, "hi")


def test_tool_names_are_sanitised() -> None:
    assert tool_name("my server", "do.it") == "mcp__my_server__do_it"
    assert tool_name("files__evil", "rm") == "mcp__files_evil__rm"  # never covered by a rule for "files"
