"""Answers for Responses contract cassettes no local server can record, built from OpenAI's documented events.

llama.cpp's server speaks ``/v1/responses`` (test_text, test_usage and test_errors are recorded from it), but
a 135M model makes no reliable tool calls, has no reasoning items, ignores ``text.format`` and reports a turn
cut at ``max_output_tokens`` as ``completed``; OpenAI's hosted tools and failures exist only on OpenAI. These
streams follow the event shapes of OpenAI's API reference and guides (the URL of each is in ``DOCS`` and in
its cassette's first line).

``OPENAGENT_CONSTRUCT=test_reasoning,… pytest tests/openai/test_contract_responses.py --record-mode=rewrite``
sends the contract's real requests to a mock transport answering with these streams while vcrpy records
them; ``python tests/openai/responses_constructed.py [names]`` then marks those cassettes ``constructed:
true``. Recording against OpenAI (``nox -s record``, see test_contract_responses.py) replaces them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from openai_constructed import mark_constructed
from responses_events import (
    completed,
    created,
    error_event,
    function_call,
    hosted_call,
    incomplete,
    message,
    reasoning,
    sse,
    usage,
)

__all__ = ["ANSWERS", "CASSETTES", "DOCS", "ENCRYPTED"]

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "openai" / "test_contract_responses"
ENCRYPTED = "gAAAAABo0Zk2constructedReasoningItemEncryptedContent=="
"""The opaque ``encrypted_content`` of the constructed reasoning items (what OpenAI's looks like: Fernet)."""


def _turn(items: list[dict[str, Any]], used: dict[str, Any]) -> bytes:
    return sse(*created(), *items, completed(items, used))


_CALL = [
    *reasoning(
        0, [["**Adding numbers**\n\nThe user asks for 1234 + 4321 with the add tool."]], encrypted=ENCRYPTED
    ),
    *function_call(
        1, "call_3kNe8iDAdd9mJ7vMx", "add", ['{"a":', "1234,", '"b":', "4321}"], item_id="fc_68a1"
    ),
]
_ANSWER = [
    *reasoning(0, [["**Reporting the sum**"]], item_id="rs_2", encrypted=ENCRYPTED + "2"),
    *message(1, ["1234 + 4321 = ", "5555."], item_id="msg_68a2"),
]
_PARALLEL = [
    *reasoning(0, [["**Two cities, two calls**"]], encrypted=ENCRYPTED),
    *function_call(1, "call_paris7Hx", "get_weather", ['{"city":', '"Paris"}'], item_id="fc_p"),
    *function_call(2, "call_london9Qz", "get_weather", ['{"city":', '"London"}'], item_id="fc_l"),
]
_REASONING = [
    *reasoning(0, [["**Checking divisors**\n\n91 = 7 × 13", ", so 91 is not prime."]], encrypted=ENCRYPTED),
    *message(1, ["No", "."]),
]
_STRUCTURED = message(0, ['{"city":', '"London",', '"country":', '"United Kingdom"}'])
_SEARCH_ITEM = {
    "id": "ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "positive news story today"},
}
_CITATION = {
    "type": "url_citation",
    "start_index": 38,
    "end_index": 69,
    "url": "https://news.example/good-news?utm_source=openai",
    "title": "Good news of the day",
}
_SEARCHED = [
    *hosted_call(0, _SEARCH_ITEM, ["in_progress", "searching", "completed"]),
    *message(
        1,
        ["As of today, ", "a positive news story: ", "volunteers restored a wetland."],
        item_id="msg_67c9fa077e288190af08fdffda2e34f20be649c1a5ff9609",
        annotations=[_CITATION],
    ),
]
_CUT = message(0, ["1, 2, 3, 4, 5, 6, 7, ", "8, 9"])
_FAILED = {
    "type": "response.failed",
    "response": {
        "id": "resp_123",
        "object": "response",
        "created_at": 1740855869,
        "status": "failed",
        "error": {"code": "server_error", "message": "The model failed to generate a response."},
        "incomplete_details": None,
        "model": "gpt-4o-mini-2024-07-18",
        "output": [],
        "usage": None,
    },
}

ANSWERS: dict[str, list[bytes]] = {
    "test_tool_round_trip": [
        _turn(_CALL, usage(92, 48, reasoning=24)),
        _turn(_ANSWER, usage(160, 30, cached=64)),
    ],
    "test_parallel_tools": [_turn(_PARALLEL, usage(85, 70, reasoning=32))],
    "test_reasoning": [_turn(_REASONING, usage(22, 150, reasoning=140))],
    "test_structured_output": [_turn(_STRUCTURED, usage(70, 14))],
    "test_hosted_web_search": [_turn(_SEARCHED, usage(3000, 90))],
    "test_error_event": [sse(*created(), error_event("ERR_SOMETHING", "Something went wrong"))],
    "test_failed_response": [sse(*created(), _FAILED)],
    "test_incomplete_response": [
        sse(*created(), *_CUT, incomplete(_CUT, usage(14, 16), "max_output_tokens"))
    ],
}
_GUIDE = "https://platform.openai.com/docs/guides"
_REFERENCE = "https://platform.openai.com/docs/api-reference/responses-streaming"
DOCS = {
    "test_tool_round_trip": f"{_GUIDE}/function-calling?api-mode=responses#streaming and "
    f"{_GUIDE}/reasoning#keeping-reasoning-items-in-context",
    "test_parallel_tools": f"{_GUIDE}/function-calling?api-mode=responses#parallel-function-calling",
    "test_reasoning": f"{_GUIDE}/reasoning#reasoning-summaries",
    "test_structured_output": f"{_GUIDE}/structured-outputs?api-mode=responses#streaming",
    "test_hosted_web_search": f"{_GUIDE}/tools-web-search (output and citations)",
    "test_error_event": f"{_REFERENCE}/error (its example)",
    "test_failed_response": f"{_REFERENCE}/response/failed (its example)",
    "test_incomplete_response": f"{_REFERENCE}/response/incomplete",
}
assert set(DOCS) == set(ANSWERS)


if __name__ == "__main__":
    for name in sys.argv[1:] or ANSWERS:
        mark_constructed(name, DOCS, CASSETTES)
