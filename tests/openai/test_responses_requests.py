"""The Responses request body: history as input items (reasoning carried verbatim and paired), strict function
tools, tool choice, reasoning options, structured output, hosted tools, extra_body; and which wire a model takes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from openagent.errors import ConfigError
from openagent.models import ModelRequest, ToolSpec
from openagent.types import (
    AssistantMessage,
    RawBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)
from openagent_openai import (
    PROFILES,
    ChatCompletionsProvider,
    ResponsesProvider,
    code_interpreter,
    file_search,
    make_provider,
    mcp,
    web_search,
)
from openagent_openai._responses_request import build_body, strict_schema

CLOSED = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
ADD = ToolSpec("add", "Add two integers.", CLOSED)
REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Add them."}],
    "encrypted_content": "gAAAAB-opaque",
}
CALL_ITEM = {
    "id": "fc_1",
    "type": "function_call",
    "status": "completed",
    "call_id": "call_1",
    "name": "add",
    "arguments": '{"a": 1, "b": 2}',
}
MESSAGE_ITEM = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "3", "annotations": []}],
}


def raw(data: dict[str, Any], provider: str = "openai-responses") -> RawBlock:
    return RawBlock(provider=provider, data=data)


def body(profile: str = "openai", model: str = "gpt-4.1", **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("messages", [UserMessage(content="hi")])
    return build_body(ModelRequest(model, **kwargs), model, PROFILES[profile])


def test_minimal_body() -> None:
    assert body(system="Be brief.", max_tokens=64, temperature=0.2, top_p=0.5) == {
        "model": "gpt-4.1",
        "input": [{"type": "message", "role": "user", "content": "hi"}],
        "stream": True,
        "instructions": "Be brief.",
        "store": False,
        "max_output_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.5,
    }


def test_compatible_servers_get_no_store_and_no_reasoning_options() -> None:
    sent = body("openai-responses", model="gpt-5")
    assert sent == {
        "model": "gpt-5",
        "input": [{"type": "message", "role": "user", "content": "hi"}],
        "stream": True,
    }


def test_reasoning_models_get_a_summary_their_encrypted_reasoning_and_no_sampling() -> None:
    sent = body(model="gpt-5-mini", temperature=0, top_p=0.9, stop=["\n"])
    assert sent["reasoning"] == {"summary": "auto"}
    assert sent["include"] == ["reasoning.encrypted_content"]
    assert "temperature" not in sent and "top_p" not in sent and "stop" not in sent
    assert "reasoning" not in body(model="gpt-4.1") and "include" not in body(model="gpt-4.1")
    assert "reasoning" not in body(model="gpt-5-chat-latest", temperature=0.5)  # GPT-5's non-reasoning model
    assert body(model="gpt-5-chat-latest", temperature=0.5)["temperature"] == 0.5
    stored = dataclasses.replace(PROFILES["openai"], store=True)
    kept = build_body(ModelRequest("o3", [UserMessage(content="hi")]), "o3", stored)
    assert kept["store"] is True and "include" not in kept  # stored on the server: referenced by id


def test_effort_and_thinking_as_reasoning_effort() -> None:
    assert body(model="gpt-5", effort="minimal")["reasoning"] == {"effort": "minimal", "summary": "auto"}
    assert (
        body(model="o3", thinking={"type": "enabled", "budget_tokens": 20_000})["reasoning"]["effort"]
        == "high"
    )
    assert body(model="gpt-5.1", thinking={"type": "disabled"})["reasoning"]["effort"] == "none"
    assert "reasoning" not in body(model="gpt-4.1", effort="high")  # it would refuse the field
    assert body("openai-responses", model="gpt-oss-20b", effort="low")["reasoning"] == {"effort": "low"}
    assert body(user="user-42")["user"] == "user-42"


def test_extra_body_merges_reasoning_and_adds_tools_and_include() -> None:
    sent = body(
        model="o4-mini",
        tools=[ADD],
        extra_body={
            "reasoning": {"effort": "high"},
            "include": ["reasoning.encrypted_content", "web_search_call.action.sources"],
            "tools": [web_search()],
            "service_tier": "flex",
            "text": {"verbosity": "low"},
        },
    )
    assert sent["reasoning"] == {"summary": "auto", "effort": "high"}
    assert sent["include"] == ["reasoning.encrypted_content", "web_search_call.action.sources"]
    assert [t["type"] for t in sent["tools"]] == ["function", "web_search"]
    assert sent["service_tier"] == "flex" and sent["text"] == {"verbosity": "low"}


def test_function_tools_strict_when_the_schema_allows() -> None:
    sent = body(tools=[ADD], tool_choice="any", parallel_tool_calls=False)
    assert sent["tools"] == [
        {
            "type": "function",
            "name": "add",
            "description": "Add two integers.",
            "parameters": CLOSED,
            "strict": True,
        }
    ]
    assert sent["tool_choice"] == "required" and sent["parallel_tool_calls"] is False
    assert body(tools=[ADD], tool_choice={"type": "tool", "name": "add"})["tool_choice"] == {
        "type": "function",
        "name": "add",
    }
    assert "tool_choice" not in body(
        "openai-responses", tools=[ADD], tool_choice={"type": "tool", "name": "add"}
    )


@pytest.mark.parametrize(
    ("schema", "strict"),
    [
        pytest.param(CLOSED, CLOSED, id="closed-all-required"),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            id="silent-on-extra-properties-closed",
        ),
        pytest.param(
            {"type": "object", "properties": {}},
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
            id="no-arguments",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string"}}}, None, id="optional-property"
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": True,
            },
            None,
            id="open-object",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}, "required": ["a"]},
            None,
            id="keyword-strict-mode-lacks",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "p": {"$ref": "#/$defs/P"},
                    "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                },
                "required": ["p", "n"],
                "$defs": {
                    "P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
                },
            },
            {
                "type": "object",
                "properties": {
                    "p": {"$ref": "#/$defs/P"},
                    "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                },
                "required": ["p", "n"],
                "additionalProperties": False,
                "$defs": {
                    "P": {
                        "type": "object",
                        "properties": {"x": {"type": "number"}},
                        "required": ["x"],
                        "additionalProperties": False,
                    }
                },
            },
            id="nested-definitions-and-nullable",
        ),
        pytest.param(
            {"type": "object", "properties": {"m": {"type": "object"}}, "required": ["m"]},
            None,
            id="free-form-nested-object",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "integer", "default": 2}}, "required": ["a"]},
            None,
            id="default-keyword",
        ),
    ],
)
def test_strict_schema(schema: dict[str, Any], strict: dict[str, Any] | None) -> None:
    assert strict_schema(schema) == strict


def test_tool_schemas_of_the_tool_decorator() -> None:
    from openagent import tool

    @tool
    def lookup(city: str, days: int) -> str:
        """Look up."""
        return city

    @tool
    def optional(city: str, days: int = 3) -> str:
        """Look up."""
        return city

    assert strict_schema(lookup.spec.input_schema) == lookup.spec.input_schema
    assert strict_schema(optional.spec.input_schema) is None
    sent = body(tools=[optional.spec])
    assert (
        sent["tools"][0]["strict"] is False and sent["tools"][0]["parameters"] == optional.spec.input_schema
    )


def test_structured_output_as_text_format() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    sent = body(output_format={"type": "json_schema", "name": "Place of birth!", "schema": schema})
    assert sent["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Place_of_birth_",
            "schema": {**schema, "additionalProperties": False},
            "strict": True,
        }
    }
    assert "text" not in body("openai-responses", output_format={"type": "json_schema", "schema": schema})


def test_metadata_values_are_strings() -> None:
    assert body(metadata={"run": "r1", "n": 3})["metadata"] == {"run": "r1", "n": "3"}


# --- history ---------------------------------------------------------------------------------------------


def test_history_as_input_items() -> None:
    history = [
        UserMessage(content="What is 1 + 2?"),
        AssistantMessage(
            content=[
                TextBlock(text="Let me add."),
                ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2}),
            ],
            model="m",
        ),
        UserMessage(
            content=[
                ToolResultBlock(tool_use_id="call_1", content="3"),
                TextBlock(text="Also:"),
                TextBlock(text="say it twice"),
                ToolResultBlock(tool_use_id="call_2", content="oops", is_error=True),
            ]
        ),
        AssistantMessage(
            content=[ToolUseError(id="call_3", name="add", error="bad", raw_data='{"a": ')], model="m"
        ),
    ]
    assert body(messages=history)["input"] == [
        {"type": "message", "role": "user", "content": "What is 1 + 2?"},
        {"type": "message", "role": "assistant", "content": "Let me add."},
        {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a": 1, "b": 2}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "3"},
        {"type": "message", "role": "user", "content": "Also:\nsay it twice"},
        {"type": "function_call_output", "call_id": "call_2", "output": "Error: oops"},
        {"type": "function_call", "call_id": "call_3", "name": "add", "arguments": '{"a": '},
    ]


def test_reasoning_and_the_items_it_led_to_go_back_verbatim_with_their_ids() -> None:
    turn = AssistantMessage(
        content=[
            ThinkingBlock(thinking="Add them."),
            raw(REASONING),
            ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2}),
            raw(CALL_ITEM),
        ],
        model="gpt-5",
    )
    answer = AssistantMessage(content=[TextBlock(text="3"), raw(MESSAGE_ITEM)], model="gpt-5")
    history = [
        UserMessage(content="1 + 2?"),
        turn,
        UserMessage(content=[ToolResultBlock(tool_use_id="call_1", content="3")]),
        answer,
        UserMessage(content="Thanks"),
    ]
    assert body(messages=history)["input"] == [
        {"type": "message", "role": "user", "content": "1 + 2?"},
        REASONING,
        CALL_ITEM,
        {"type": "function_call_output", "call_id": "call_1", "output": "3"},
        MESSAGE_ITEM,
        {"type": "message", "role": "user", "content": "Thanks"},
    ]


def test_reasoning_that_led_nowhere_and_other_providers_blocks_are_left_out() -> None:
    cut_short = AssistantMessage(content=[ThinkingBlock(thinking="Hmm"), raw(REASONING)], model="gpt-5")
    foreign = AssistantMessage(
        content=[raw({"type": "redacted_thinking", "data": "x"}, provider="anthropic"), TextBlock(text="Hi")],
        model="claude",
    )
    sent = body(messages=[UserMessage(content="a"), cut_short, UserMessage(content="b"), foreign])
    assert sent["input"] == [
        {"type": "message", "role": "user", "content": "a"},
        {"type": "message", "role": "user", "content": "b"},
        {"type": "message", "role": "assistant", "content": "Hi"},
    ]


def test_hosted_tool_calls_go_back_in_place() -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search"}}
    turn = AssistantMessage(content=[raw(search), TextBlock(text="3"), raw(MESSAGE_ITEM)], model="gpt-5")
    assert body(messages=[UserMessage(content="q"), turn])["input"][1:] == [search, MESSAGE_ITEM]


# --- hosted tools and wires --------------------------------------------------------------------------------


def test_hosted_tools() -> None:
    assert web_search() == {"type": "web_search"}
    assert web_search(context_size="low", allowed_domains=["a.test"], user_location={"country": "GB"}) == {
        "type": "web_search",
        "search_context_size": "low",
        "filters": {"allowed_domains": ["a.test"]},
        "user_location": {"type": "approximate", "country": "GB"},
    }
    assert file_search(["vs_1"], max_num_results=5) == {
        "type": "file_search",
        "vector_store_ids": ["vs_1"],
        "max_num_results": 5,
    }
    assert file_search("vs_2")["vector_store_ids"] == ["vs_2"]
    assert code_interpreter() == {"type": "code_interpreter", "container": {"type": "auto"}}
    assert code_interpreter(container="cntr_1")["container"] == "cntr_1"
    assert mcp(
        "docs", "https://mcp.test/sse", allowed_tools=["search"], headers={"Authorization": "Bearer t"}
    ) == {
        "type": "mcp",
        "server_label": "docs",
        "server_url": "https://mcp.test/sse",
        "require_approval": "never",
        "allowed_tools": ["search"],
        "headers": {"Authorization": "Bearer t"},
    }
    with pytest.raises(ConfigError):
        file_search([])
    with pytest.raises(ConfigError):
        mcp("", "https://x")


@pytest.mark.parametrize(
    ("provider", "model", "cls"),
    [
        ("openai", "gpt-5", ResponsesProvider),
        ("openai", "gpt-4.1-mini", ResponsesProvider),
        ("openai", "gpt-4o-mini-search-preview", ChatCompletionsProvider),
        ("openai", "gpt-4o-audio-preview", ChatCompletionsProvider),
        ("openai-chat", "gpt-5", ChatCompletionsProvider),
        ("openai-responses", "qwen3", ResponsesProvider),
        ("vllm", "qwen3", ChatCompletionsProvider),
        ("ollama", "qwen3", ChatCompletionsProvider),
    ],
)
def test_which_wire_a_model_takes(
    provider: str, model: str, cls: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    made = make_provider(model, profile=PROFILES[provider], base_url="http://h.test/v1")
    assert type(made) is cls and made.model == model and made.profile is PROFILES[provider]


def test_a_compatible_server_opts_in_by_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    vllm = dataclasses.replace(PROFILES["vllm"], wire="responses")
    assert type(make_provider("qwen3", profile=vllm)) is ResponsesProvider
    assert make_provider("qwen3", profile=vllm).base_url == "http://localhost:8000/v1"
