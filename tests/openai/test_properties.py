"""Properties of the stream parser: re-chunking never changes the events; no input raises anything but a
`ProviderError`. ``OPENAGENT_FUZZ_EXAMPLES`` sets the example count (``nox -s fuzz`` runs 100,000).
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openagent._errors import ProviderError
from openagent._models import ModelEvent
from openagent._sse import SSEDecoder
from openagent_openai._chat import ChatStream

EXAMPLES = int(os.environ.get("OPENAGENT_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.fuzz


def parse(chunks: list[bytes], *, text_protocol: bool = False) -> list[ModelEvent]:
    """The provider's byte loop, without the HTTP: decoder → parser → finish."""
    ids = itertools.count()
    parser = ChatStream(
        "test", tool_names=frozenset({"add"}), text_protocol=text_protocol, new_id=lambda: f"gen_{next(ids)}"
    )
    decoder = SSEDecoder()
    events: list[ModelEvent] = []
    for chunk in chunks:
        for event in decoder.feed(chunk):
            events.extend(parser.feed(event.data))
    for event in decoder.flush():
        events.extend(parser.feed(event.data))
    return [*events, *parser.finish()]


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    return [body[a:b] for a, b in itertools.pairwise([0, *points, len(body)])]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    """A valid event stream mixing text, reasoning, tool-call fragments, usage and a finish reason."""
    chunks: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["content", "reasoning_content", "reasoning", "call"]))
        if kind == "call":
            args = json.dumps({"a": draw(st.integers()), "s": draw(TEXT)})
            cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=3)))
            pieces = [args[a:b] for a, b in itertools.pairwise([0, *cuts, len(args)])]
            for i, piece in enumerate(pieces):
                head = (
                    {"id": f"c{n}", "type": "function", "function": {"name": "add"}}
                    if i == 0
                    else {"function": {}}
                )
                head["function"]["arguments"] = piece
                chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": n, **head}]}}]})
        else:
            chunks.append({"choices": [{"index": 0, "delta": {kind: draw(TEXT)}}]})
    chunks.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": draw(st.sampled_from(["stop", "length"]))}]}
    )
    if draw(st.booleans()):
        chunks.append(
            {"choices": [], "usage": {"prompt_tokens": draw(st.integers(0, 99)), "completion_tokens": 3}}
        )
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = [f"data: {json.dumps(c, ensure_ascii=draw(st.booleans()))}{newline}{newline}" for c in chunks]
    return ("".join(lines) + f"data: [DONE]{newline}{newline}").encode()


@SETTINGS
@given(body=streams(), cuts=st.lists(st.integers(min_value=0), max_size=40), text_protocol=st.booleans())
def test_any_rechunking_yields_the_same_events(body: bytes, cuts: list[int], text_protocol: bool) -> None:
    whole = parse([body], text_protocol=text_protocol)
    assert parse(split(body, cuts), text_protocol=text_protocol) == whole
    assert parse([bytes([b]) for b in body], text_protocol=text_protocol) == whole


@SETTINGS
@given(body=st.binary(max_size=600), cuts=st.lists(st.integers(min_value=0), max_size=10))
def test_arbitrary_bytes_raise_only_provider_errors(body: bytes, cuts: list[int]) -> None:
    try:
        parse(split(body, cuts))
    except ProviderError:
        pass


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "index",
                    "id",
                    "name",
                    "arguments",
                    "function",
                    "content",
                    "tool_calls",
                    "delta",
                    "choices",
                    "usage",
                    "finish_reason",
                    "reasoning",
                    "error",
                    "prompt_tokens",
                    "message",
                    "function_call",
                    "prompt_tokens_details",
                    "cached_tokens",
                ]
            )
            | st.text(max_size=4),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@SETTINGS
@given(values=st.lists(JSON, max_size=6), text_protocol=st.booleans(), done=st.booleans())
def test_arbitrary_json_chunks_raise_only_provider_errors(
    values: list[Any], text_protocol: bool, done: bool
) -> None:
    shapes = itertools.cycle(
        [
            lambda v: v,
            lambda v: {"choices": [{"delta": v}]},
            lambda v: {"choices": v},
            lambda v: {"choices": [{"delta": {"tool_calls": v}}]},
            lambda v: {"choices": [{"delta": {"tool_calls": [v]}}]},
            lambda v: {"usage": v},
            lambda v: {"choices": [{"delta": {"function_call": v}, "finish_reason": v}]},
        ]
    )
    body = "".join(f"data: {json.dumps(shape(v))}\n\n" for shape, v in zip(shapes, values, strict=False))
    try:
        parse([(body + ("data: [DONE]\n\n" if done else "")).encode()], text_protocol=text_protocol)
    except ProviderError:
        pass
