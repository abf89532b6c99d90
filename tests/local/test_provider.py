"""The ``local`` provider over the real engine: streaming, reuse, templates, tool-call grammar, crashes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import anyio
import pytest

from openagent.errors import ConfigError, ProviderConnectionError
from openagent.models import ModelRequest, Stop, TextDelta, ToolCallDelta, ToolCallStart, ToolSpec, Usage
from openagent.types import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from openagent_local import TEMPLATE_ENV, LocalProvider, ServerSpec, stop_server
from openagent_local._grammar import forced_call_grammar, must_call
from openagent_local._server import ensure_server_sync

pytestmark = pytest.mark.anyio
ADD = ToolSpec(
    "add",
    "Add two numbers.",
    {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
)
ECHO = ToolSpec("echo", "Repeat a text.", {"type": "object", "properties": {"text": {"type": "string"}}})


def _request(prompt: str = "Say hello.", **kwargs) -> ModelRequest:
    return ModelRequest(
        model="smollm2",
        messages=[UserMessage(content=prompt)],
        max_tokens=kwargs.pop("max_tokens", 16),
        **kwargs,
    )


async def _events(provider: LocalProvider, request: ModelRequest | None = None) -> list[object]:
    with anyio.fail_after(60):
        return [event async for event in provider.stream(request or _request())]


async def _close(provider: LocalProvider, root: Path) -> None:
    await provider.aclose()
    if provider.server is not None:
        stop_server(provider.server, root=root)


def _provider(root: Path, **kwargs) -> LocalProvider:
    return LocalProvider("smollm2", root=root, ctx_size=1024, threads=1, **kwargs)


async def test_the_first_request_starts_the_server_and_events_stream(root: Path, model: Path):
    provider = _provider(root)
    assert provider.server is None  # nothing starts before the first request
    try:
        events = await _events(provider)
        first = provider.server
        await _events(provider)
        assert provider.server == first  # reused
    finally:
        await _close(provider, root)
    assert len([e for e in events if isinstance(e, TextDelta)]) >= 2  # streamed, not whole
    assert any(isinstance(e, Usage) and e.output_tokens > 0 and e.input_tokens > 0 for e in events)
    assert isinstance(events[-1], Stop)
    assert first is not None and first.model == str(model)


@pytest.mark.parametrize("how", ["argument", "environment"])
async def test_a_chat_template_file_is_used(
    root: Path, tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
):
    template = tmp_path / "plain.jinja"
    template.write_text(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\nOK-TEMPLATE {% endif %}"
    )
    if how == "environment":
        monkeypatch.setenv(TEMPLATE_ENV, str(template))
        provider = _provider(root)
    else:
        provider = _provider(root, chat_template=template)
    try:
        await _events(provider)
        assert provider.server is not None and provider.server.chat_template == str(template)
    finally:
        await _close(provider, root)


async def test_a_missing_template_or_model_fails_before_anything_starts(root: Path, tmp_path: Path):
    with pytest.raises(ConfigError, match="no chat template file"):
        _provider(root, chat_template=tmp_path / "nope.jinja")
    with pytest.raises(ConfigError, match="no installed model package provides 'no-such-model'"):
        LocalProvider("no-such-model", root=root)


async def test_a_required_tool_call_is_held_to_the_grammar(root: Path, model: Path):
    """Even the 135M model, sampled hot, writes a whole valid call: the sampler admits nothing else.

    Sampled at temperature 1 over several seeds, because free whitespace or invented argument keys once
    let it pad a call until ``max_tokens`` cut it in half on some seeds and machines.
    """
    provider = _provider(root)
    try:
        for seed in range(12):
            request = _request(
                "What is 2 + 3?",
                tools=[ADD, ECHO],
                tool_choice={"type": "tool", "name": "add"},
                max_tokens=64,
                extra_body={"seed": seed, "temperature": 1.0},
            )
            events = await _events(provider, request)
            starts = [e for e in events if isinstance(e, ToolCallStart)]
            assert [s.name for s in starts] == ["add"], (seed, events)
            assert isinstance(events[-1], Stop) and events[-1].reason == "tool_use", (seed, events)
            arguments = json.loads("".join(e.arguments for e in events if isinstance(e, ToolCallDelta)))
            assert set(arguments) == {"a", "b"}, (seed, arguments)
            assert not [e for e in events if isinstance(e, TextDelta) and e.text.strip()]
    finally:
        await _close(provider, root)


def test_a_call_is_forced_only_on_a_turn_that_answers_the_user():
    asked = _request(tools=[ADD], tool_choice="required")
    assert must_call(asked) == ""
    assert must_call(_request(tools=[ADD], tool_choice="any")) == ""
    assert (
        must_call(_request(tools=[ADD], tool_choice={"type": "function", "function": {"name": "add"}}))
        == "add"
    )
    assert must_call(_request(tools=[ADD], tool_choice="auto")) is None
    assert must_call(_request(tools=[], tool_choice="required")) is None
    answered = ModelRequest(
        model="m",
        messages=[
            UserMessage(content="What is 2 + 3?"),
            AssistantMessage(content=[ToolUseBlock(id="c", name="add", input={"a": 2, "b": 3})], model="m"),
            UserMessage(content=[ToolResultBlock(tool_use_id="c", content="5")]),
        ],
        tools=[ADD],
        tool_choice="required",
    )
    assert must_call(answered) is None, "after the results the model must be able to answer"


def test_the_grammar_names_each_offered_tool_and_its_schema():
    grammar = forced_call_grammar(_request(tools=[ADD, ECHO]))
    head, _, schema = grammar.rpartition("call: %json ")
    assert head.startswith('%llguidance {}\nstart: "<tool_call>\\n" call "\\n</tool_call>"')
    calls = json.loads(schema)["anyOf"]
    assert [c["properties"]["name"]["const"] for c in calls] == ["add", "echo"]
    assert calls[0]["properties"]["arguments"] == {**ADD.input_schema, "additionalProperties": False}
    assert json.loads(schema)["x-guidance"] == {"whitespace_flexible": False}
    only = json.loads(forced_call_grammar(_request(tools=[ADD, ECHO]), "echo").rpartition("call: %json ")[2])
    assert only["properties"]["name"]["const"] == "echo"


async def test_a_server_killed_mid_stream_is_a_connection_error_and_the_next_request_restarts_it(
    root: Path, model: Path
):
    provider = _provider(root)
    try:
        seen = []
        with pytest.raises(ProviderConnectionError) as info:
            with anyio.fail_after(60):
                async for event in provider.stream(
                    _request("Write a long story about a dragon.", max_tokens=400)
                ):
                    seen.append(event)
                    if len(seen) == 3:
                        assert provider.server is not None
                        killed = provider.server.pid
                        os.kill(killed, signal.SIGKILL)
        assert info.value.provider == "local"
        assert f"pid {killed}" in str(info.value) and "died during the request" in str(info.value)
        assert isinstance(info.value.__cause__, ProviderConnectionError)  # the wire format's own error, kept

        events = await _events(provider)
        assert [e for e in events if isinstance(e, TextDelta)]
        assert provider.server is not None and provider.server.pid != killed
    finally:
        await _close(provider, root)


async def test_base_url_uses_a_server_someone_else_runs(root: Path, model: Path):
    server = ensure_server_sync(ServerSpec(model=model, alias="smollm2", ctx_size=512, threads=1), root=root)
    provider = LocalProvider("anything", base_url=server.base_url)
    try:
        events = await _events(provider)
    finally:
        await provider.aclose()
        stop_server(server, root=root)
    assert [e for e in events if isinstance(e, TextDelta)]
    assert provider.server is None
    assert provider.profile.name == "llamacpp"
