"""The Responses stream parser: every shape of stream it takes, whole and re-chunked, through the real provider.

Each table row names what it shows; each stream is replayed at its natural chunking (one network chunk per
event), at 1-byte and 7-byte splits, and without ``event:`` lines (some proxies drop them), over an httpx mock
transport. Failures (error events, failed and truncated responses, garbage) are in the second table.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import anyio
import pytest
from openai_replay import Replay
from responses_events import (
    RESPONSE,
    completed,
    created,
    error_event,
    failed,
    function_call,
    hosted_call,
    incomplete,
    message,
    reasoning,
    sse,
    usage,
)

from openagent.errors import (
    ContextWindowExceededError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
)
from openagent.models import (
    ModelEvent,
    ModelRequest,
    RawContent,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from openagent.types import Usage, UserMessage
from openagent_openai import PROFILES, ResponsesProvider

pytestmark = pytest.mark.anyio

PROFILE = dataclasses.replace(PROFILES["openai-responses"], base_url="http://responses.test/v1")
REQUEST = ModelRequest("test-model", [UserMessage(content="hi")])
SPLITS = ["natural", 1, 7, "unnamed"]
"""Natural chunking, 1- and 7-byte splits, and natural chunking without ``event:`` lines."""


def body_of(events: list[dict[str, Any]], split: Any) -> tuple[bytes, Any]:
    return (sse(*events, named=False), "natural") if split == "unnamed" else (sse(*events), split)


async def run(replay: Replay, events: list[dict[str, Any]], split: Any = "natural") -> list[ModelEvent]:
    body, split = body_of(events, split)
    provider = replay.provider(body, split=split, profile=PROFILE, wire=ResponsesProvider)
    with anyio.fail_after(5):
        return [event async for event in provider.stream(REQUEST)]


def raw(events: list[dict[str, Any]], n: int = -1) -> RawContent:
    """The `RawContent` of the ``n``-th finished item of ``events``."""
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    return RawContent("openai-responses", done[n])


def used(input_tokens: int, output_tokens: int, cached: int = 0) -> Usage:
    return Usage(
        input_tokens=input_tokens - cached, output_tokens=output_tokens, cache_read_input_tokens=cached
    )


TEXT = message(0, ["Hel", "lo"])
THINK = reasoning(0, [["Adding", " the numbers."], ["Done."]])
THEN_TEXT = message(1, ["5555"])
CALL = function_call(0, "call_1", "add", ['{"a": 1,', ' "b": 2}'])
CALLS_AFTER_THINKING = [
    *reasoning(0, [["Two cities."]]),
    *function_call(1, "call_p", "get_weather", ['{"city": "Paris"}']),
    *function_call(2, "call_l", "get_weather", ['{"city":', ' "London"}']),
]
SEARCH_ITEM = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "openagent"},
}
CITED = message(
    1,
    ["openagent is ", "an SDK."],
    annotations=[
        {"type": "url_citation", "start_index": 0, "end_index": 9, "url": "https://x.test", "title": "x"}
    ],
)
SEARCHED = [*hosted_call(0, SEARCH_ITEM, ["in_progress", "searching", "completed"]), *CITED]

STREAMS = [
    pytest.param(
        [*created(), *TEXT, completed(TEXT, usage(14, 2, cached=4))],
        [TextDelta("Hel"), TextDelta("lo"), used(14, 2, cached=4), Stop("end_turn", "completed")],
        id="text-with-usage-and-cached-tokens",
    ),
    pytest.param(
        [*created(), *THINK, *THEN_TEXT, completed([*THINK, *THEN_TEXT], usage(20, 90, reasoning=80))],
        [
            ThinkingDelta("Adding"),
            ThinkingDelta(" the numbers."),
            ThinkingDelta("\n\nDone."),
            raw(THINK),
            TextDelta("5555"),
            raw(THEN_TEXT),
            used(20, 90),
            Stop("end_turn", "completed"),
        ],
        id="reasoning-summary-parts-then-the-item-whole-then-a-message-kept-whole-for-its-id",
    ),
    pytest.param(
        [*created(), *CALL, completed(CALL, usage(30, 9))],
        [
            ToolCallStart(0, "call_1", "add"),
            ToolCallDelta(0, '{"a": 1,'),
            ToolCallDelta(0, ' "b": 2}'),
            used(30, 9),
            Stop("tool_use", "completed"),
        ],
        id="function-call-arguments-in-fragments",
    ),
    pytest.param(
        [*created(), *CALLS_AFTER_THINKING, completed(CALLS_AFTER_THINKING, None)],
        [
            ThinkingDelta("Two cities."),
            raw(CALLS_AFTER_THINKING, 0),
            ToolCallStart(0, "call_p", "get_weather"),
            ToolCallDelta(0, '{"city": "Paris"}'),
            raw(CALLS_AFTER_THINKING, 1),
            ToolCallStart(1, "call_l", "get_weather"),
            ToolCallDelta(1, '{"city":'),
            ToolCallDelta(1, ' "London"}'),
            raw(CALLS_AFTER_THINKING, 2),
            Stop("tool_use", "completed"),
        ],
        id="parallel-calls-after-reasoning-kept-whole-too",
    ),
    pytest.param(
        [*created(), *SEARCHED, completed(SEARCHED, usage(300, 20))],
        [
            raw(SEARCHED, 0),
            TextDelta("openagent is "),
            TextDelta("an SDK."),
            raw(SEARCHED, 1),
            used(300, 20),
            Stop("end_turn", "completed"),
        ],
        id="hosted-web-search-call-and-a-cited-message",
    ),
    pytest.param(
        [*created(), *TEXT, incomplete(TEXT, usage(10, 2), "max_output_tokens")],
        [TextDelta("Hel"), TextDelta("lo"), used(10, 2), Stop("max_tokens", "max_output_tokens")],
        id="incomplete-at-max-output-tokens",
    ),
    pytest.param(
        [*created(), *TEXT, incomplete(TEXT, None, "content_filter")],
        [TextDelta("Hel"), TextDelta("lo"), Stop("refusal", "content_filter")],
        id="incomplete-by-content-filter",
    ),
    pytest.param(
        [
            *created(),
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "msg_r", "type": "message"},
            },
            {"type": "response.refusal.delta", "item_id": "msg_r", "output_index": 0, "delta": "I can't"},
            {"type": "response.refusal.delta", "item_id": "msg_r", "output_index": 0, "delta": " help."},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "id": "msg_r",
                    "type": "message",
                    "content": [{"type": "refusal", "refusal": "I can't help."}],
                },
            },
            {"type": "response.completed", "response": {**RESPONSE, "status": "completed"}},
        ],
        [TextDelta("I can't"), TextDelta(" help."), Stop("refusal", "completed")],
        id="refusal",
    ),
    pytest.param(
        [
            *created(),
            {"type": "response.output_item.done", "output_index": 0, "item": TEXT[-1]["item"]},
            {"type": "response.output_item.done", "output_index": 1, "item": CALL[-1]["item"]},
            completed([*TEXT, *CALL], None),
        ],
        [
            TextDelta("Hello"),
            ToolCallStart(0, "call_1", "add"),
            ToolCallDelta(0, '{"a": 1, "b": 2}'),
            Stop("tool_use", "completed"),
        ],
        id="finished-items-only-no-deltas",
    ),
    pytest.param(
        [
            {"type": "response.output_item.added", "item": {"id": "fc_x", "type": "function_call"}},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_x", "delta": '{"a"'},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_x", "delta": ": 1}"},
            {
                "type": "response.output_item.done",
                "item": {"id": "fc_x", "type": "function_call", "name": "add", "arguments": '{"a": 1}'},
            },
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
        [ToolCallStart(0, "gen_0", "add"), ToolCallDelta(0, '{"a": 1}'), Stop("tool_use", "completed")],
        id="call-named-and-identified-only-when-done-held-back-then-given-an-id",
    ),
    pytest.param(
        [
            *function_call(0, "call_e", "now", []),
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
        [ToolCallStart(0, "call_e", "now"), ToolCallDelta(0, "{}"), Stop("tool_use", "completed")],
        id="call-without-arguments-gets-an-empty-object",
    ),
    pytest.param(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "rs_o", "type": "reasoning"},
            },
            {
                "type": "response.reasoning_text.delta",
                "item_id": "rs_o",
                "content_index": 0,
                "delta": "Think",
            },
            {"type": "response.reasoning_text.delta", "item_id": "rs_o", "content_index": 0, "delta": "ing."},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "id": "rs_o",
                    "type": "reasoning",
                    "content": [{"type": "reasoning_text", "text": "Thinking."}],
                },
            },
            *message(1, ["Yes"]),
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
        [
            ThinkingDelta("Think"),
            ThinkingDelta("ing."),
            RawContent(
                "openai-responses",
                {
                    "id": "rs_o",
                    "type": "reasoning",
                    "content": [{"type": "reasoning_text", "text": "Thinking."}],
                },
            ),
            TextDelta("Yes"),
            RawContent("openai-responses", message(1, ["Yes"])[-1]["item"]),
            Stop("end_turn", "completed"),
        ],
        id="raw-reasoning-text-of-open-weight-models",
    ),
    pytest.param(
        # llama.cpp's server: no sequence numbers, no output or content indexes, a reduced response object.
        [
            {
                "type": "response.created",
                "response": {"id": "resp_x", "object": "response", "status": "in_progress"},
            },
            {
                "type": "response.output_item.added",
                "item": {
                    "content": [],
                    "id": "msg_x",
                    "role": "assistant",
                    "status": "in_progress",
                    "type": "message",
                },
            },
            {
                "type": "response.content_part.added",
                "item_id": "msg_x",
                "part": {"type": "output_text", "text": ""},
            },
            {"type": "response.output_text.delta", "item_id": "msg_x", "delta": "Hello"},
            {"type": "response.output_text.delta", "item_id": "msg_x", "delta": "."},
            {"type": "response.output_text.done", "item_id": "msg_x", "text": "Hello."},
            {
                "type": "response.output_item.done",
                "item": {
                    "type": "message",
                    "status": "completed",
                    "id": "msg_x",
                    "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Hello."}],
                    "role": "assistant",
                },
            },
            {
                "type": "response.completed",
                "response": {
                    "id": "resp_x",
                    "object": "response",
                    "status": "completed",
                    "usage": {
                        "input_tokens": 38,
                        "output_tokens": 3,
                        "total_tokens": 41,
                        "input_tokens_details": {"cached_tokens": 0},
                    },
                },
                "timings": {"prompt_n": 38},
            },
        ],
        [TextDelta("Hello"), TextDelta("."), used(38, 3), Stop("end_turn", "completed")],
        id="llama.cpp-no-sequence-numbers-nor-indexes",
    ),
    pytest.param(
        [
            {"type": "response.output_item.added", "item": {"id": "msg_n", "type": "message"}},
            {"type": "response.output_text.delta", "delta": "No "},
            {"type": "response.output_text.delta", "item_id": "msg_other", "delta": "ids."},
            {
                "type": "response.output_item.done",
                "item": message(0, ["No ids."], item_id="msg_n")[-1]["item"],
            },
            {"type": "response.reasoning_summary_text.delta", "delta": "Loose"},
            {
                "type": "response.output_item.done",
                "item": {
                    "id": "rs_n",
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "Loose"}],
                },
            },
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
        [
            TextDelta("No "),
            TextDelta("ids."),
            ThinkingDelta("Loose"),
            RawContent(
                "openai-responses",
                {"id": "rs_n", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Loose"}]},
            ),
            Stop("end_turn", "completed"),
        ],
        id="deltas-naming-no-known-item-are-not-repeated-when-it-finishes",
    ),
    pytest.param(
        [
            {
                "type": "response.output_item.added",
                "item": {"id": "fc_n", "type": "function_call", "call_id": "c_n", "name": "add"},
            },
            {"type": "response.function_call_arguments.delta", "delta": '{"a": 1}'},
            {"type": "response.function_call_arguments.done", "arguments": '{"a": 1}'},
            {
                "type": "response.output_item.done",
                "item": {
                    "id": "fc_n",
                    "type": "function_call",
                    "call_id": "c_n",
                    "name": "add",
                    "arguments": '{"a": 1}',
                },
            },
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
        [ToolCallStart(0, "c_n", "add"), ToolCallDelta(0, '{"a": 1}'), Stop("tool_use", "completed")],
        id="argument-deltas-naming-no-item-belong-to-the-call-announced",
    ),
    pytest.param(
        [
            *created(),
            {"type": "response.new_kind_of_event", "anything": [1, 2]},
            {"type": "response.output_text.annotation.added", "item_id": "msg_1", "annotation": {}},
            *TEXT,
            completed(TEXT, None),
            {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "after the end"},
        ],
        [TextDelta("Hel"), TextDelta("lo"), Stop("end_turn", "completed")],
        id="unknown-events-ignored-and-nothing-after-the-end",
    ),
]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("events", "expected"), STREAMS)
async def test_stream(
    events: list[dict[str, Any]], expected: list[ModelEvent], split: Any, replay: Replay, fixed_ids: None
) -> None:
    assert await run(replay, events, split) == expected


async def test_unknown_event_types_are_logged(replay: Replay, caplog: pytest.LogCaptureFixture) -> None:
    events = [*created(), {"type": "response.brand_new"}, *TEXT, completed(TEXT, None)]
    with caplog.at_level(logging.DEBUG, logger="openagent.openai"):
        await run(replay, events)
    assert "response.brand_new" in caplog.text
    assert "response.created" not in caplog.text  # known events are not "unknown"


def test_every_event_type_of_the_official_client_is_known() -> None:
    """Each event type `openai.types.responses.ResponseStreamEvent` names is handled or known to carry nothing."""
    import typing

    from openai.types.responses import ResponseStreamEvent

    from openagent_openai._responses import _QUIET, ResponsesStream

    union = typing.get_args(ResponseStreamEvent)[0]
    names = {
        n for cls in typing.get_args(union) for n in typing.get_args(cls.model_fields["type"].annotation)
    }
    assert len(names) > 50
    known = _QUIET | set(ResponsesStream._handlers) | {"response.output_text.delta"}
    assert names - known == set()


# --- failures ------------------------------------------------------------------------------------------------

FAILURES = [
    pytest.param(
        [*created(), *TEXT[:3], error_event(None, "The server had an error while processing your request.")],
        StreamError,
        "error event: The server had an error while processing your request.",
        id="error-event-mid-answer",
    ),
    pytest.param(
        [*created(), error_event("rate_limit_exceeded", "Rate limit reached for gpt-5")],
        RateLimitError,
        "error event: rate_limit_exceeded: Rate limit reached for gpt-5",
        id="error-event-rate-limit-typed",
    ),
    pytest.param(
        [{"type": "error", "error": {"code": "server_error", "message": "boom"}}],
        ServerError,
        "error event: server_error: boom",
        id="error-event-nested-error-object",
    ),
    pytest.param(
        [*created(), failed("server_error", "The model failed to generate a response.")],
        ServerError,
        "the response failed: server_error: The model failed to generate a response.",
        id="failed-response-server-error",
    ),
    pytest.param(
        [*created(), failed("context_length_exceeded", "Your input exceeds the context window.")],
        ContextWindowExceededError,
        "context_length_exceeded",
        id="failed-response-context-overflow-lets-the-loop-compact",
    ),
    pytest.param(
        [*created(), failed("invalid_prompt", "Invalid prompt: flagged.")],
        StreamError,
        "the response failed: invalid_prompt: Invalid prompt: flagged.",
        id="failed-response-other-code",
    ),
    pytest.param(
        [*created(), {"type": "response.failed", "response": {"status": "failed", "error": None}}],
        StreamError,
        "the response failed",
        id="failed-response-without-an-error-object",
    ),
    pytest.param(
        [*created(), *TEXT[:4]],
        StreamError,
        "before the response was complete",
        id="truncated-mid-text",
    ),
    pytest.param(
        [*created(), *CALL[:2]],
        StreamError,
        "in the middle of a tool call",
        id="truncated-mid-tool-call",
    ),
    pytest.param(
        [*created(), {"type": "response.output_item.added", "output_index": 0, "item": "not an item"}],
        StreamError,
        "without an item",
        id="item-event-without-an-item",
    ),
]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("events", "error", "text"), FAILURES)
async def test_failure(
    events: list[dict[str, Any]], error: type[ProviderError], text: str, split: Any, replay: Replay
) -> None:
    with pytest.raises(error) as caught:
        await run(replay, events, split)
    assert type(caught.value) is error
    assert text in caught.value.message and caught.value.provider == "openai-responses"


@pytest.mark.parametrize(
    ("body", "text"),
    [
        pytest.param(b"", "empty response", id="empty-body"),
        pytest.param(b"event: response.created\ndata: {not json\n\n", "not JSON", id="data-not-json"),
        pytest.param(b"data: [1, 2]\n\n", "not a JSON object", id="data-not-an-object"),
        pytest.param(
            b"<html><body>502 Bad Gateway</body></html>", "not an event stream", id="html-as-event-stream"
        ),
    ],
)
async def test_malformed_bodies(body: bytes, text: str, replay: Replay) -> None:
    provider = replay.provider(body, profile=PROFILE, wire=ResponsesProvider)
    with anyio.fail_after(5), pytest.raises(StreamError, match=text):
        [event async for event in provider.stream(REQUEST)]


async def test_a_whole_response_object_when_stream_is_ignored(replay: Replay) -> None:
    items = [*THINK, *THEN_TEXT]
    whole = completed(items, usage(20, 90))["response"]
    provider = replay.provider(
        json.dumps(whole).encode(),
        headers={"content-type": "application/json"},
        profile=PROFILE,
        wire=ResponsesProvider,
    )
    with anyio.fail_after(5):
        events = [event async for event in provider.stream(REQUEST)]
    assert events == [
        ThinkingDelta("Adding the numbers.\n\nDone."),
        raw(THINK),
        TextDelta("5555"),
        raw(THEN_TEXT),
        used(20, 90),
        Stop("end_turn", "completed"),
    ]


async def test_an_error_object_in_place_of_the_stream(replay: Replay) -> None:
    error = {"error": {"code": "server_error", "message": "overloaded"}}
    provider = replay.provider(
        json.dumps(error).encode(),
        headers={"content-type": "application/json"},
        profile=PROFILE,
        wire=ResponsesProvider,
    )
    with anyio.fail_after(5), pytest.raises(ServerError, match="overloaded"):
        [event async for event in provider.stream(REQUEST)]


async def test_the_key_is_redacted_from_an_error_event(replay: Replay) -> None:
    events = [error_event("invalid_api_key", "Incorrect API key provided: sk-live-0123456789abcdef.")]
    provider = replay.provider(sse(*events), profile=PROFILE, wire=ResponsesProvider)
    provider._api_key = "sk-live-0123456789abcdef"
    with anyio.fail_after(5), pytest.raises(StreamError) as caught:
        [event async for event in provider.stream(REQUEST)]
    assert "sk-live" not in str(caught.value) and "sk-live" not in (caught.value.body or "")
    assert "[redacted]" in caught.value.message


async def test_the_rest_of_the_body_is_read_after_an_error_event(replay: Replay) -> None:
    """A typed error from the stream (not only a malformed one) still reads the body to its end first."""
    read: list[bytes] = []
    parts = [sse(*created(), *TEXT[:3]), sse(error_event("rate_limit_exceeded", "slow down")), sse(*TEXT[3:])]

    def answer(request: Any) -> Any:
        import httpx2

        async def body() -> Any:
            for part in parts:
                read.append(part)
                yield part

        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    provider = replay.provider(profile=PROFILE, wire=ResponsesProvider, handler=answer)
    with anyio.fail_after(5), pytest.raises(RateLimitError):
        [event async for event in provider.stream(REQUEST)]
    assert len(read) == 3, "the body after the error event was not read"


def _every_event() -> tuple[list[dict[str, Any]], list[ModelEvent]]:
    """One stream with an event of every type the official client knows (but the three that end a turn
    differently: ``error``, ``response.failed``, ``response.incomplete``), and the events it makes."""
    code = {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "status": "completed",
        "code": "1+1",
        "outputs": [],
    }
    search = {
        "id": "fs_1",
        "type": "file_search_call",
        "status": "completed",
        "queries": ["q"],
        "results": None,
    }
    tools = {"id": "mcpl_1", "type": "mcp_list_tools", "server_label": "docs", "tools": []}
    steps = [
        *created(),
        {"type": "response.queued", "response": {**RESPONSE, "status": "queued"}},
        *THINK[:-1],
        {"type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0, "delta": " More."},
        {"type": "response.reasoning_text.done", "item_id": "rs_1", "output_index": 0, "text": " More."},
        THINK[-1],
        *hosted_call(1, SEARCH_ITEM, ["in_progress", "searching", "completed"]),
        *hosted_call(2, search, ["in_progress", "searching", "completed"]),
        *hosted_call(3, code, ["in_progress", "interpreting", "completed"])[:-1],
        {
            "type": "response.code_interpreter_call_code.delta",
            "item_id": "ci_1",
            "output_index": 3,
            "delta": "1+1",
        },
        {
            "type": "response.code_interpreter_call_code.done",
            "item_id": "ci_1",
            "output_index": 3,
            "code": "1+1",
        },
        hosted_call(3, code, [])[-1],
        *hosted_call(4, tools, ["in_progress", "completed", "failed"]),
    ]
    quiet = [
        "response.mcp_call.in_progress", "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
        "response.mcp_call.completed", "response.mcp_call.failed", "response.image_generation_call.in_progress",
        "response.image_generation_call.generating", "response.image_generation_call.partial_image",
        "response.image_generation_call.completed", "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done", "response.audio.delta", "response.audio.done",
        "response.audio.transcript.delta", "response.audio.transcript.done", "response.shell_call_command.added",
        "response.shell_call_command.delta", "response.shell_call_command.done",
        "response.shell_call_output_content.delta", "response.shell_call_output_content.done",
        "response.compaction.compacting", "response.output_text.annotation.added",
    ]  # fmt: skip
    steps += [{"type": t, "item_id": "x_1", "output_index": 5, "delta": "ignored"} for t in quiet]
    refusal = {"type": "message", "id": "msg_r", "content": [{"type": "refusal", "refusal": "No."}]}
    steps += [
        {"type": "response.output_item.added", "output_index": 6, "item": {**refusal, "content": []}},
        {"type": "response.refusal.delta", "item_id": "msg_r", "output_index": 6, "delta": "No."},
        {"type": "response.refusal.done", "item_id": "msg_r", "output_index": 6, "refusal": "No."},
        {"type": "response.output_item.done", "output_index": 6, "item": refusal},
        *message(7, ["Hi"], item_id="msg_h"),
        *function_call(8, "call_e", "add", ['{"a":', " 1}"]),
        completed([], usage(9, 9)),
    ]
    expected: list[ModelEvent] = [
        ThinkingDelta("Adding"),
        ThinkingDelta(" the numbers."),
        ThinkingDelta("\n\nDone."),
        ThinkingDelta(" More."),
        raw(THINK),
        raw(hosted_call(1, SEARCH_ITEM, [])),
        raw(hosted_call(2, search, [])),
        raw(hosted_call(3, code, [])),
        raw(hosted_call(4, tools, [])),
        TextDelta("No."),
        RawContent("openai-responses", refusal),
        TextDelta("Hi"),
        raw(message(7, ["Hi"], item_id="msg_h")),
        ToolCallStart(0, "call_e", "add"),
        ToolCallDelta(0, '{"a":'),
        ToolCallDelta(0, " 1}"),
        raw(function_call(8, "call_e", "add", ['{"a":', " 1}"])),
        used(9, 9),
        Stop("tool_use", "completed"),
    ]
    return steps, expected


@pytest.mark.parametrize("split", SPLITS)
async def test_every_event_type_in_one_stream(split: Any, replay: Replay) -> None:
    import typing

    from openai.types.responses import ResponseStreamEvent

    steps, expected = _every_event()
    union = typing.get_args(ResponseStreamEvent)[0]
    names = {
        n for cls in typing.get_args(union) for n in typing.get_args(cls.model_fields["type"].annotation)
    }
    ending = {"error", "response.failed", "response.incomplete"}  # each in its own stream above
    assert names - ending - {e["type"] for e in steps} == set()
    assert await run(replay, steps, split) == expected
