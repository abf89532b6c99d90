"""Every server quirk the chat-completions adapter absorbs, replayed whole and re-chunked.

Each table row names its quirk; each stream is replayed at its natural chunking (one network chunk per
event) and at small fixed byte splits, through the real provider over an httpx mock transport.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from openai_replay import SPLITS, Replay, sse

from openagent._errors import StreamError
from openagent._models import (
    ModelProfile,
    ModelRequest,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolSpec,
)
from openagent._types import Usage, UserMessage
from openagent_openai import PROFILES

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


def choice(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }


def call(
    index: int | None, id: str | None = None, name: str | None = None, args: Any = None
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"function": {}}
    if index is not None:
        fragment["index"] = index
    if id is not None:
        fragment["id"], fragment["type"] = id, "function"
    if name is not None:
        fragment["function"]["name"] = name
    if args is not None:
        fragment["function"]["arguments"] = args
    return fragment


def calls(*fragments: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return choice({"tool_calls": list(fragments)}, finish)


def usage(prompt: int, completion: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            **extra,
        },
    }


END = Stop("end_turn", "stop")
TOOL = Stop("tool_use", "tool_calls")

QUIRKS = [
    pytest.param(
        [
            choice({"role": "assistant", "content": ""}),
            choice({"content": "Hel"}),
            choice({"content": "lo"}),
            choice(finish="stop"),
        ],
        [TextDelta("Hel"), TextDelta("lo"), END],
        id="incremental-text",
    ),
    pytest.param(
        [
            choice({"content": "Hel"}),
            choice({"content": "Hello"}),
            choice({"content": "Hello, wor"}),
            choice({"content": "Hello, world"}),
            choice(finish="stop"),
        ],
        [TextDelta("Hel"), TextDelta("lo"), TextDelta(", wor"), TextDelta("ld"), END],
        id="cumulative-text-repeats-all-so-far",
    ),
    pytest.param(
        [
            choice({"content": "1"}),
            choice({"content": "10"}),
            choice({"content": " apples"}),
            choice(finish="stop"),
        ],
        [TextDelta("1"), TextDelta("10"), TextDelta(" apples"), END],
        id="deltas-where-the-second-extends-the-first",
    ),
    pytest.param(
        [choice({"content": "*"}), choice({"content": "**"}), choice(finish="stop")],
        [TextDelta("*"), TextDelta("**"), END],
        id="two-deltas-where-the-second-extends-the-first",
    ),
    pytest.param(
        [
            choice({"content": "I"}),
            choice({"content": "It"}),
            calls(call(0, "c1", "add", '{"a": 1}')),
            choice(finish="tool_calls"),
        ],
        [TextDelta("I"), TextDelta("It"), ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1}'), TOOL],
        id="a-held-delta-goes-out-before-a-tool-call",
    ),
    pytest.param(
        [
            calls(call(0, "c1", "add", "")),
            calls(call(0, args='{"a": 1,')),
            calls(call(0, args=' "b": 2}')),
            choice(finish="tool_calls"),
        ],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1,'), ToolCallDelta(0, ' "b": 2}'), TOOL],
        id="tool-id-and-name-on-first-fragment-only",
    ),
    pytest.param(
        [
            calls(call(0, "c1", "add", '{"a": 1,')),
            calls(call(0, "c1", "add", ' "b": 2}')),
            choice(finish="tool_calls"),
        ],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1,'), ToolCallDelta(0, ' "b": 2}'), TOOL],
        id="tool-id-and-name-repeated-on-every-fragment",
    ),
    pytest.param(
        [
            calls(call(0, None, "add", '{"a": 1,')),
            calls(call(0, "c1", None, ' "b": 2}')),
            choice(finish="tool_calls"),
        ],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1, "b": 2}'), TOOL],
        id="tool-id-arriving-late",
    ),
    pytest.param(
        [calls(call(0, "c1", None, '{"a": 1}')), calls(call(0, None, "add")), choice(finish="tool_calls")],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1}'), TOOL],
        id="tool-name-arriving-late",
    ),
    pytest.param(
        [calls(call(0, None, "add", '{"a": 1}')), choice(finish="tool_calls")],
        [ToolCallStart(0, "gen_0", "add"), ToolCallDelta(0, '{"a": 1}'), TOOL],
        id="tool-id-missing-generated",
    ),
    pytest.param(
        [
            calls(call(0, "c1", "get_weather", '{"city": "Paris"}')),
            calls(call(0, "c2", "get_weather", '{"city": "London"}')),
            choice(finish="tool_calls"),
        ],
        [
            ToolCallStart(0, "c1", "get_weather"),
            ToolCallDelta(0, '{"city": "Paris"}'),
            ToolCallStart(1, "c2", "get_weather"),
            ToolCallDelta(1, '{"city": "London"}'),
            TOOL,
        ],
        id="ollama-index-0-for-every-parallel-call",
    ),
    pytest.param(
        [
            calls(call(0, "c1", "get_weather", ""), call(1, "c2", "get_weather", "")),
            calls(call(1, args='{"city": "London"}')),
            calls(call(0, args='{"city": "Paris"}')),
            choice(finish="tool_calls"),
        ],
        [
            ToolCallStart(0, "c1", "get_weather"),
            ToolCallStart(1, "c2", "get_weather"),
            ToolCallDelta(1, '{"city": "London"}'),
            ToolCallDelta(0, '{"city": "Paris"}'),
            TOOL,
        ],
        id="parallel-calls-interleaved",
    ),
    pytest.param(
        [calls(call(None, "c1", "a", "{}"), call(None, "c2", "b", "{}")), choice(finish="tool_calls")],
        [
            ToolCallStart(0, "c1", "a"),
            ToolCallDelta(0, "{}"),
            ToolCallStart(1, "c2", "b"),
            ToolCallDelta(1, "{}"),
            TOOL,
        ],
        id="tool-index-missing-numbered-by-position",
    ),
    pytest.param(
        [calls(call(0, "c1", "now", "")), choice(finish="tool_calls")],
        [ToolCallStart(0, "c1", "now"), ToolCallDelta(0, "{}"), TOOL],
        id="arguments-empty-string",
    ),
    pytest.param(
        [
            calls({"index": 0, "id": "c1", "function": {"name": "now", "arguments": None}}),
            choice(finish="tool_calls"),
        ],
        [ToolCallStart(0, "c1", "now"), ToolCallDelta(0, "{}"), TOOL],
        id="arguments-null",
    ),
    pytest.param(
        [calls(call(0, "c1", "add", {"a": 1, "b": 2})), choice(finish="tool_calls")],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1, "b": 2}'), TOOL],
        id="arguments-dict-instead-of-string",
    ),
    pytest.param(
        [calls(call(0, "c1", "add", '"just a string"')), choice(finish="tool_calls")],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '"just a string"'), TOOL],
        id="arguments-json-not-an-object-passed-on-for-the-loop-to-refuse",
    ),
    pytest.param(
        [
            choice({"content": "Let me add.", "tool_calls": [call(0, "c1", "add", '{"a": 1}')]}),
            choice(finish="tool_calls"),
        ],
        [TextDelta("Let me add."), ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1}'), TOOL],
        id="text-and-tool-call-in-one-chunk",
    ),
    pytest.param(
        [
            choice({"function_call": {"name": "add", "arguments": ""}}),
            choice({"function_call": {"arguments": '{"a": 1}'}}),
            choice(finish="function_call"),
        ],
        [ToolCallStart(0, "gen_0", "add"), ToolCallDelta(0, '{"a": 1}'), Stop("tool_use", "function_call")],
        id="legacy-function-call",
    ),
    pytest.param(
        [calls(call(0, "c1", "add", '{"a": 1}')), choice(finish="stop")],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1}'), Stop("tool_use", "stop")],
        id="finish-stop-although-tools-were-called",
    ),
    pytest.param(
        [choice({"content": "It was a dark"}), choice(finish="length")],
        [TextDelta("It was a dark"), Stop("max_tokens", "length")],
        id="finish-length",
    ),
    pytest.param(
        [choice({"content": "Hi"})], [TextDelta("Hi"), Stop("end_turn", None)], id="no-finish-reason-at-all"
    ),
    pytest.param(
        [calls(call(0, "c1", "add", '{"a": 1}'))],
        [ToolCallStart(0, "c1", "add"), ToolCallDelta(0, '{"a": 1}'), Stop("tool_use", None)],
        id="no-finish-reason-with-tool-call",
    ),
    pytest.param(
        [
            choice({"reasoning_content": "Think"}),
            choice({"reasoning_content": "ing."}),
            choice({"content": "Yes"}),
            choice(finish="stop"),
        ],
        [ThinkingDelta("Think"), ThinkingDelta("ing."), TextDelta("Yes"), END],
        id="reasoning-content",
    ),
    pytest.param(
        [choice({"reasoning": "Hmm."}), choice({"content": "No", "reasoning": None}), choice(finish="stop")],
        [ThinkingDelta("Hmm."), TextDelta("No"), END],
        id="reasoning-field-ollama-openrouter",
    ),
    pytest.param(
        [choice({"reasoning": "Same", "reasoning_content": "Same"}), choice(finish="stop")],
        [ThinkingDelta("Same"), END],
        id="reasoning-in-both-fields-counted-once",
    ),
    pytest.param(
        [choice({"content": "Hi"}), choice(finish="stop"), usage(10, 2)],
        [TextDelta("Hi"), Usage(input_tokens=10, output_tokens=2), END],
        id="usage-in-final-chunk-with-empty-choices",
    ),
    pytest.param(
        [
            choice(
                {"content": "Hi"},
                "stop",
                usage={"prompt_tokens": 10, "completion_tokens": 2},
                timings={"prompt_ms": 1.5, "predicted_per_second": 80.0},
                system_fingerprint="b1",
            )
        ],
        [TextDelta("Hi"), Usage(input_tokens=10, output_tokens=2), END],
        id="usage-on-the-last-choice-chunk-and-extra-fields-ignored",
    ),
    pytest.param(
        [
            choice({"content": "Hi"}),
            choice(finish="stop"),
            usage(100, 5, prompt_tokens_details={"cached_tokens": 60}),
        ],
        [TextDelta("Hi"), Usage(input_tokens=40, output_tokens=5, cache_read_input_tokens=60), END],
        id="cached-prompt-tokens-counted-apart",
    ),
    pytest.param(
        [
            choice({"content": ""}),
            choice({"content": None}),
            choice({"content": "Hi"}),
            choice(finish="stop"),
        ],
        [TextDelta("Hi"), END],
        id="empty-and-null-content-skipped",
    ),
]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("chunks", "expected"), QUIRKS)
async def test_quirk(
    replay: Replay, fixed_ids: None, chunks: list[Any], expected: list[Any], split: Any
) -> None:
    provider = replay.provider(sse(*chunks), split=split)
    events = [e async for e in provider.stream(ModelRequest("test-model", [UserMessage(content="hi")]))]
    assert events == expected


@pytest.mark.parametrize("split", SPLITS)
async def test_finish_reason_without_done_is_complete(replay: Replay, split: Any) -> None:
    provider = replay.provider(sse(choice({"content": "Hi"}, "stop"), done=False), split=split)
    assert [e async for e in provider.stream(_request())] == [TextDelta("Hi"), END]


async def test_sse_line_endings_comments_and_keepalives(replay: Replay) -> None:
    body = b": keep-alive\r\n\r\ndata: " + json.dumps(choice({"content": "Hi"})).encode() + b"\r\n\r\n"
    body += (
        b"event: message\ndata: " + json.dumps(choice(finish="stop")).encode() + b"\n\n: ping\n\ndata: [DONE]"
    )
    for split in SPLITS:
        events = [e async for e in replay.provider(body, split=split).stream(_request())]
        assert events == [TextDelta("Hi"), END]


async def test_whole_json_answer_when_the_server_ignores_stream(replay: Replay) -> None:
    answer = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "On it.",
                    "tool_calls": [call(0, "c1", "add", '{"a": 1}')],
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    provider = replay.provider(json.dumps(answer).encode(), headers={"content-type": "application/json"})
    events = [e async for e in provider.stream(_request())]
    assert events == [
        TextDelta("On it."),
        ToolCallStart(0, "c1", "add"),
        ToolCallDelta(0, '{"a": 1}'),
        Usage(input_tokens=3, output_tokens=4),
        TOOL,
    ]


def _request(**kwargs: Any) -> ModelRequest:
    return ModelRequest("test-model", [UserMessage(content="hi")], **kwargs)


# --- malformed streams: each a typed StreamError, never a hang, a crash or a silent success ---------------

HTML = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
BROKEN = [
    pytest.param(
        sse({"error": {"message": "model overloaded", "type": "server_error"}}),
        {},
        "model overloaded",
        id="error-object-inside-a-200-stream",
    ),
    pytest.param(
        sse(choice({"content": "Hi"}), {"error": "upstream timed out"}),
        {},
        "upstream timed out",
        id="error-string-after-some-text",
    ),
    pytest.param(
        sse(calls(call(0, "c1", "add", '{"a": ')), done=False),
        {},
        "in the middle of a tool call",
        id="stream-ends-without-done-mid-tool-call",
    ),
    pytest.param(
        sse(choice({"content": "Hi"}), done=False),
        {},
        "before the end of the answer",
        id="stream-ends-without-done-mid-text",
    ),
    pytest.param(b"", {}, "empty response", id="empty-200-body"),
    pytest.param(b"data: {not json\n\n", {}, "not JSON", id="non-json-data-line"),
    pytest.param(b"data: [1, 2]\n\n", {}, "not a JSON object", id="json-data-line-not-an-object"),
    pytest.param(
        HTML, {"content-type": "text/html; charset=utf-8"}, "HTML page", id="html-error-page-with-a-200"
    ),
    pytest.param(
        HTML, {"content-type": "text/plain"}, "not an event stream", id="html-page-without-html-type"
    ),
    pytest.param(b'event: error\ndata: {"message": "quota"}\n\n', {}, "quota", id="named-sse-error-event"),
    pytest.param(
        json.dumps({"error": {"message": "bad things"}}).encode(),
        {"content-type": "application/json"},
        "bad things",
        id="json-error-object-with-a-200",
    ),
    pytest.param(
        sse(
            choice({"content": "Hello"}),
            choice({"content": "Hello world"}),
            choice({"content": "Hello world!"}),
            choice({"content": "Bye"}),
        ),
        {},
        "went back on itself",
        id="cumulative-text-that-stops-being-cumulative",
    ),
]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("body", "headers", "message"), BROKEN)
async def test_malformed_stream(
    replay: Replay, body: bytes, headers: dict[str, str], message: str, split: Any
) -> None:
    provider = replay.provider(body, split=split, headers=headers)
    with pytest.raises(StreamError, match=message) as caught:
        async for _ in provider.stream(_request()):
            pass
    assert caught.value.provider == "llamacpp"


async def test_stream_error_keeps_the_offending_data(replay: Replay) -> None:
    with pytest.raises(StreamError) as caught:
        async for _ in replay.provider(b"data: {not json\n\n").stream(_request()):
            pass
    assert caught.value.body == "{not json"


# --- the text tool-call protocol ---------------------------------------------------------------------------

TEXT_PROFILE = dataclasses.replace(
    PROFILES["openai-compatible"],
    base_url="http://127.0.0.1:9/v1",
    defaults=ModelProfile(tool_call_protocol="text"),
)
ADD = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"a": {"type": "integer"}}})


def _texts(*parts: str) -> bytes:
    return sse(*[choice({"content": p}) for p in parts], choice(finish="stop"))


TEXT_CALLS = [
    pytest.param(
        _texts("Sure. <tool", '_call>{"name": "add", "arguments": {"a": 1}}</tool_', "call>"),
        [TextDelta("Sure. "), ToolCallStart(0, "gen_0", "add"), ToolCallDelta(0, '{"a": 1}')],
        id="hermes-tool-call-tag-split-across-chunks",
    ),
    pytest.param(
        _texts(
            '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>\n<tool_call>',
            '{"name": "add", "arguments": {"a": 2}}</tool_call>',
        ),
        [
            ToolCallStart(0, "gen_0", "add"),
            ToolCallDelta(0, '{"a": 1}'),
            TextDelta("\n"),
            ToolCallStart(1, "gen_1", "add"),
            ToolCallDelta(1, '{"a": 2}'),
        ],
        id="two-tagged-calls",
    ),
    pytest.param(
        _texts('```json\n{"name": "add", "arguments": {"a": 1}}\n```'),
        [ToolCallStart(0, "gen_0", "add"), ToolCallDelta(0, '{"a": 1}')],
        id="fenced-json-call",
    ),
    pytest.param(
        _texts("Code:\n```py\nprint(1)\n```\nDone"),
        [TextDelta("Code:\n"), TextDelta("```py\nprint(1)\n```"), TextDelta("\nDone")],
        id="ordinary-code-block-stays-text",
    ),
    pytest.param(
        _texts('```json\n{"name": "unknown_tool", "arguments": {}}\n```'),
        [TextDelta('```json\n{"name": "unknown_tool", "arguments": {}}\n```')],
        id="fenced-json-naming-no-tool-stays-text",
    ),
    pytest.param(
        _texts("<tool_call>{name: add}</tool_call>"),
        [ToolCallStart(0, "gen_0", ""), ToolCallDelta(0, "{name: add}")],
        id="garbled-tagged-call-kept-raw-for-the-loop",
    ),
    pytest.param(
        _texts('<tool_call>{"name": "add", "arguments": {"a": 1}}'),
        [ToolCallStart(0, "gen_0", "add"), ToolCallDelta(0, '{"a": 1}')],
        id="unclosed-tag-at-the-end",
    ),
    pytest.param(
        _texts("a < b and 2 `x`"),
        [TextDelta("a "), TextDelta("< b and 2 "), TextDelta("`x`")],
        id="text-that-only-looks-like-a-marker",
    ),
]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("body", "expected"), TEXT_CALLS)
async def test_text_tool_protocol(
    replay: Replay, fixed_ids: None, body: bytes, expected: list[Any], split: Any
) -> None:
    provider = replay.provider(body, split=split, profile=TEXT_PROFILE)
    events = [e async for e in provider.stream(_request(tools=[ADD]))]
    texts = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert texts == "".join(e.text for e in expected if isinstance(e, TextDelta))
    assert [e for e in events if not isinstance(e, TextDelta)] == [
        *[e for e in expected if not isinstance(e, TextDelta)],
        Stop("tool_use" if any(isinstance(e, ToolCallStart) for e in expected) else "end_turn", "stop"),
    ]
    sent = replay.sent()
    assert "tools" not in sent and "<tool_call>" in sent["messages"][0]["content"]


# --- streams recorded from real servers ----------------------------------------------------------------------

RECORDED = ROOT / "cassettes" / "openai" / "test_quirks"


@pytest.mark.parametrize("split", SPLITS)
async def test_llama_cpp_python_tool_calls_and_function_call_in_one_delta_are_one_call(
    replay: Replay, split: Any
) -> None:
    """llama-cpp-python 0.3.36's server (``--chat_format chatml-function-calling``, SmolLM2-135M, a named
    ``tool_choice``), recorded as it streamed: every fragment is sent in ``tool_calls`` and again in the legacy
    ``function_call`` of the same delta."""
    body = (RECORDED / "llama-cpp-python-tool-calls-and-function-call.sse").read_bytes()
    assert b'"function_call": {"name": "add"' in body and b'"tool_calls": [{"index": 0' in body
    events = [e async for e in replay.provider(body, split=split).stream(_request())]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart(0, "call__0_add_cmpl-0fccf73b-2e09-4b89-b901-df93a498fbf6", "add")]
    arguments = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert json.loads(arguments) == {"a": 2, "b": 3}
    assert events[-1] == TOOL


def test_a_delta_with_both_fields_is_one_call_whatever_the_order() -> None:
    from openagent_openai._chat import ChatStream

    both = {"function_call": {"name": "add", "arguments": "{}"}, "tool_calls": [call(0, "c1", "add", "{}")]}
    events = ChatStream("p").feed(json.dumps(choice(both)))
    assert [type(e).__name__ for e in events] == ["ToolCallStart", "ToolCallDelta"]
