"""Answers for contract cassettes the local model cannot record, built from providers' documented examples.

``OPENAGENT_CONSTRUCT=test_reasoning,test_parallel_tools pytest tests/openai/test_contract.py
--record-mode=rewrite`` sends the contract's real requests to a mock transport that answers with these
streams and vcrpy records the exchange; ``python tests/openai/openai_constructed.py [names]`` then marks those cassettes
``constructed: true``. Recording against a real endpoint (``nox -s record``) replaces them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx2

__all__ = ["DOCS", "constructing", "mark_constructed", "mock_client"]

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "openai" / "test_contract"


def _sse(*deltas: dict[str, Any], finish: str, usage: tuple[int, int]) -> bytes:
    base = {
        "id": "chatcmpl-constructed",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
    }
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    prompt, completion = usage
    counts = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    chunks.append({**base, "choices": [], "usage": counts})
    return (
        "".join(f"data: {json.dumps(c)}\n\n" for c in [*chunks, "[DONE]"] if c)
        .replace('data: "[DONE]"', "data: [DONE]")
        .encode()
    )


def _call(index: int, call_id: str, name: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        ]
    }


def _args(index: int, text: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, "function": {"arguments": text}}]}


ANSWERS: dict[str, list[bytes]] = {
    # OpenAI function-calling guide, "Streaming": one call per index, id and name on its first fragment.
    "test_parallel_tools": [
        _sse(
            {"role": "assistant", "content": None},
            _call(0, "call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather"),
            _args(0, '{"ci'),
            _args(0, 'ty": "Paris"}'),
            _call(1, "call_ABCXyZ8sL7QkqVv1m2n3o4p5", "get_weather"),
            _args(1, '{"city": '),
            _args(1, '"London"}'),
            finish="tool_calls",
            usage=(82, 40),
        )
    ],
    # OpenAI function-calling guide: the call, then the answer once the tool result is sent back.
    "test_tool_round_trip": [
        _sse(
            {"role": "assistant", "content": None},
            _call(0, "call_12345xyz", "add"),
            _args(0, '{"a": 1234,'),
            _args(0, ' "b": 4321}'),
            finish="tool_calls",
            usage=(120, 24),
        ),
        _sse(
            {"role": "assistant", "content": ""},
            {"content": "1234 + 4321 = "},
            {"content": "5555."},
            finish="stop",
            usage=(160, 12),
        ),
    ],
    # OpenAI chat-completions API reference, streaming example; usage from `stream_options`.
    "test_text": [
        _sse({"role": "assistant", "content": ""}, {"content": "Hello"}, finish="stop", usage=(14, 2))
    ],
    "test_usage": [
        _sse(
            {"role": "assistant", "content": ""},
            *({"content": f"{n}, "} for n in range(1, 5)),
            {"content": "5"},
            finish="stop",
            usage=(13, 14),
        )
    ],
    # OpenAI error codes guide: 401 "Incorrect API key provided".
    "test_errors": [
        json.dumps(
            {
                "error": {
                    "message": "Incorrect API key provided: wrong-key.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ).encode()
    ],
    # DeepSeek reasoning-model API (the `reasoning_content` delta field llama.cpp and vLLM also use).
    "test_reasoning": [
        _sse(
            {"role": "assistant", "content": None, "reasoning_content": ""},
            {"reasoning_content": "91 = 7 × 13"},
            {"reasoning_content": ", so 91 has divisors other than 1 and itself."},
            {"content": "No"},
            {"content": "."},
            finish="stop",
            usage=(18, 24),
        )
    ],
}
DOCS = {
    "test_parallel_tools": "https://platform.openai.com/docs/guides/function-calling#streaming",
    "test_reasoning": "https://api-docs.deepseek.com/guides/reasoning_model",
    "test_text": "https://platform.openai.com/docs/api-reference/chat/create (streaming example)",
    "test_usage": "https://platform.openai.com/docs/api-reference/chat/create (stream_options.include_usage)",
    "test_errors": "https://platform.openai.com/docs/guides/error-codes (401 Incorrect API key provided)",
    "test_tool_round_trip": "https://platform.openai.com/docs/guides/function-calling#streaming",
}


def constructing(test_name: str, wanted: str, answers: dict[str, list[bytes]] = ANSWERS) -> bool:
    return test_name in {name.strip() for name in wanted.split(",")} and test_name in answers


def mock_client(test_name: str, answers_by_test: dict[str, list[bytes]] = ANSWERS) -> httpx2.AsyncClient:
    answers = iter(answers_by_test[test_name])

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = next(answers)
        if body.startswith(b"{"):  # an error body
            return httpx2.Response(401, headers={"content-type": "application/json"}, content=body)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(answer))


def mark_constructed(test_name: str, docs: dict[str, str] = DOCS, folder: Path = CASSETTES) -> None:
    path = folder / f"{test_name}.yaml"
    text = path.read_text()
    if not text.startswith("# constructed"):
        note = f"# constructed: true -- built from the documented example at {docs[test_name]};\n"
        note += "# `nox -s record` against an endpoint that shows the behaviour replaces it.\n"
        path.write_text(note + text)


if __name__ == "__main__":
    for name in sys.argv[1:] or ANSWERS:
        mark_constructed(name)
