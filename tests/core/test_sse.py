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


@pytest.mark.parametrize(
    ("data", "value"),
    [('{"a": 1}', {"a": 1}), (" [1, 2] ", [1, 2]), ('"text"', "text"), ("0", 0)],
)
def test_json_data_parses_one_value(data, value):
    from openagent._sse import json_data

    assert json_data(data) == value


@pytest.mark.parametrize("data", ["", "{", '{"a": 1} {"b": 2}', '{"a": 1}x', "[DONE]"])
def test_json_data_refuses_anything_but_one_value(data):
    from openagent._sse import json_data

    with pytest.raises(ValueError):
        json_data(data)


def test_the_one_line_fast_path_and_the_general_path_agree():
    chunks = [b'data: {"a": 1}\n\n', b"data:x\n\n", b"event: e\ndata: y\n\n", b"data: z\n\n"]
    fast = SSEDecoder()
    got = [e for c in chunks for e in fast.feed(c)]
    slow = decode([b"".join(chunks)])
    assert (
        got
        == slow
        == [
            ServerSentEvent("message", '{"a": 1}'),
            ServerSentEvent("message", "x"),
            ServerSentEvent("e", "y"),
            ServerSentEvent("message", "z"),
        ]
    )


def test_the_named_event_fast_path_and_the_general_path_agree():
    chunks = [
        b"data: first\n\n",
        b'event: response.output_text.delta\ndata: {"delta": "hi"}\n\n',
        b"event:\ndata:unnamed\n\n",
        b"event: e\nid: 3\ndata: z\n\n",
        b"event: e2\ndata: x\n\n",
    ]
    fast = SSEDecoder()
    got = [e for c in chunks for e in fast.feed(c)]
    assert got == decode([b"".join(chunks)])
    assert got[1] == ServerSentEvent("response.output_text.delta", '{"delta": "hi"}')
    assert got[2] == ServerSentEvent("message", "unnamed")
    assert got[4] == ServerSentEvent("e2", "x", "3")
