"""Build the constructed cassettes: Anthropic API exchanges no server on this machine can produce.

Run ``python tests/anthropic/cassette_builder.py`` after changing a request in test_contract.py's
contract or test_constructed.py. The response streams follow the examples in Anthropic's Messages
streaming, extended thinking, web search and prompt caching documentation; every cassette's metadata
says it was constructed, and ``ANTHROPIC_API_KEY=… nox -s record`` replaces it with a real recording.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from anthropic_streams import PING, args, assemble, block, delta, end, sse, start, stop_block, text
from test_constructed import (
    MODEL,
    REDACTED_DATA,
    SIGNATURE,
    THINKING_HISTORY,
    follow_up,
    requests,
)
from test_contract import TestAnthropicContract

from openagent._contract import ADD_TOOL, PROMPTS, WEATHER_TOOL
from openagent._models import ModelRequest
from openagent._types import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from openagent_anthropic._messages import build_body, parse_stream

ROOT = Path(__file__).resolve().parents[2] / "cassettes" / "anthropic"
METADATA = {
    "source": "constructed",
    "constructed_from": "Anthropic Messages API documentation: streaming events, extended thinking, "
    "redacted thinking, web search tool, prompt caching, errors",
    "rerecord": "ANTHROPIC_API_KEY=... nox -s record",
}


def usage(input_tokens: int, **more: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
        **more,
    }


def answer(*parts: str, input_tokens: int = 20, output: int = 10, **extra: Any) -> bytes:
    deltas = [text(0, p) for p in parts]
    return sse(
        start(usage(input_tokens, **extra)),
        block(0, {"type": "text", "text": ""}),
        PING,
        *deltas,
        stop_block(0),
        *end("end_turn", output),
    )


def error(kind: str, message: str) -> bytes:
    return json.dumps(
        {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        }
    ).encode()


def interaction(
    request: ModelRequest, body: bytes, status: int = 200, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    payload, extra_headers = build_body(request)
    payload["stream"] = True
    sent = {
        "content-type": ["application/json"],
        "anthropic-version": ["2023-06-01"],
        **{k: [v] for k, v in extra_headers.items()},
    }
    content_type = "text/event-stream; charset=utf-8" if status == 200 else "application/json"
    received = {
        "content-type": [content_type],
        "request-id": ["req_011CSHoEeqs5C35K2UUqR7Fy"],
        **{k: [v] for k, v in (headers or {}).items()},
    }
    reasons = {200: "OK", 401: "Unauthorized", 429: "Too Many Requests", 529: ""}
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.anthropic.com/v1/messages",
            "headers": sent,
            "body": json.dumps(payload),
        },
        "response": {
            "status": {"code": status, "message": reasons[status]},
            "headers": received,
            "body": {"string": body.decode()},
        },
    }


def write(module: str, name: str, interactions: list[dict[str, Any]]) -> None:
    path = ROOT / module / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    # A top-level key of our own: vcrpy ignores it, and pytest-recording cannot load vcrpy's "metadata".
    data = {"version": 1, "provenance": METADATA, "interactions": interactions}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))


def first_turn(body: bytes) -> AssistantMessage:
    async def parse() -> list[Any]:
        async def chunks() -> Any:
            yield body

        return [event async for event in parse_stream(chunks())]

    return AssistantMessage(model=MODEL, content=assemble(anyio.run(parse)))


def contract() -> None:
    suite = TestAnthropicContract()
    add = PROMPTS["tool"]
    call = ToolUseBlock(id="toolu_01T1x1fJ34qAmk2tNTrN7Up6", name="add", input={"a": 1234, "b": 4321})
    call_stream = sse(
        start(usage(410)),
        block(0, {"type": "text", "text": ""}),
        text(0, "I'll add those."),
        stop_block(0),
        block(1, {"type": "tool_use", "id": call.id, "name": "add", "input": {}}),
        args(1, ""),
        args(1, '{"a": 1234'),
        args(1, ', "b": 4321}'),
        stop_block(1),
        *end("tool_use", 62),
    )
    history = [
        AssistantMessage(content=[TextBlock(text="I'll add those."), call], model=suite.model),
        UserMessage(content=[ToolResultBlock(tool_use_id=call.id, content="5555")]),
    ]
    paris, london = "toolu_01Paris9aK2bV7XqLr3Zt8Wm", "toolu_01London4hQ8sN2cY6pJ1eRu"
    weather = sse(
        start(usage(395)),
        block(0, {"type": "text", "text": ""}),
        text(0, "Checking both cities."),
        stop_block(0),
        block(1, {"type": "tool_use", "id": paris, "name": "get_weather", "input": {}}),
        args(1, '{"city": "Paris"}'),
        stop_block(1),
        block(2, {"type": "tool_use", "id": london, "name": "get_weather", "input": {}}),
        args(2, '{"city": '),
        args(2, '"London"}'),
        stop_block(2),
        *end("tool_use", 88),
    )
    prompt = PROMPTS["parallel"]
    hello = suite.request(PROMPTS["text"])
    write("test_contract", "test_text", [interaction(hello, answer("Hello", input_tokens=14, output=4))])
    write(
        "test_contract",
        "test_tool_round_trip",
        [
            interaction(suite.request(add, tools=[ADD_TOOL]), call_stream),
            interaction(
                suite.request(add, tools=[ADD_TOOL], history=history),
                answer("1234 + 4321 = ", "5555.", input_tokens=490, output=14),
            ),
        ],
    )
    write(
        "test_contract",
        "test_parallel_tools",
        [interaction(suite.request(prompt, tools=[WEATHER_TOOL]), weather)],
    )
    write(
        "test_contract",
        "test_usage",
        [
            interaction(
                suite.request(PROMPTS["usage"]), answer("1, 2, 3", ", 4, 5", input_tokens=13, output=14)
            )
        ],
    )
    write(
        "test_contract",
        "test_errors",
        [interaction(hello, error("authentication_error", "invalid x-api-key"), 401)],
    )


def constructed() -> None:
    req = requests()
    call = THINKING_HISTORY[0].content[1]
    thinking = sse(
        start(usage(420)),
        block(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="thinking_delta", thinking="The user wants 2 + 3."),
        delta(0, type="thinking_delta", thinking=" I should call the add tool."),
        delta(0, type="signature_delta", signature=SIGNATURE),
        stop_block(0),
        block(1, {"type": "tool_use", "id": call.id, "name": "add", "input": {}}),
        args(1, '{"a": 2, '),
        args(1, '"b": 3}'),
        stop_block(1),
        *end("tool_use", 85),
    )
    first, second = req["test_thinking_signature_round_trip"]
    write(
        "test_constructed",
        "test_thinking_signature_round_trip",
        [
            interaction(first, thinking),
            interaction(second, answer("2 + 3 = 5.", input_tokens=530, output=9)),
        ],
    )

    redacted = sse(
        start(usage(96)),
        block(0, {"type": "thinking", "thinking": ""}),
        delta(0, type="thinking_delta", thinking="This request contains a test string."),
        delta(0, type="signature_delta", signature="EuYBCkQYAiJAg3ohZnSjdkm6"),
        stop_block(0),
        block(1, {"type": "redacted_thinking", "data": REDACTED_DATA}),
        stop_block(1),
        block(2, {"type": "text", "text": ""}),
        text(2, "That string triggers redacted thinking."),
        stop_block(2),
        *end("end_turn", 140),
    )
    (first,) = req["test_redacted_thinking_survives_replay"]
    write(
        "test_constructed",
        "test_redacted_thinking_survives_replay",
        [
            interaction(first, redacted),
            interaction(
                follow_up(first, first_turn(redacted), "Thanks."), answer("You're welcome.", input_tokens=250)
            ),
        ],
    )

    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
        "content": [
            {
                "type": "web_search_result",
                "title": "Paris weather today",
                "page_age": "1 hour ago",
                "url": "https://weather.example/paris",
                "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1",
            }
        ],
    }
    citation = {
        "type": "web_search_result_location",
        "url": "https://weather.example/paris",
        "title": "Paris weather today",
        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJm",
        "cited_text": "Sunny, 21 °C",
    }
    web = sse(
        start(usage(2200)),
        block(0, {"type": "text", "text": ""}),
        text(0, "Let me search."),
        stop_block(0),
        block(
            1,
            {
                "type": "server_tool_use",
                "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB",
                "name": "web_search",
                "input": {},
            },
        ),
        args(1, ""),
        args(1, '{"query": "weather'),
        args(1, ' Paris today"}'),
        stop_block(1),
        block(2, result),
        stop_block(2),
        block(3, {"type": "text", "text": ""}),
        delta(3, type="citations_delta", citation=citation),
        text(3, "It is sunny and 21 °C in Paris."),
        stop_block(3),
        *end("end_turn", 120, server_tool_use={"web_search_requests": 1}),
    )
    (first,) = req["test_web_search_blocks_survive_replay"]
    write(
        "test_constructed",
        "test_web_search_blocks_survive_replay",
        [
            interaction(first, web),
            interaction(
                follow_up(first, first_turn(web), "Thanks!"), answer("You're welcome!", input_tokens=2600)
            ),
        ],
    )

    first, again = req["test_prompt_cache_tokens_and_cost"]
    write(
        "test_constructed",
        "test_prompt_cache_tokens_and_cost",
        [
            interaction(first, answer("Hi!", input_tokens=4, output=5, cache_creation_input_tokens=2210)),
            interaction(again, answer("Hi!", input_tokens=4, output=5, cache_read_input_tokens=2210)),
        ],
    )
    (plain,) = req["test_overloaded_529"]
    write(
        "test_constructed",
        "test_overloaded_529",
        [interaction(plain, error("overloaded_error", "Overloaded"), 529)],
    )
    write(
        "test_constructed",
        "test_rate_limited_429_with_retry_after",
        [
            interaction(
                plain,
                error("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
                429,
                {"retry-after": "12"},
            ),
        ],
    )
    mid = sse(
        start(usage(10)),
        block(0, {"type": "text", "text": ""}),
        text(0, "Hel"),
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )
    write("test_constructed", "test_overloaded_error_event_mid_stream", [interaction(plain, mid)])


if __name__ == "__main__":
    contract()
    constructed()
