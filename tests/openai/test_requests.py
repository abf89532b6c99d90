"""The request body: history replay, tool schemas, profile quirks, extra_body and structured output."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from openagent.models import ModelRequest, ToolSpec
from openagent.types import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)
from openagent_openai import PROFILES
from openagent_openai._chat import build_body

ADD = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"a": {"type": "integer"}}})


def body(profile: str = "llamacpp", **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("messages", [UserMessage(content="hi")])
    return build_body(ModelRequest("m", **kwargs), "m", PROFILES[profile])


def test_minimal_body_streams_with_usage() -> None:
    assert body(system="Be brief.") == {
        "model": "m",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_sampling_fields_and_max_tokens_field_per_profile() -> None:
    sent = body("openai", max_tokens=50, temperature=0.2, top_p=0.9, stop=["\n"])
    assert sent["max_completion_tokens"] == 50 and "max_tokens" not in sent
    assert (sent["temperature"], sent["top_p"], sent["stop"]) == (0.2, 0.9, ["\n"])
    assert body("ollama", max_tokens=50)["max_tokens"] == 50


def test_stream_options_left_out_where_the_server_may_refuse_them() -> None:
    assert "stream_options" not in body("openai-compatible")


def test_tools_as_functions() -> None:
    sent = body(tools=[ADD], parallel_tool_calls=False)
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {"name": "add", "description": "Add two integers.", "parameters": ADD.input_schema},
        }
    ]
    assert sent["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in body("ollama", tools=[ADD], parallel_tool_calls=False)


@pytest.mark.parametrize(
    ("profile", "choice", "expected"),
    [
        pytest.param("openai", "auto", "auto", id="auto"),
        pytest.param("openai", "any", "required", id="anthropic-any-is-required"),
        pytest.param(
            "openai",
            {"type": "tool", "name": "add"},
            {"type": "function", "function": {"name": "add"}},
            id="named",
        ),
        pytest.param("llamacpp", {"type": "tool", "name": "add"}, None, id="named-unsupported-left-out"),
        pytest.param("ollama", "required", None, id="ollama-ignores-tool-choice-left-out"),
    ],
)
def test_tool_choice_forms(profile: str, choice: Any, expected: Any) -> None:
    assert body(profile, tools=[ADD], tool_choice=choice).get("tool_choice") == expected


def test_extra_body_merged_verbatim_last() -> None:
    sent = body(
        extra_body={"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}, "stream_options": None}
    )
    assert sent["top_k"] == 20 and sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert sent["stream_options"] is None


def test_output_format_as_json_schema_where_supported() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    sent = body("openai", output_format={"type": "json_schema", "schema": schema})
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": schema},
    }
    assert "response_format" not in body(
        "openai-compatible", output_format={"type": "json_schema", "schema": schema}
    )


def _round_trip() -> list[Any]:
    return [
        UserMessage(content="add 1 and 2, then 3 and 4"),
        AssistantMessage(
            model="m",
            content=[
                ThinkingBlock(thinking="I will add."),
                TextBlock(text="Adding."),
                ToolUseBlock(id="c1", name="add", input={"a": 1, "b": 2}),
                ToolUseError(id="c2", name="add", error="arguments are not JSON", raw_data='{"a": 3, "b": 4'),
            ],
        ),
        UserMessage(
            content=[
                ToolResultBlock(tool_use_id="c1", content="3"),
                ToolResultBlock(tool_use_id="c2", content="arguments are not JSON", is_error=True),
                TextBlock(text="go on"),
            ]
        ),
    ]


def test_history_assistant_calls_before_their_results() -> None:
    messages = body(messages=_round_trip(), tools=[ADD])["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assistant = messages[1]
    assert assistant["content"] == "Adding."
    assert assistant["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
        # the garbled call goes back exactly as the model wrote it, answered by the loop's error result
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a": 3, "b": 4'}},
    ]
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "3"}
    assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": "Error: arguments are not JSON"}
    assert messages[4] == {"role": "user", "content": "go on"}


@pytest.mark.parametrize(
    ("profile", "field"), [("llamacpp", "reasoning_content"), ("ollama", "reasoning"), ("openai", None)]
)
def test_thinking_sent_back_in_the_profiles_field(profile: str, field: str | None) -> None:
    assistant = body(profile, messages=_round_trip())["messages"][1]
    keys = {k for k in assistant if k.startswith("reasoning")}
    assert keys == ({field} if field else set())
    if field:
        assert assistant[field] == "I will add."


def test_assistant_with_only_calls_has_null_content() -> None:
    history = [
        UserMessage(content="x"),
        AssistantMessage(model="m", content=[ToolUseBlock(id="c", name="add", input={})]),
    ]
    assert body(messages=history)["messages"][1]["content"] is None


def test_structured_tool_result_content_flattened_to_text() -> None:
    result = ToolResultBlock(
        tool_use_id="c", content=[{"type": "text", "text": "a"}, {"type": "image", "data": "x"}]
    )
    messages = body(messages=[UserMessage(content=[result])])["messages"]
    assert messages == [{"role": "tool", "tool_call_id": "c", "content": 'a\n{"type": "image", "data": "x"}'}]


def test_text_protocol_describes_tools_and_replays_calls_as_text() -> None:
    profile = dataclasses.replace(PROFILES["llamacpp"], tool_call_protocol="text")
    sent = build_body(ModelRequest("m", _round_trip(), system="Be brief.", tools=[ADD]), "m", profile)
    assert "tools" not in sent
    system, _, assistant, results, *_ = sent["messages"]
    assert system["content"].startswith("Be brief.") and '"name": "add"' in system["content"]
    assert "tool_calls" not in assistant
    assert '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>' in assistant["content"]
    assert (
        '<tool_call>{"name": "add", "arguments": "{\\"a\\": 3, \\"b\\": 4"}</tool_call>'
        in assistant["content"]
    )
    assert results["role"] == "user" and "<tool_response>3</tool_response>" in results["content"]


@pytest.mark.parametrize(
    ("profile", "fields", "expected"),
    [
        pytest.param("openai", {"effort": "high"}, {"reasoning_effort": "high"}, id="openai-effort"),
        pytest.param("openai", {"effort": "max"}, {"reasoning_effort": "high"}, id="max-is-high"),
        pytest.param(
            "openai",
            {"thinking": {"type": "enabled", "budget_tokens": 2000}},
            {"reasoning_effort": "low"},
            id="small-budget-low",
        ),
        pytest.param(
            "openai", {"thinking": {"type": "disabled"}}, {"reasoning_effort": "none"}, id="disabled"
        ),
        pytest.param(
            "ollama", {"thinking": {"type": "adaptive"}}, {"reasoning_effort": "medium"}, id="ollama-adaptive"
        ),
        pytest.param(
            "openrouter",
            {"thinking": {"type": "enabled", "budget_tokens": 9000}},
            {"reasoning": {"max_tokens": 9000}},
            id="openrouter-budget",
        ),
        pytest.param(
            "openrouter", {"effort": "low"}, {"reasoning": {"effort": "low"}}, id="openrouter-effort"
        ),
        pytest.param(
            "openrouter",
            {"thinking": {"type": "disabled"}},
            {"reasoning": {"enabled": False}},
            id="openrouter-off",
        ),
        pytest.param(
            "llamacpp",
            {"effort": "high"},
            {"chat_template_kwargs": {"enable_thinking": True}},
            id="template-on",
        ),
        pytest.param(
            "vllm",
            {"thinking": {"type": "disabled"}},
            {"chat_template_kwargs": {"enable_thinking": False}},
            id="template-off",
        ),
        pytest.param("openai", {"user": "u-1"}, {"user": "u-1"}, id="user"),
    ],
)
def test_reasoning_and_user_map_to_each_endpoints_parameter(
    profile: str, fields: dict[str, Any], expected: dict[str, Any]
) -> None:
    sent = build_body(ModelRequest("m", [], **fields), "m", PROFILES[profile])
    assert {k: sent[k] for k in expected} == expected
    assert not {"reasoning_effort", "reasoning", "chat_template_kwargs"} & set(
        build_body(ModelRequest("m", []), "m", PROFILES[profile])
    )
