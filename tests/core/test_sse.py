import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openagent._sse import ServerSentEvent, SSEDecoder

STREAM = (
    b": comment\n"
    b'event: message_start\ndata: {"a": 1}\n\n'
    b"data: line one\r\ndata: line two\r\n\r\n"
    b"id: 7\ndata:no-space \xc3\xa9\n\n"
    b"data: [DONE]\n\n"
)
EXPECTED = [
    ServerSentEvent("message_start", '{"a": 1}'),
    ServerSentEvent("message", "line one\nline two"),
    ServerSentEvent("message", "no-space é", "7"),
    ServerSentEvent("message", "[DONE]", "7"),
]


def decode(chunks):
    decoder = SSEDecoder()
    events = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events + decoder.flush()


def test_decodes_events_comments_multiline_data_and_ids():
    assert decode([STREAM]) == EXPECTED


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_any_fixed_split_gives_the_same_events(size):
    assert decode([STREAM[i : i + size] for i in range(0, len(STREAM), size)]) == EXPECTED


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=20))
def test_any_rechunking_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert decode(chunks) == EXPECTED


def test_bom_bare_cr_and_missing_final_blank_line():
    assert decode([b"\xef\xbb\xbfdata: a\r\rdata: b"]) == [
        ServerSentEvent("message", "a"),
        ServerSentEvent("message", "b"),
    ]


def test_cr_and_lf_split_across_chunks_is_one_line_end():
    assert decode([b"data: a\r", b"\ndata: b\n\n"]) == [ServerSentEvent("message", "a\nb")]


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data):
    decode([data])
