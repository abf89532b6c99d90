"""Properties of the Responses stream parser: re-chunking never changes the events; no input raises anything but
a `ProviderError`. ``OPENAGENT_FUZZ_EXAMPLES`` sets the example count (``nox -s fuzz`` runs 100,000).
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from responses_events import (
    completed,
    created,
    function_call,
    hosted_call,
    incomplete,
    message,
    reasoning,
    usage,
)

from openagent._sse import SSEDecoder
from openagent.errors import ProviderError
from openagent.models import ModelEvent
from openagent_openai._responses import _QUIET, ResponsesStream

EXAMPLES = int(os.environ.get("OPENAGENT_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.fuzz


def parse(chunks: list[bytes]) -> list[ModelEvent]:
    """The provider's byte loop, without the HTTP: decoder → parser → finish."""
    ids = itertools.count()
    parser = ResponsesStream("test", new_id=lambda: f"gen_{next(ids)}")
    decoder = SSEDecoder()
    events: list[ModelEvent] = []
    for chunk in chunks:
        for event in decoder.feed(chunk):
            events.extend(parser.feed(event.data, event.event))
    for event in decoder.flush():
        events.extend(parser.feed(event.data, event.event))
    return [*events, *parser.finish()]


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    return [body[a:b] for a, b in itertools.pairwise([0, *points, len(body)])]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
PIECES = st.lists(TEXT, min_size=0, max_size=4)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    """A valid stream: reasoning, messages, function calls and hosted calls, then a terminal event."""
    items: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["reasoning", "message", "call", "hosted"]))
        if kind == "reasoning":
            items += reasoning(n, draw(st.lists(PIECES, max_size=3)), item_id=f"rs_{n}")
        elif kind == "message":
            items += message(n, draw(PIECES), item_id=f"msg_{n}")
        elif kind == "call":
            args = json.dumps({"a": draw(st.integers()), "s": draw(TEXT)})
            cuts = sorted(draw(st.lists(st.integers(0, len(args)), max_size=3)))
            pieces = [args[a:b] for a, b in itertools.pairwise([0, *cuts, len(args)])]
            items += function_call(n, f"call_{n}", "add", pieces)
        else:
            items += hosted_call(
                n, {"id": f"ws_{n}", "type": "web_search_call", "status": "completed"}, ["searching"]
            )
    used = usage(draw(st.integers(0, 99)), draw(st.integers(0, 99))) if draw(st.booleans()) else None
    end = completed(items, used) if draw(st.booleans()) else incomplete(items, used, "max_output_tokens")
    events = [*created(), *items, end]
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    named = draw(st.booleans())
    ascii_only = draw(st.booleans())
    out = []
    for seq, event in enumerate(events):
        data = json.dumps({**event, "sequence_number": seq}, ensure_ascii=ascii_only)
        head = f"event: {event['type']}{newline}" if named else ""
        out.append(f"{head}data: {data}{newline}{newline}")
    return "".join(out).encode()


@SETTINGS
@given(body=streams(), cuts=st.lists(st.integers(min_value=0), max_size=40))
def test_any_rechunking_yields_the_same_events(body: bytes, cuts: list[int]) -> None:
    whole = parse([body])
    assert parse(split(body, cuts)) == whole
    assert parse([bytes([b]) for b in body]) == whole


@SETTINGS
@given(body=st.binary(max_size=600), cuts=st.lists(st.integers(min_value=0), max_size=10))
def test_arbitrary_bytes_raise_only_provider_errors(body: bytes, cuts: list[int]) -> None:
    try:
        parse(split(body, cuts))
    except ProviderError:
        pass


KEYS = [
    "type", "item", "item_id", "output_index", "delta", "id", "call_id", "name", "arguments", "content", "text",
    "summary", "summary_index", "response", "status", "usage", "input_tokens", "output_tokens", "error",
    "code", "message", "incomplete_details", "reason", "output", "object", "annotations", "refusal",
    "input_tokens_details", "cached_tokens", "encrypted_content",
]  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=12,
)
TYPES = sorted(
    {*ResponsesStream._handlers, *_QUIET, "response.output_text.delta", "response.made_up"}
    - {"response.created"}
)


@SETTINGS
@given(
    values=st.lists(st.tuples(st.sampled_from(TYPES), JSON, JSON, JSON), max_size=8),
    whole=st.booleans(),
)
def test_arbitrary_json_events_raise_only_provider_errors(values: list[Any], whole: bool) -> None:
    """Every known event type with arbitrary fields, and arbitrary response objects in place of a stream."""
    shapes = itertools.cycle(
        [
            lambda t, a, b, c: {"type": t, "item": a, "item_id": b, "output_index": c},
            lambda t, a, b, c: {"type": t, "delta": a, "item_id": b, "summary_index": c},
            lambda t, a, b, c: {"type": t, "response": a, "error": b, "code": c},
            lambda t, a, b, c: {
                "type": t,
                "item": {"type": "function_call", "id": a, "call_id": b, "arguments": c},
            },
            lambda t, a, b, c: {
                "type": t,
                "item": {"type": "message", "id": b, "content": a},
                "output_index": c,
            },
            lambda t, a, b, c: {"type": t, "response": {"status": a, "usage": b, "incomplete_details": c}},
            lambda t, a, b, c: {"object": "response", "output": a, "status": b, "usage": c},
            lambda t, a, b, c: a,
        ]
    )
    body = "".join(
        f"event: {v[0]}\ndata: {json.dumps(shape(*v))}\n\n" for shape, v in zip(shapes, values, strict=False)
    )
    if whole:
        body += 'data: {"type": "response.completed"}\n\n'
    try:
        parse([body.encode()])
    except ProviderError:
        pass
