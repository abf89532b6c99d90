"""The Responses wire under the agent loop: reasoning items persisted and sent back (also after resume and
fork), hosted tool calls never run here, retries only before the first event, and the summary fallback.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from openai_replay import chunked
from responses_events import (
    completed,
    created,
    error_event,
    function_call,
    hosted_call,
    message,
    reasoning,
    sse,
)

from openagent import AgentOptions, Client, query, tool
from openagent.errors import AuthenticationError, BadRequestError, RateLimitError
from openagent.models import ModelRequest
from openagent.retry import StaminaRetry
from openagent.types import AssistantMessage, RawBlock, ResultMessage, ToolUseBlock, UserMessage
from openagent_openai import PROFILES, ResponsesProvider, web_search

pytestmark = pytest.mark.anyio

OPENAI = PROFILES["openai"]
FAST_RETRY = StaminaRetry(attempts=3, timeout=10, wait_initial=0.0, wait_max=0.0, wait_jitter=0.0)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def turn(*items: list[dict[str, Any]]) -> bytes:
    flat = [event for item in items for event in item]
    return sse(*created(), *flat, completed(flat, None))


CALL = [
    reasoning(0, [["Use the tool."]], item_id="rs_a", encrypted="enc-a"),
    function_call(1, "call_a", "add", ['{"a": 2, "b": 3}'], item_id="fc_a"),
]
ANSWER = [reasoning(0, [["Report."]], item_id="rs_b", encrypted="enc-b"), message(1, ["5"], item_id="msg_b")]
AGAIN = [message(0, ["10"], item_id="msg_c")]


class Server:
    """Answers each request with the next body; keeps the request bodies."""

    def __init__(self, bodies: list[bytes | tuple[int, bytes]]) -> None:
        self.bodies = list(bodies)
        self.sent: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(json.loads(request.content))
        body = self.bodies.pop(0)
        status, content = body if isinstance(body, tuple) else (200, body)
        if status >= 400:
            return httpx2.Response(status, headers={"content-type": "application/json"}, content=content)

        async def events() -> AsyncIterator[bytes]:  # a network chunk per event, as servers send them
            for chunk in chunked(content, "natural"):
                yield chunk

        return httpx2.Response(status, headers={"content-type": "text/event-stream"}, content=events())

    def provider(self, model: str = "gpt-5-mini") -> ResponsesProvider:
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(self))
        return ResponsesProvider(model, profile=OPENAI, api_key="sk-test-key-000", http_client=client)


async def run(prompt: str, **options: Any) -> list[Any]:
    """The messages of a run; a run that raises still yields its `ResultMessage` first."""
    messages: list[Any] = []
    with anyio.fail_after(10):
        try:
            async for message in query(prompt=prompt, options=AgentOptions(**options)):
                messages.append(message)
        except Exception as exc:  # kept for the test to check, with the messages before it
            messages.append(exc)
    return messages


def items_of(sent: dict[str, Any]) -> list[tuple[Any, Any]]:
    return [
        (i.get("role") or i.get("type"), i.get("id") or i.get("call_id") or i.get("content"))
        for i in sent["input"]
    ]


@pytest.fixture
def server() -> Iterator[Server]:
    yield Server([turn(*CALL), turn(*ANSWER), turn(*AGAIN), turn(*AGAIN)])


async def test_reasoning_is_persisted_and_sent_back_after_resume_and_fork(server: Server) -> None:
    first = await run("2 + 3?", model=server.provider(), tools=[add])
    result = first[-1]
    assert isinstance(result, ResultMessage) and result.result == "5" and not result.is_error
    calling = next(m for m in first if isinstance(m, AssistantMessage))
    assert [type(b).__name__ for b in calling.content] == [
        "ThinkingBlock",
        "RawBlock",
        "ToolUseBlock",
        "RawBlock",
    ]
    use = calling.content[2]
    assert isinstance(use, ToolUseBlock) and (use.id, use.name, use.input) == (
        "call_a",
        "add",
        {"a": 2, "b": 3},
    )
    assert calling.content[1] == RawBlock(provider="openai-responses", data=CALL[0][-1]["item"])
    # Turn two: the reasoning item with its encrypted content, then the call it led to, with its id.
    assert items_of(server.sent[1]) == [
        ("user", "2 + 3?"),
        ("reasoning", "rs_a"),
        ("function_call", "fc_a"),
        ("function_call_output", "call_a"),
    ]
    assert server.sent[1]["input"][1]["encrypted_content"] == "enc-a"
    # A new process resumes the session from its file, and forks it: the chain of thought goes on in both.
    whole_history = [
        ("user", "2 + 3?"),
        ("reasoning", "rs_a"),
        ("function_call", "fc_a"),
        ("function_call_output", "call_a"),
        ("reasoning", "rs_b"),
        ("assistant", "msg_b"),
        ("user", "Double it."),
    ]
    await run("Double it.", model=server.provider(), tools=[add], resume=result.session_id)
    assert items_of(server.sent[2]) == whole_history
    assert server.sent[2]["input"][4]["encrypted_content"] == "enc-b"
    forked = await run("Double it.", model=server.provider(), resume=result.session_id, fork_session=True)
    assert forked[-1].session_id != result.session_id
    assert items_of(server.sent[3]) == [*whole_history, ("assistant", "10"), ("user", "Double it.")]


async def test_a_hosted_search_is_never_run_here_and_goes_back_in_place() -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search"}}
    cited = message(
        1, ["Found it."], item_id="msg_w", annotations=[{"type": "url_citation", "url": "https://x"}]
    )
    server = Server([turn(hosted_call(0, search, ["searching"]), cited), turn(AGAIN[0])])
    asked: list[str] = []

    async def deny(name: str, arguments: dict[str, Any], context: Any) -> Any:
        asked.append(name)  # a hosted call must never reach the permission check: nothing runs here
        raise AssertionError(name)

    options = AgentOptions(model=server.provider(), can_use_tool=deny, extra_body={"tools": [web_search()]})
    with anyio.fail_after(10):
        async with Client(options) as client:
            await client.query("News?")
            messages = [m async for m in client.receive_response()]
            await client.query("More?")
            [m async for m in client.receive_response()]
    assert asked == [] and messages[-1].result == "Found it."
    assert server.sent[0]["tools"] == [{"type": "web_search"}]
    assert items_of(server.sent[1])[1:3] == [("web_search_call", "ws_1"), ("assistant", "msg_w")]


async def test_never_retried_once_an_event_was_handed_on() -> None:
    text = message(0, ["Hel", "lo"])
    server = Server([sse(*created(), *text[:3], error_event("rate_limit_exceeded", "Rate limit reached"))])
    messages = await run("hi", model=server.provider("gpt-4.1"), retry=FAST_RETRY)
    result, error = messages[-2:]
    assert isinstance(result, ResultMessage) and result.is_error and isinstance(error, RateLimitError)
    assert len(server.sent) == 1


async def test_retried_when_it_fails_before_the_first_event() -> None:
    server = Server(
        [sse(*created(), error_event("rate_limit_exceeded", "Rate limit reached")), turn(message(0, ["ok"]))]
    )
    messages = await run("hi", model=server.provider("gpt-4.1"), retry=FAST_RETRY)
    assert messages[-1].result == "ok" and len(server.sent) == 2


SUMMARY_REFUSED = json.dumps(
    {
        "error": {
            "message": "Your organization must be verified to generate reasoning summaries.",
            "type": "invalid_request_error",
            "param": "reasoning.summary",
            "code": "unsupported_value",
        }
    }
).encode()


async def test_an_organization_refused_summaries_gets_none_from_then_on() -> None:
    server = Server([(400, SUMMARY_REFUSED), turn(message(0, ["ok"])), turn(message(0, ["again"]))])
    provider = server.provider("o4-mini")
    request = ModelRequest("o4-mini", [UserMessage(content="hi")])
    with anyio.fail_after(5):
        assert [e async for e in provider.stream(request)][0].text == "ok"
        [e async for e in provider.stream(request)]
    assert server.sent[0]["reasoning"] == {"summary": "auto"}
    assert "reasoning" not in server.sent[1] and "reasoning" not in server.sent[2]
    assert server.sent[1]["include"] == ["reasoning.encrypted_content"]


async def test_another_bad_request_is_not_retried() -> None:
    refused = json.dumps({"error": {"message": "Unsupported parameter: 'top_k'", "param": "top_k"}}).encode()
    server = Server([(400, refused)])
    with anyio.fail_after(5), pytest.raises(BadRequestError, match="top_k"):
        [e async for e in server.provider().stream(ModelRequest("gpt-5", [UserMessage(content="hi")]))]
    assert len(server.sent) == 1


async def test_the_key_is_redacted_from_an_http_error() -> None:
    echoed = json.dumps({"error": {"message": "Incorrect API key provided: sk-test-key-000."}}).encode()
    server = Server([(401, echoed)])
    with anyio.fail_after(5), pytest.raises(AuthenticationError) as caught:
        [e async for e in server.provider().stream(ModelRequest("gpt-5", [UserMessage(content="hi")]))]
    assert "sk-test-key-000" not in str(caught.value) and "[redacted]" in str(caught.value)
    assert caught.value.status_code == 401
