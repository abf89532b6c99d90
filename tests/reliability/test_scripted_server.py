"""The scripted loopback server speaks both wire formats, selects scripts per request and injects faults."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from scripted_server import FAULTS, ScriptedServer, ToolCall, Turn, bench_conversation, closed_port

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


def sse_data(text: str) -> list[str]:
    """The ``data:`` payloads of an SSE body, in order."""
    return [line[6:] for line in text.split("\n") if line.startswith("data: ")]


def openai_chunks(text: str) -> list[dict[str, Any]]:
    data = sse_data(text)
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


def anthropic_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def post(server: ScriptedServer, path: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=5) as client:
        return client.post(path, json=body, **kw)


TURN = Turn(
    thinking=["let me ", "think"],
    text=["Hel", "lo"],
    tool_calls=[ToolCall("add", {"a": 1, "b": 2}, id="call_1", fragments=4)],
    usage=(7, 0),
)


# --- wire formats -----------------------------------------------------------------------------------------


def test_openai_stream_carries_thinking_text_tool_fragments_finish_and_usage(server: ScriptedServer) -> None:
    server.add_script("m", [TURN])
    response = post(server, "/chat/completions", {"model": "m", "stream": True, "messages": []})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    chunks = openai_chunks(response.text)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "let me think"
    assert "".join(d.get("content") or "" for d in deltas) == "Hello"
    fragments = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert len(fragments) == 4
    assert fragments[0]["id"] == "call_1" and fragments[0]["function"]["name"] == "add"
    assert all("id" not in f and "name" not in f["function"] for f in fragments[1:])
    assert json.loads("".join(f["function"]["arguments"] for f in fragments)) == {"a": 1, "b": 2}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 8, "total_tokens": 15}


def test_openai_reasoning_field_and_stop_reasons_follow_the_turn(server: ScriptedServer) -> None:
    server.add_script(
        "m", [Turn(thinking="hm", text="x", stop="max_tokens", reasoning_field="reasoning", usage=None)]
    )
    chunks = openai_chunks(post(server, "/chat/completions", {"model": "m", "stream": True}).text)
    assert chunks[1]["choices"][0]["delta"] == {"reasoning": "hm"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert all("usage" not in c for c in chunks)


def test_openai_non_streaming_returns_one_completion(server: ScriptedServer) -> None:
    server.add_script("m", [TURN])
    body = post(server, "/chat/completions", {"model": "m"}).json()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Hello"
    assert choice["message"]["reasoning_content"] == "let me think"
    call = choice["message"]["tool_calls"][0]
    assert (call["id"], call["function"]["name"]) == ("call_1", "add")
    assert json.loads(call["function"]["arguments"]) == {"a": 1, "b": 2}
    assert body["usage"]["prompt_tokens"] == 7


def test_anthropic_stream_has_the_documented_event_sequence(server: ScriptedServer) -> None:
    server.add_script(
        "m",
        [
            Turn(
                thinking="hm",
                text=["a", "b"],
                tool_calls=[ToolCall("f", '{"x": 1}', fragments=2)],
                signature="sig",
            )
        ],
    )
    response = post(server, "/messages", {"model": "m", "stream": True, "messages": []})
    events = anthropic_events(response.text)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    starts = [data["content_block"]["type"] for name, data in events if name == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert [d["type"] for d in deltas] == [
        "thinking_delta",
        "signature_delta",
        "text_delta",
        "text_delta",
        "input_json_delta",
        "input_json_delta",
    ]
    assert json.loads("".join(d.get("partial_json", "") for d in deltas)) == {"x": 1}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert all(data["type"] == name for name, data in events)


def test_anthropic_non_streaming_returns_one_message(server: ScriptedServer) -> None:
    server.add_script("m", [TURN])
    with httpx.Client(base_url=server.root_url) as client:
        body = client.post("/v1/messages", json={"model": "m", "max_tokens": 5}).json()
    assert [b["type"] for b in body["content"]] == ["thinking", "text", "tool_use"]
    assert body["content"][2]["input"] == {"a": 1, "b": 2}
    assert body["stop_reason"] == "tool_use"
    assert body["usage"] == {"input_tokens": 7, "output_tokens": 8}


# --- script selection and recording -----------------------------------------------------------------------


def test_header_beats_model_name_and_default_queue_serves_the_rest(server: ScriptedServer) -> None:
    server.add_script("by-model", [Turn(text="model")])
    server.add_script("by-header", [Turn(text="header")])
    server.enqueue(Turn(text="queued"))
    with httpx.Client(base_url=server.url) as client:
        by_header = client.post(
            "/chat/completions", json={"model": "by-model"}, headers={"x-script": "by-header"}
        )
        by_model = client.post("/chat/completions", json={"model": "by-model"})
        queued = client.post("/chat/completions", json={"model": "unknown"})
        none_left = client.post("/chat/completions", json={"model": "unknown"})
    assert by_header.json()["choices"][0]["message"]["content"] == "header"
    assert by_model.json()["choices"][0]["message"]["content"] == "model"
    assert queued.json()["choices"][0]["message"]["content"] == "queued"
    assert none_left.status_code == 400
    assert "no script" in none_left.json()["error"]["message"]
    assert [r.script for r in server.requests] == ["by-header", "by-model", "", None]


def test_queue_mode_consumes_turns_then_reports_exhaustion(server: ScriptedServer) -> None:
    server.add_script("q", [Turn(text="one"), Turn(text="two")], mode="queue")
    replies = [post(server, "/chat/completions", {"model": "q"}) for _ in range(3)]
    assert [r.status_code for r in replies] == [200, 200, 400]
    assert [r.json()["choices"][0]["message"]["content"] for r in replies[:2]] == ["one", "two"]
    assert "no turn left" in replies[2].json()["error"]["message"]


async def test_history_mode_serves_concurrent_conversations_by_their_own_history(
    server: ScriptedServer, anyio_backend: str
) -> None:
    server.add_script("bench", bench_conversation(deltas=5))
    results: dict[int, tuple[str, str]] = {}

    async def conversation(n: int, client: httpx.AsyncClient) -> None:
        first = await client.post(
            "/chat/completions", json={"model": "bench", "messages": [{"role": "user"}]}
        )
        call = first.json()["choices"][0]["message"]["tool_calls"][0]
        history = [{"role": "user"}, {"role": "assistant", "tool_calls": [call]}, {"role": "tool"}]
        second = await client.post("/chat/completions", json={"model": "bench", "messages": history})
        results[n] = (call["function"]["name"], second.json()["choices"][0]["message"]["content"])

    with anyio.fail_after(20):
        async with httpx.AsyncClient(base_url=server.url) as client, anyio.create_task_group() as tg:
            for n in range(30):
                tg.start_soon(conversation, n, client)
    assert set(results.values()) == {("lookup", "word0 word1 word2 word3 word4 ")}
    assert len(results) == 30


def test_every_request_body_and_header_is_recorded(server: ScriptedServer) -> None:
    server.add_script("m", [Turn(text="x")] * 2, mode="queue")
    sent = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    post(server, "/chat/completions", sent, headers={"authorization": "Bearer sk-test"})
    post(server, "/messages", {"model": "m", "messages": []})
    assert server.bodies("/chat/completions") == [sent]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert server.requests[1].path == "/v1/messages"
    server.reset()
    assert server.requests == []


def test_unknown_route_and_bad_fault_are_refused(server: ScriptedServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/models").status_code == 404
    with pytest.raises(ValueError, match="unknown fault"):
        Turn(fault="explode")
    with pytest.raises(ValueError, match="unknown script mode"):
        server.add_script("x", [], mode="random")  # type: ignore[arg-type]


def test_tool_call_pieces_split_the_arguments_without_loss() -> None:
    call = ToolCall("f", {"city": "Paris", "days": 3}, fragments=7)
    assert len(call.pieces()) == 7
    assert "".join(call.pieces()) == call.argument_text()
    assert ToolCall("f", "{}", fragments=10).pieces() == ["{", "}"]


# --- faults -----------------------------------------------------------------------------------------------


def test_refused_port_refuses() -> None:
    with pytest.raises(httpx.ConnectError), httpx.Client(timeout=5) as client:
        client.post(f"http://127.0.0.1:{closed_port()}/v1/chat/completions", json={})


def test_drop_closes_without_a_response(server: ScriptedServer) -> None:
    server.enqueue(Turn(fault="drop"))
    with pytest.raises(httpx.RemoteProtocolError):
        post(server, "/chat/completions", {"model": "m"})


@pytest.mark.parametrize("wire", ["/chat/completions", "/messages"])
def test_reset_breaks_the_stream_after_some_chunks(server: ScriptedServer, wire: str) -> None:
    server.enqueue(Turn(text=["a"] * 10, fault="reset", fault_after=3))
    received: list[bytes] = []
    with httpx.Client(base_url=server.url, timeout=5) as client:
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            with client.stream("POST", wire, json={"model": "m", "stream": True}) as response:
                assert response.status_code == 200
                for chunk in response.iter_bytes():
                    received.append(chunk)
    assert b"".join(received).count(b"data: ") == 3


@pytest.mark.parametrize("status", ["429", "500", "503", "529"])
@pytest.mark.parametrize("wire", ["/chat/completions", "/messages"])
def test_status_faults_answer_with_the_wire_formats_error_body(
    server: ScriptedServer, status: str, wire: str
) -> None:
    server.add_script(
        "m", [Turn(fault=status, retry_after=1.5, message="busy"), Turn(text="ok")], mode="queue"
    )
    failed = post(server, wire, {"model": "m", "stream": True})
    succeeded = post(server, wire, {"model": "m", "stream": True})
    assert failed.status_code == int(status)
    assert failed.headers["retry-after"] == "1.5"
    assert failed.headers["retry-after-ms"] == "1500"
    error = failed.json()["error"]
    assert error["message"] == "busy"
    if wire == "/messages":
        assert failed.json()["type"] == "error"
        assert error["type"] == {"429": "rate_limit_error", "529": "overloaded_error"}.get(
            status, "api_error"
        )
    assert succeeded.status_code == 200


def test_status_fault_without_retry_after_sends_no_header(server: ScriptedServer) -> None:
    server.enqueue(Turn(fault="503"))
    response = post(server, "/chat/completions", {"model": "m"})
    assert response.status_code == 503
    assert "retry-after" not in response.headers


@pytest.mark.parametrize("fault_after", [None, 2])
def test_stall_sends_nothing_more_until_the_read_timeout(
    server: ScriptedServer, fault_after: int | None
) -> None:
    server.enqueue(Turn(text=["a"] * 6, fault="stall", fault_after=fault_after))
    with httpx.Client(base_url=server.url, timeout=httpx.Timeout(5, read=0.3)) as client:
        with pytest.raises(httpx.ReadTimeout):
            with client.stream("POST", "/chat/completions", json={"model": "m", "stream": True}) as response:
                assert fault_after is not None
                assert b"".join(response.iter_bytes()).count(b"data: ") == 2


def test_stalled_connection_closes_when_the_client_leaves(server: ScriptedServer) -> None:
    server.enqueue(Turn(fault="stall"))
    with pytest.raises(httpx.ReadTimeout):
        with httpx.Client(base_url=server.url, timeout=httpx.Timeout(5, read=0.2)) as client:
            client.post("/chat/completions", json={"model": "m"})
    wait_for(lambda: server.open_connections == 0)


@pytest.mark.parametrize("wire", ["/chat/completions", "/messages"])
def test_garbage_follows_valid_chunks(server: ScriptedServer, wire: str) -> None:
    server.enqueue(Turn(text=["a"] * 4, fault="garbage", fault_after=2))
    response = post(server, wire, {"model": "m", "stream": True})
    assert response.status_code == 200
    assert b"{this is not json" in response.content
    assert b"\x00\xff" in response.content
    assert b"[DONE]" not in response.content and b"message_stop" not in response.content


def test_truncated_tool_json_is_cut_but_the_stream_completes(server: ScriptedServer) -> None:
    server.enqueue(
        Turn(
            tool_calls=[ToolCall("f", {"path": "/tmp/x", "n": 12345}, fragments=4)],
            fault="truncated_tool_json",
        )
    )
    chunks = openai_chunks(post(server, "/chat/completions", {"model": "m", "stream": True}).text)
    arguments = "".join(
        c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    )
    assert arguments and '{"path": "/tmp/x", "n": 12345}'.startswith(arguments)
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_truncated_tool_json_non_streaming_is_not_an_object(server: ScriptedServer) -> None:
    server.add_script(
        "m", [Turn(tool_calls=[ToolCall("f", {"a": 1})], fault="truncated_tool_json")] * 2, mode="queue"
    )
    openai = post(server, "/chat/completions", {"model": "m"}).json()
    anthropic = post(server, "/messages", {"model": "m"}).json()
    assert openai["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"a"'
    assert anthropic["content"][0]["input"] == '{"a"'


def test_error_event_inside_a_200_stream(server: ScriptedServer) -> None:
    server.add_script("m", [Turn(text=["a"] * 4, fault="error_event", message="boom")] * 2, mode="queue")
    openai = sse_data(post(server, "/chat/completions", {"model": "m", "stream": True}).text)
    assert json.loads(openai[-1]) == {
        "error": {"message": "boom", "type": "server_error", "param": None, "code": None}
    }
    anthropic = anthropic_events(post(server, "/messages", {"model": "m", "stream": True}).text)
    assert anthropic[-1] == (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "boom"}},
    )


@pytest.mark.parametrize("stream", [True, False])
def test_empty_and_html_bodies_are_200s(server: ScriptedServer, stream: bool) -> None:
    server.add_script("m", [Turn(text="x", fault="empty"), Turn(text="x", fault="html")], mode="queue")
    empty = post(server, "/chat/completions", {"model": "m", "stream": stream})
    html = post(server, "/chat/completions", {"model": "m", "stream": stream})
    assert (empty.status_code, empty.content) == (200, b"")
    assert html.status_code == 200 and html.headers["content-type"] == "text/html"
    assert html.text.startswith("<html>")


def test_eof_ends_the_stream_early_without_done(server: ScriptedServer) -> None:
    server.enqueue(Turn(text=["a"] * 10, fault="eof", fault_after=4))
    data = sse_data(post(server, "/chat/completions", {"model": "m", "stream": True}).text)
    assert len(data) == 4
    assert "[DONE]" not in data


@pytest.mark.parametrize("fault", ["reset", "eof"])
def test_non_streaming_body_cut_short(server: ScriptedServer, fault: str) -> None:
    server.enqueue(Turn(text="hello world", fault=fault))
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        post(server, "/chat/completions", {"model": "m"})


def test_every_fault_name_is_accepted() -> None:
    assert {Turn(fault=f).fault for f in FAULTS} == set(FAULTS)


# --- delay, connections, async use, process mode ----------------------------------------------------------


async def test_per_chunk_delay_sends_chunks_separately(server: ScriptedServer, anyio_backend: str) -> None:
    server.enqueue(Turn(text=["a", "b", "c"], delay=0.02))
    reads = []
    with anyio.fail_after(10):
        async with httpx.AsyncClient(base_url=server.url) as client:
            async with client.stream(
                "POST", "/chat/completions", json={"model": "m", "stream": True}
            ) as response:
                async for chunk in response.aiter_raw():
                    reads.append(chunk)
    assert len(reads) >= 5  # role chunk, three deltas, finish, usage, [DONE]: not one write
    assert b"".join(reads).count(b"data: ") == 7


async def test_keep_alive_reuses_one_connection_and_none_is_left_behind(
    server: ScriptedServer, anyio_backend: str
) -> None:
    server.add_script("m", [Turn(text="x")] * 5, mode="queue")
    with anyio.fail_after(10):
        async with httpx.AsyncClient(base_url=server.url) as client:
            for _ in range(5):
                assert (
                    await client.post("/chat/completions", json={"model": "m", "stream": True})
                ).status_code == 200
            assert server.open_connections == 1
    assert server.total_connections == 1
    wait_for(lambda: server.open_connections == 0)


async def test_async_context_manager_starts_and_stops(anyio_backend: str) -> None:
    async with ScriptedServer() as server:
        server.enqueue(Turn(text="hi"))
        async with httpx.AsyncClient(base_url=server.url) as client:
            reply = await client.post("/messages", json={"model": "m"})
        assert reply.json()["content"][0]["text"] == "hi"
    with pytest.raises(httpx.ConnectError), httpx.Client() as client:
        client.post(f"{server.url}/messages", json={})


def test_stop_ends_stalled_connections() -> None:
    server = ScriptedServer().start_in_thread()
    server.enqueue(Turn(fault="stall"))
    stopper = threading.Timer(0.3, server.stop_thread)
    stopper.start()
    try:
        with (
            pytest.raises(httpx.RemoteProtocolError),
            httpx.Client(base_url=server.url, timeout=10) as client,
        ):
            client.post("/chat/completions", json={"model": "m"})
    finally:
        stopper.join()
    assert server.open_connections == 0


def test_as_a_process_with_control_endpoints() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "scripted_server.py"),
            "--port",
            "0",
            "--record",
            "--preset",
            "bench",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        root = line.split()[-1]
        with httpx.Client(base_url=root, timeout=5) as client:
            assert client.get("/_control/health").json() == {"ok": True}
            script = {"name": "p", "mode": "queue", "turns": [{"text": ["x", "y"]}, {"fault": "503"}]}
            assert client.post("/_control/scripts", json=script).json() == {"ok": True}
            assert (
                client.post("/_control/scripts", json={"name": "bad", "turns": [{"fault": "?"}]}).status_code
                == 400
            )
            reply = client.post("/v1/chat/completions", json={"model": "p"})
            assert reply.json()["choices"][0]["message"]["content"] == "xy"
            assert client.post("/v1/chat/completions", json={"model": "p"}).status_code == 503
            bench = client.post("/v1/chat/completions", json={"model": "bench", "messages": []}).json()
            assert bench["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "lookup"
            assert client.post("/_control/queue", json={"turns": [{"text": "q"}]}).json() == {"ok": True}
            queued = client.post("/v1/messages", json={"model": "other"}).json()
            assert queued["content"][0]["text"] == "q"
            recorded = client.get("/_control/requests").json()
            assert [r["body"]["model"] for r in recorded] == ["p", "p", "bench", "other"]
            client.post("/_control/reset")
            assert client.get("/_control/requests").json() == []
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def wait_for(condition: Any, timeout: float = 5.0) -> None:
    """Poll a condition the server thread makes true asynchronously (not a timing assert: it only bounds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)
