"""A whole agent run on the anthropic provider: tools, thinking replay, cost and the budget limit."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from anthropic_streams import args, block, delta, end, sse, start, stop_block, text

from openagent import AgentOptions, query, tool
from openagent._types import (
    AssistantMessage,
    RawBlock,
    ResultMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from openagent_anthropic import MessagesProvider


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TURNS = [
    sse(
        start({"input_tokens": 400, "output_tokens": 1}),
        block(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="thinking_delta", thinking="Use add."),
        delta(0, type="signature_delta", signature="SIG1"),
        stop_block(0),
        block(1, {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}),
        args(1, '{"a": 2, "b": 3}'),
        stop_block(1),
        *end("tool_use", 50),
    ),
    sse(
        start({"input_tokens": 480, "output_tokens": 1, "cache_read_input_tokens": 400}),
        block(0, {"type": "text", "text": ""}),
        text(0, "2 + 3 = 5."),
        stop_block(0),
        *end("end_turn", 10),
    ),
]


def provider(sent: list[dict[str, Any]]) -> MessagesProvider:
    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=TURNS[len(sent) - 1]
        )

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return MessagesProvider(
        "claude-haiku-4-5", api_key="k", base_url="http://anthropic.test", http_client=client
    )


@pytest.mark.anyio
async def test_agent_runs_tools_replays_thinking_and_reports_cost() -> None:
    sent: list[dict[str, Any]] = []
    model = provider(sent)
    options = AgentOptions(
        model=model, tools=[add], extra_body={"thinking": {"type": "enabled", "budget_tokens": 1024}}
    )
    messages = [m async for m in query(prompt="What is 2 + 3?", options=options)]
    await model.aclose()
    first = next(m for m in messages if isinstance(m, AssistantMessage))
    assert first.content == [
        ThinkingBlock(thinking="Use add.", signature="SIG1"),
        ToolUseBlock(id="toolu_1", name="add", input={"a": 2, "b": 3}),
    ]
    results = [m for m in messages if isinstance(m, UserMessage)]
    assert isinstance(results[-1].content[0], ToolResultBlock) and "5" in str(results[-1].content[0].content)
    replayed = sent[1]["messages"][1]["content"]
    assert replayed[0] == {"type": "thinking", "thinking": "Use add.", "signature": "SIG1"}
    assert replayed[1]["type"] == "tool_use" and sent[1]["messages"][2]["content"][0]["type"] == "tool_result"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and result.result == "2 + 3 = 5."
    # haiku 4.5: $1 in, $5 out, $0.10 cache read per million tokens
    expected = ((400 + 480) * 1 + (50 + 10) * 5 + 400 * 0.10) / 1e6
    assert result.total_cost_usd == pytest.approx(expected)


@pytest.mark.anyio
async def test_budget_limit_stops_the_run() -> None:
    sent: list[dict[str, Any]] = []
    model = provider(sent)
    options = AgentOptions(model=model, tools=[add], max_budget_usd=1e-9)
    messages = [m async for m in query(prompt="What is 2 + 3?", options=options)]
    await model.aclose()
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_budget_usd"
    assert len(sent) == 1


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}
PAUSED = [
    sse(
        start(),
        block(0, {"type": "text", "text": ""}),
        text(0, "Searching."),
        stop_block(0),
        block(1, SEARCH),
        args(1, '{"query": "weather paris"}'),
        stop_block(1),
        *end("pause_turn", 20, server_tool_use={"web_search_requests": 1}),
    ),
    sse(start(), block(0, {"type": "text", "text": ""}), text(0, "Sunny."), stop_block(0), *end("end_turn")),
]


@pytest.mark.anyio
async def test_a_paused_server_tool_turn_is_sent_back_and_finished() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=PAUSED[len(sent) - 1]
        )

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    model = MessagesProvider(
        "claude-haiku-4-5", api_key="k", base_url="http://anthropic.test", http_client=client
    )
    web_search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
    options = AgentOptions(model=model, extra_body={"tools": [web_search], "cache_control": None})
    messages = [m async for m in query(prompt="Weather in Paris?", options=options)]
    await model.aclose()
    search = {**SEARCH, "input": {"query": "weather paris"}}
    paused = next(m for m in messages if isinstance(m, AssistantMessage))
    assert paused.stop_reason == "pause_turn"
    assert paused.content == [TextBlock(text="Searching."), RawBlock(provider="anthropic", data=search)]
    assert len(sent) == 2
    assert sent[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}, search]},
    ]
    assert sent[1]["tools"] == [web_search]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and result.result == "Sunny."
    assert result.num_turns == 2
