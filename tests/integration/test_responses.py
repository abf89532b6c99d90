"""The Responses wire end to end against llama.cpp's own server (``/v1/responses``, from the xllamacpp wheel)
running SmolLM2-135M-Instruct on loopback.

The assertions are on what is robust — events streamed, usage, the history sent back — never on what a 135M
model says.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from openagent import AgentOptions, AssistantMessage, Client, ResultMessage, StreamEvent
from openagent_local import LocalProvider, ModelFile, ensure_server
from openagent_openai import PROFILES, ResponsesProvider

pytestmark = pytest.mark.anyio


async def test_a_conversation_over_the_responses_wire(smollm2: ModelFile) -> None:
    local = LocalProvider("smollm2")
    assert local.spec is not None
    server = await ensure_server(local.spec)
    sent: list[dict[str, Any]] = []

    async def keep(request: httpx2.Request) -> None:
        sent.append(json.loads(request.content))

    client = httpx2.AsyncClient(event_hooks={"request": [keep]})
    provider = ResponsesProvider(
        "smollm2", profile=PROFILES["openai-responses"], base_url=server.base_url, http_client=client
    )
    options = AgentOptions(
        model=provider, max_tokens=24, temperature=0.0, include_partial_messages=True, persist_session=False
    )
    turns: list[list[Any]] = []
    with anyio.fail_after(120):
        async with client, Client(options) as agent:  # the provider (and its client) are the caller's
            for prompt in ("What is the capital of France?", "And of Italy?"):
                await agent.query(prompt)
                turns.append([m async for m in agent.receive_response()])
    for messages in turns:
        deltas = [
            m for m in messages if isinstance(m, StreamEvent) and m.event.get("type") == "content_block_delta"
        ]
        answer = next(m for m in messages if isinstance(m, AssistantMessage))
        result = messages[-1]
        assert isinstance(result, ResultMessage) and result.subtype == "success"
        assert len(deltas) >= 2 and result.result  # streamed, not delivered whole
        assert result.usage is not None and 0 < result.usage.output_tokens <= 24
        assert result.usage.input_tokens + result.usage.cache_read_input_tokens > 5
        assert answer.content and answer.stop_reason in ("end_turn", "max_tokens")
    first_answer = turns[0][-1].result
    # A request the server dropped unanswered (a kept-alive connection it was closing) goes once more: the
    # same body twice in a row is one request.
    sent = [s for i, s in enumerate(sent) if i == 0 or s != sent[i - 1]]
    assert [s["input"][0]["content"] for s in sent] == ["What is the capital of France?"] * 2
    assert sent[1]["input"][1:] == [
        {"type": "message", "role": "assistant", "content": first_answer},
        {"type": "message", "role": "user", "content": "And of Italy?"},
    ]
    assert all(s["stream"] is True and s["max_output_tokens"] == 24 for s in sent)
