"""The request body: history replay, options, caching breakpoints, tool choice, headers."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx2
import pytest

from openagent._errors import ConfigError
from openagent._models import ModelRequest, ToolSpec
from openagent._types import (
    AssistantMessage,
    RawBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)
from openagent_anthropic import MessagesProvider
from openagent_anthropic._messages import build_body

TOOL = ToolSpec("add", "Add two integers.", {"type": "object", "properties": {"a": {"type": "integer"}}})
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
WEB = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "x"}}
NO_CACHE = {"cache_control": None}


def body(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("messages", [UserMessage(content="hi")])
    return build_body(ModelRequest("claude-sonnet-4-5", **kwargs))[0]


def test_minimal_body_defaults_max_tokens_and_caches_the_last_message() -> None:
    assert body() == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32_000,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-3-haiku-20240307", 4096),
        ("claude-3-5-haiku-latest", 8192),
        ("claude-opus-4-5", 32_000),
        ("smollm2-135m-instruct", 4096),
    ],
)
def test_default_max_tokens_per_model(model: str, expected: int) -> None:
    assert build_body(ModelRequest(model, [UserMessage(content="x")]))[0]["max_tokens"] == expected


def test_thinking_budget_above_the_default_raises_max_tokens() -> None:
    result = body(extra_body={"thinking": {"type": "enabled", "budget_tokens": 40_000}})
    assert result["thinking"] == {"type": "enabled", "budget_tokens": 40_000}
    assert result["max_tokens"] > 40_000


def test_explicit_max_tokens_is_kept() -> None:
    assert (
        body(max_tokens=100, extra_body={"thinking": {"type": "enabled", "budget_tokens": 2000}})[
            "max_tokens"
        ]
        == 100
    )


def test_cache_breakpoints_on_system_last_tool_and_last_message() -> None:
    result = body(system="be brief", tools=[TOOL, TOOL])
    marker = {"type": "ephemeral"}
    assert result["system"] == [{"type": "text", "text": "be brief", "cache_control": marker}]
    assert "cache_control" not in result["tools"][0] and result["tools"][1]["cache_control"] == marker
    assert result["messages"][-1]["content"][-1]["cache_control"] == marker


def test_cache_control_none_turns_caching_off() -> None:
    result = body(system="be brief", tools=[TOOL], extra_body=NO_CACHE)
    assert "cache_control" not in json.dumps(result)
    assert result["system"] == "be brief"


def test_cache_control_value_is_the_apis_automatic_caching() -> None:
    result = body(system="s", extra_body={"cache_control": {"type": "ephemeral", "ttl": "1h"}})
    assert result["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert result["system"] == "s" and "cache_control" not in json.dumps(result["messages"])


def test_betas_become_a_header_and_the_rest_is_verbatim() -> None:
    result, headers = build_body(
        ModelRequest(
            "claude-opus-4-5",
            [UserMessage(content="x")],
            extra_body={
                "betas": ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"],
                "top_k": 5,
                "output_config": {"effort": "low"},
                "thinking": {"type": "adaptive"},
            },
            output_format={"type": "json_schema", "schema": {"type": "object"}},
        )
    )
    assert headers == {"anthropic-beta": "context-1m-2025-08-07,interleaved-thinking-2025-05-14"}
    assert "betas" not in result and result["top_k"] == 5 and result["thinking"] == {"type": "adaptive"}
    assert result["output_config"] == {
        "format": {"type": "json_schema", "schema": {"type": "object"}},
        "effort": "low",
    }


def test_sampling_and_stop_sequences() -> None:
    result = body(temperature=0.2, top_p=0.9, stop=["END"], extra_body=NO_CACHE)
    assert (result["temperature"], result["top_p"], result["stop_sequences"]) == (0.2, 0.9, ["END"])


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        pytest.param(None, None, None, id="unset"),
        pytest.param("auto", None, {"type": "auto"}, id="auto"),
        pytest.param("none", False, {"type": "none"}, id="none-ignores-parallel"),
        pytest.param("required", None, {"type": "any"}, id="openai-required-is-any"),
        pytest.param("any", False, {"type": "any", "disable_parallel_tool_use": True}, id="any-no-parallel"),
        pytest.param("add", None, {"type": "tool", "name": "add"}, id="bare-tool-name"),
        pytest.param(
            {"type": "tool", "name": "add"}, None, {"type": "tool", "name": "add"}, id="anthropic-form"
        ),
        pytest.param(
            {"type": "function", "function": {"name": "add"}},
            None,
            {"type": "tool", "name": "add"},
            id="openai-function-form",
        ),
        pytest.param(
            None, False, {"type": "auto", "disable_parallel_tool_use": True}, id="parallel-off-only"
        ),
    ],
)
def test_tool_choice_forms(choice: Any, parallel: bool | None, expected: dict[str, Any] | None) -> None:
    assert body(tools=[TOOL], tool_choice=choice, parallel_tool_calls=parallel).get("tool_choice") == expected


def test_history_replay_keeps_signatures_raw_blocks_and_garbled_calls() -> None:
    history = [
        UserMessage(content="weather?"),
        AssistantMessage(
            model="m",
            content=[
                RawBlock(provider="anthropic", data=WEB),
                ThinkingBlock(thinking="let me think", signature="EqQBCgIYAhIM"),
                RawBlock(provider="anthropic", data=REDACTED),
                ThinkingBlock(thinking="from another provider", signature=""),
                TextBlock(text=""),
                TextBlock(text="Checking."),
                ToolUseBlock(id="functions.add:0", name="add", input={"a": 1}),
                ToolUseError(id="call_2", name="", error="no name", raw_data="{oops"),
            ],
        ),
        UserMessage(
            content=[
                TextBlock(text="and then"),
                ToolResultBlock(tool_use_id="functions.add:0", content="2"),
                ToolResultBlock(tool_use_id="call_2", content="bad call", is_error=True),
            ]
        ),
    ]
    messages = body(messages=history, extra_body=NO_CACHE)["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            WEB,
            {"type": "thinking", "thinking": "let me think", "signature": "EqQBCgIYAhIM"},
            REDACTED,
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "functions_add_0", "name": "add", "input": {"a": 1}},
            {"type": "tool_use", "id": "call_2", "name": "invalid_tool_call", "input": {}},
        ],
    }
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "functions_add_0", "content": "2"},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "bad call", "is_error": True},
        {"type": "text", "text": "and then"},
    ]


def test_redacted_block_before_a_thinking_block_keeps_its_place() -> None:
    history = [
        UserMessage(content="q"),
        AssistantMessage(
            model="m",
            content=[
                RawBlock(provider="anthropic", data=REDACTED),
                ThinkingBlock(thinking="t", signature="SIG"),
                TextBlock(text="a"),
            ],
        ),
    ]
    content = body(messages=history, extra_body=NO_CACHE)["messages"][1]["content"]
    assert content[:2] == [REDACTED, {"type": "thinking", "thinking": "t", "signature": "SIG"}]


def test_raw_blocks_of_other_providers_are_left_off_the_wire(caplog: pytest.LogCaptureFixture) -> None:
    foreign = {"type": "reasoning", "encrypted_content": "gAAAA"}
    history = [
        UserMessage(content="q"),
        AssistantMessage(
            model="m",
            content=[RawBlock(provider="openai", data=foreign), TextBlock(text="a")],
        ),
    ]
    with caplog.at_level(logging.DEBUG, logger="openagent.anthropic"):
        content = body(messages=history, extra_body=NO_CACHE)["messages"][1]["content"]
    assert content == [{"type": "text", "text": "a"}]
    assert any("openai raw block" in record.getMessage() for record in caplog.records)


def test_a_turn_of_only_foreign_raw_blocks_is_not_sent() -> None:
    history = [
        UserMessage(content="q"),
        AssistantMessage(model="m", content=[RawBlock(provider="openai", data={"type": "reasoning"})]),
        UserMessage(content="again"),
    ]
    assert body(messages=history, extra_body=NO_CACHE)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "again"}]}
    ]


def test_cache_breakpoint_does_not_change_the_stored_raw_block() -> None:
    block = RawBlock(provider="anthropic", data=dict(WEB))
    history = [UserMessage(content="q"), AssistantMessage(model="m", content=[block])]
    content = body(messages=history)["messages"][1]["content"]
    assert content == [{**WEB, "cache_control": {"type": "ephemeral"}}]
    assert block.data == WEB  # the transcript keeps the block exactly as the API sent it


def test_consecutive_same_role_turns_merge_and_empty_turns_drop() -> None:
    history = [
        UserMessage(content="a"),
        UserMessage(content=""),
        AssistantMessage(model="m", content=[]),
        UserMessage(content=[ToolResultBlock(tool_use_id="t", content=None)]),
    ]
    assert body(messages=history, extra_body=NO_CACHE)["messages"] == [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t"}, {"type": "text", "text": "a"}],
        }
    ]


def test_cache_breakpoint_skips_thinking_blocks() -> None:
    history = [
        UserMessage(content="q"),
        AssistantMessage(
            model="m", content=[TextBlock(text="a"), ThinkingBlock(thinking="t", signature="S")]
        ),
    ]
    content = body(messages=history)["messages"][1]["content"]
    assert content[0]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in content[1]


@pytest.mark.parametrize(
    "message",
    [
        UserMessage(content=[ToolUseBlock(id="t", name="x", input={})]),
        AssistantMessage(model="m", content=[ToolResultBlock(tool_use_id="t")]),
    ],
)
def test_blocks_a_role_cannot_carry_raise_config_error(message: Any) -> None:
    with pytest.raises(ConfigError):
        body(messages=[message])


# --- the provider object ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_sent_request_headers_url_and_timeout() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(
            401, json={"type": "error", "error": {"type": "authentication_error", "message": "no"}}
        )

    provider = MessagesProvider(
        "claude-x",
        base_url="http://proxy.test/anthropic/v1/",
        api_key="sk-1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )
    request = ModelRequest("claude-x", [UserMessage(content="hi")], extra_body={"betas": ["b1"]}, timeout=3.0)
    with pytest.raises(Exception, match="no"):
        async for _ in provider.stream(request):
            pass
    await provider.aclose()
    (sent,) = seen
    assert str(sent.url) == "http://proxy.test/anthropic/v1/messages"
    # this SDK generation sends the key as a bearer token (older ones used x-api-key); both are filtered
    assert sent.headers["authorization"] == "Bearer sk-1" and sent.headers["anthropic-beta"] == "b1"
    assert json.loads(sent.content)["stream"] is True
    assert sent.extensions["timeout"]["read"] == 3.0


@pytest.mark.parametrize(
    ("env", "kwargs", "url", "key"),
    [
        pytest.param({"ANTHROPIC_API_KEY": "a"}, {}, "https://api.anthropic.com", "a", id="vendor-env"),
        pytest.param(
            {
                "ANTHROPIC_API_KEY": "a",
                "OPENAGENT_API_KEY": "o",
                "ANTHROPIC_BASE_URL": "http://b.test",
                "OPENAGENT_BASE_URL": "http://o.test",
            },
            {},
            "http://o.test",
            "o",
            id="openagent-env-first",
        ),
        pytest.param(
            {"OPENAGENT_API_KEY": "o", "OPENAGENT_BASE_URL": "http://o.test"},
            {"api_key": "k", "base_url": "http://k.test"},
            "http://k.test",
            "k",
            id="arguments-first",
        ),
        pytest.param(
            {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080/v1"},
            {},
            "http://127.0.0.1:8080",
            "no-key",
            id="local-server-needs-no-key",
        ),
    ],
)
@pytest.mark.anyio
async def test_key_and_url_resolution(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], kwargs: dict[str, str], url: str, key: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    provider = MessagesProvider("claude-x", **kwargs)
    assert provider.profile.base_url == url
    assert provider.profile.requires_api_key is (url == "https://api.anthropic.com")
    assert provider._headers["Authorization"] == f"Bearer {key}"
    await provider.aclose()


def test_official_api_without_a_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        MessagesProvider("claude-x")


def test_network_is_blocked_outside_recording() -> None:
    import socket

    with socket.socket() as sock, pytest.raises(RuntimeError, match="Network is disabled"):
        sock.connect(("127.0.0.1", 9))


def test_thinking_effort_betas_and_user_are_sent_natively() -> None:
    request = ModelRequest(
        "claude-sonnet-4-5", [], thinking={"type": "enabled", "budget_tokens": 50_000}, effort="high",
        betas=["context-1m-2025-08-07"], user="u-1", extra_body={"betas": ["other"]},
    )  # fmt: skip
    body, headers = build_body(request)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 50_000} and body["max_tokens"] > 50_000
    assert body["output_config"] == {"effort": "high"} and body["metadata"] == {"user_id": "u-1"}
    assert headers == {"anthropic-beta": "context-1m-2025-08-07,other"}
