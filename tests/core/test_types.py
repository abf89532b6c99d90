import pytest
from pydantic import ValidationError

from openagent._types import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    Usage,
    UserMessage,
    parse_message,
)

MESSAGES = [
    SystemMessage(subtype="init", data={"session_id": "s", "tools": ["a"]}),
    UserMessage(content="hi"),
    UserMessage(
        content=[ToolResultBlock(tool_use_id="t1", content=[{"type": "text", "text": "5"}], is_error=False)]
    ),
    AssistantMessage(
        content=[
            ThinkingBlock(thinking="hmm", signature="sig"),
            TextBlock(text="ok"),
            ToolUseBlock(id="t1", name="add", input={"a": 1}),
            ToolUseError(id="t2", name="add", error="bad json", raw_data='{"a":'),
        ],
        model="m",
        usage=Usage(input_tokens=3, output_tokens=4),
        stop_reason="tool_use",
        parent_tool_use_id="p",
    ),
    ResultMessage(
        subtype="success",
        duration_ms=1,
        duration_api_ms=1,
        is_error=False,
        num_turns=1,
        session_id="s",
        total_cost_usd=0.5,
        usage=Usage(output_tokens=1),
        result="ok",
        structured_output={"x": [1]},
    ),
    StreamEvent(uuid="u", session_id="s", event={"type": "content_block_delta"}),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_message_round_trips_through_json(message):
    assert parse_message(message.model_dump_json()) == message
    assert parse_message(message.model_dump(mode="json")) == message


def test_unknown_type_is_rejected_with_a_validation_error():
    with pytest.raises(ValidationError):
        parse_message({"type": "nope"})


def test_usage_adds_field_by_field_and_merges_running_totals():
    a = Usage(input_tokens=1, output_tokens=2, cache_read_input_tokens=3)
    b = Usage(input_tokens=10, output_tokens=20, cache_creation_input_tokens=5)
    assert a + b == Usage(
        input_tokens=11, output_tokens=22, cache_creation_input_tokens=5, cache_read_input_tokens=3
    )
    assert Usage(input_tokens=7).merge(Usage(output_tokens=9)) == Usage(input_tokens=7, output_tokens=9)
    assert (a + b).total_tokens == 41


def test_blocks_refuse_unknown_fields():
    with pytest.raises(ValidationError):
        TextBlock(text="x", colour="red")
