"""The context window a server reports (llama.cpp ``/props``, Ollama ``/api/show``, vLLM ``/v1/models``), and
compaction on a chat-completions endpoint that knows its window only from the server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from openagent import AgentOptions, SystemMessage, query, tool
from openagent._compaction import Compaction
from openagent.testing import ScriptedModel
from openagent_openai import PROFILES, ChatCompletionsProvider
from openagent_openai._server_info import OLLAMA_DEFAULT_CONTEXT, from_models, from_props, from_show

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from scripted_server import ScriptedServer, ToolCall, Turn

pytestmark = pytest.mark.anyio
DEADLINE = 20


@pytest.mark.parametrize(
    ("data", "window"),
    [
        pytest.param({"default_generation_settings": {"n_ctx": 4096}}, 4096, id="props"),
        pytest.param({"n_ctx": 2048}, 2048, id="props-top-level"),
        pytest.param({"default_generation_settings": {"n_ctx": "4096"}}, None, id="a-string"),
        pytest.param({"default_generation_settings": {"n_ctx": -1}}, None, id="negative"),
        pytest.param({"default_generation_settings": {"n_ctx": True}}, None, id="a-bool"),
        pytest.param({"default_generation_settings": {"n_ctx": float("nan")}}, None, id="nan"),
        pytest.param({"default_generation_settings": {"n_ctx": 10**30}}, None, id="absurd"),
        pytest.param({"default_generation_settings": [1]}, None, id="not-a-dict"),
        pytest.param(["n_ctx", 4096], None, id="a-list"),
        pytest.param(None, None, id="nothing"),
    ],
)
def test_llamacpp_props(data: Any, window: int | None) -> None:
    assert from_props(data) == window


@pytest.mark.parametrize(
    ("data", "window"),
    [
        pytest.param({"parameters": "num_ctx 8192\nstop <eot>"}, 8192, id="num-ctx"),
        pytest.param({"parameters": 'num_ctx "16384"'}, 16384, id="quoted"),
        pytest.param({"model_info": {"qwen3.context_length": 40960}}, OLLAMA_DEFAULT_CONTEXT, id="default"),
        pytest.param({"model_info": {"tiny.context_length": 2048}}, 2048, id="model-smaller-than-default"),
        pytest.param(
            {"parameters": "num_ctx 65536", "model_info": {"x.context_length": 32768}}, 32768, id="capped"
        ),
        pytest.param({"parameters": "num_ctx lots"}, OLLAMA_DEFAULT_CONTEXT, id="garbage-number"),
        pytest.param({"parameters": 7, "model_info": "x"}, OLLAMA_DEFAULT_CONTEXT, id="wrong-types"),
        pytest.param("not an object", None, id="a-string"),
    ],
)
def test_ollama_show(data: Any, window: int | None) -> None:
    assert from_show(data) == window


@pytest.mark.parametrize(
    ("data", "window"),
    [
        pytest.param({"data": [{"id": "m", "max_model_len": 32768}]}, 32768, id="vllm"),
        pytest.param(
            {"data": [{"id": "a", "max_model_len": 1}, {"id": "m", "max_model_len": 8}]}, 8, id="by-id"
        ),
        pytest.param({"data": [{"id": "other", "max_model_len": 4096}]}, 4096, id="the-only-one"),
        pytest.param(
            {"data": [{"id": "a", "max_model_len": 1}, {"id": "b", "max_model_len": 2}]}, None, id="ambiguous"
        ),
        pytest.param({"data": [{"id": "m"}]}, None, id="not-said"),
        pytest.param({"data": "m"}, None, id="not-a-list"),
        pytest.param({"data": [None, 3]}, None, id="not-objects"),
    ],
)
def test_vllm_models(data: Any, window: int | None) -> None:
    assert from_models(data, "m") == window


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(context_size=2048) as scripted:
        yield scripted


def _gets(server: ScriptedServer) -> list[str]:
    return [r.path for r in server.requests if r.method == "GET"]


@pytest.mark.parametrize(
    ("profile", "path"), [("llamacpp", "/props"), ("vllm", "/v1/models"), ("openai-compatible", "/v1/models")]
)
async def test_the_window_is_asked_once_where_each_server_says_it(
    server: ScriptedServer, profile: str, path: str
) -> None:
    provider = ChatCompletionsProvider("m", profile=PROFILES[profile], base_url=server.url)
    try:
        with anyio.fail_after(DEADLINE):
            first, again = await provider.model_profile(), await provider.model_profile()
    finally:
        await provider.aclose()
    assert first is not None and first.context_window == 2048 and again is first
    assert _gets(server) == [path]


async def test_a_server_that_does_not_say_leaves_the_window_unknown() -> None:
    with ScriptedServer() as silent:  # /props and /v1/models answer 404
        provider = ChatCompletionsProvider("m", profile=PROFILES["openai-compatible"], base_url=silent.url)
        try:
            with anyio.fail_after(DEADLINE):
                assert await provider.model_profile() is None
        finally:
            await provider.aclose()
        assert _gets(silent) == ["/v1/models", "/props"]


async def test_an_unreachable_server_leaves_the_window_unknown() -> None:
    provider = ChatCompletionsProvider("m", profile=PROFILES["llamacpp"], base_url="http://127.0.0.1:9/v1")
    try:
        with anyio.fail_after(DEADLINE):
            assert await provider.model_profile() is None
    finally:
        await provider.aclose()


@tool
def fetch(page: int) -> str:
    """Fetch a page."""
    return f"page {page}: " + "lorem ipsum " * 120


def _script(pages: int) -> list[Turn]:
    calls = [Turn(tool_calls=[ToolCall("fetch", {"page": n}, id=f"c{n}")]) for n in range(pages)]
    return [*calls, Turn(text="read them all")]


async def _run(server: ScriptedServer, summariser: ScriptedModel) -> list[Any]:
    server.add_script("m", _script(6), mode="queue")  # compaction rewrites the history: play in order
    provider = ChatCompletionsProvider("m", profile=PROFILES["llamacpp"], base_url=server.url)
    options = AgentOptions(
        model=provider,
        tools=[fetch],
        persist_session=False,
        compaction=Compaction(model=summariser, keep_last=2),
    )
    try:
        with anyio.fail_after(DEADLINE):
            return [m async for m in query(prompt="read six pages", options=options)]
    finally:
        await provider.aclose()


async def test_compaction_triggers_on_a_window_that_came_from_the_server(server: ScriptedServer) -> None:
    summariser = ScriptedModel(["the pages were read"] * 10)
    messages = await _run(server, summariser)
    assert messages[-1].subtype == "success" and messages[-1].result == "read them all"
    boundaries = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert boundaries and all(b.data["trigger"] == "auto" for b in boundaries)
    assert all(b.data["post_tokens"] < b.data["pre_tokens"] for b in boundaries)
    assert _gets(server) == ["/props"]  # asked once, when the history could first need it
    sizes = [len(json.dumps(body["messages"])) // 4 for body in server.bodies("/chat/completions")]
    assert max(sizes) < 2048 < sum(sizes)  # the window held, though everything read would not fit
    assert len(summariser.requests) == len(boundaries)


async def test_without_a_window_from_anywhere_nothing_is_compacted() -> None:
    with ScriptedServer() as silent:
        summariser = ScriptedModel(["never"])
        messages = await _run(silent, summariser)
    assert messages[-1].subtype == "success"
    assert not [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert summariser.requests == []


async def test_a_connection_the_server_drops_unanswered_is_asked_once_more() -> None:
    """A kept-alive connection the server closes as the question goes out (llama.cpp does after a streamed
    answer) is not "the server cannot say": the probe goes once more on a new connection, as requests do.
    """
    body = json.dumps({"default_generation_settings": {"n_ctx": 4096}}).encode()
    answers = [b"", b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"]
    answers[1] += b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)

    async def handle(stream: Any) -> None:
        async with stream:
            await stream.receive()  # the request
            if reply := (answers.pop(0) if answers else b""):
                await stream.send(reply)

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, handle)
        url = f"http://127.0.0.1:{port}/v1"
        provider = ChatCompletionsProvider("m", profile=PROFILES["llamacpp"], base_url=url)
        try:
            with anyio.fail_after(DEADLINE):
                found = await provider.model_profile()
        finally:
            await provider.aclose()
            group.cancel_scope.cancel()
    assert found is not None and found.context_window == 4096
    assert answers == []  # asked twice: the dropped question, then the answered one
