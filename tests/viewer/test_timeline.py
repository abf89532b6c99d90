"""Entries → timeline → HTML, in process: forged and damaged transcripts render, statuses, redaction."""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openagent_viewer._redact import MARK, Redactor, secrets_from
from openagent_viewer._render import Renderer, chart
from openagent_viewer._source import is_session_id
from openagent_viewer._summary import summarize
from openagent_viewer._timeline import MAX_DEPTH, PREVIEW_CHARS, Timeline, full_values

RENDERER = Renderer()
EXAMPLES = int(os.environ.get("OPENAGENT_FUZZ_EXAMPLES", "60"))


def render(entries: list[Any]) -> tuple[str, Timeline]:
    """The page and a live replay of the same entries, which must agree on every item."""
    timeline = Timeline()
    ops = [op for entry in entries for op in timeline.feed(entry)]
    summary = summarize("s", "p", 0, entries)
    page = RENDERER.session_page(
        timeline.roots, summary=summary, turns=timeline.turns, project="p", base="/s/p/s",
        count=timeline.count, total_items=len(timeline.roots), commands=[], store_name="x",
    )  # fmt: skip
    RENDERER.ops(ops, "/s/p/s", timeline.turns, timeline.count)
    RENDERER.items(timeline.roots, 0, len(timeline.roots), "/s/p/s", timeline.count)
    RENDERER.summary(summary)
    return page, timeline


def message(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": f"u{id(fields)}", "timestamp": "2026-01-01T00:00:00+00:00",
            "message": {"type": kind, **fields}}  # fmt: skip


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)
KEYS = st.sampled_from(
    ["type", "message", "content", "tool_use_id", "id", "name", "input", "parent_tool_use_id", "usage",
     "subtype", "data", "is_error", "text", "thinking", "result", "permission", "duration_ms", "latency_ms",
     "cost_usd", "timestamp", "source", "media_type"]
)  # fmt: skip
TYPES = st.sampled_from(
    ["user", "assistant", "system", "result", "tool_use", "tool_result", "text", "thinking", "image",
     "tool_use_error", "permission_request", "tool_outcome", "init", "compact_boundary", "raw"]
)  # fmt: skip
SHAPED = st.recursive(
    JSON,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(KEYS, inner | TYPES | st.sampled_from(["t1", "t2"]), max_size=6)
    ),
    max_leaves=24,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SHAPED, max_size=12))
def test_any_json_entries_render_without_error(entries: list[Any]) -> None:
    page, timeline = render(entries)
    assert timeline.count == len(entries)
    assert "<script" not in page.replace('<script src="/static/viewer.js" defer></script>', "")


def test_forged_values_render_as_text_and_numbers_stay_numbers() -> None:
    deep: Any = "bottom"
    for _ in range(5000):
        deep = [deep]
    entries = [
        "not an object", 12, None, [1, 2],
        {"type": "assistant", "message": "not an object"},
        message("assistant", model={"a": 1}, content=[{"type": "tool_use", "id": "t1", "name": 5, "input": deep}],
                usage={"input_tokens": math.nan, "output_tokens": 10**400}),
        message("user", content=[{"type": "tool_result", "tool_use_id": "t1",
                                  "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                               "data": '"><script>alert(1)</script>'}}]}]),
        message("result", subtype="<b>x</b>", duration_ms="soon", total_cost_usd=math.inf, num_turns=[1]),
        {"type": "tool_outcome", "tool_use_id": "t1", "duration_ms": -5, "permission": "allow"},
        {"type": "permission_request", "tool_use_id": "missing"},
        message("system", subtype="compact_boundary", data=[1]),
        {"type": "summary", "summary": "a Claude Code entry"},
    ]  # fmt: skip
    page, timeline = render(entries)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "alert(1)" not in page.split("<img", 1)[-1].split(">", 1)[0]  # no image made from non-base64 data
    assert "a Claude Code entry" in page
    assert timeline.cards["t1"].duration_ms == -5 and timeline.cards["t1"].permission is None


def test_subagents_nest_by_their_call_and_stop_nesting_at_the_depth_limit() -> None:
    entries = []
    for depth in range(MAX_DEPTH + 3):
        parent = {"parent_tool_use_id": f"t{depth - 1}"} if depth else {}
        call = {"type": "tool_use", "id": f"t{depth}", "name": "Task", "input": {}}
        entries.append(message("assistant", model="m", content=[call], **parent))
    _, timeline = render(entries)
    assert [card.depth for card in timeline.cards.values()] == [*range(MAX_DEPTH + 1), 0, 1]
    assert len(timeline.roots) == 2
    assert timeline.roots[1].lost_parent is False and timeline.roots[1].parts[0].depth == 0


def test_a_tool_result_for_an_unknown_call_is_shown_on_its_own() -> None:
    _, timeline = render(
        [message("user", content=[{"type": "tool_result", "tool_use_id": "nope", "content": "x"}])]
    )
    assert [node.kind for node in timeline.roots] == ["orphan"]


def test_long_values_are_cut_and_the_full_text_is_kept() -> None:
    text = "word " * 2000
    entry = message("user", content=[{"type": "tool_result", "tool_use_id": "t", "content": text}])
    _, timeline = render([entry])
    part = timeline.roots[0].parts[0]
    assert part.truncated and len(part.value) == PREVIEW_CHARS and part.total == len(text)
    assert full_values(entry, 0) == [("text", text)]


@pytest.mark.parametrize(
    ("entries", "status"),
    [
        ([message("system", subtype="init", data={}), message("result", is_error=False)], "finished"),
        ([message("system", subtype="init", data={}), message("result", is_error=True)], "error"),
        ([message("system", subtype="init", data={}), message("user", content="hi")], "running"),
        (
            [message("system", subtype="init", data={}), {"type": "permission_request", "tool_use_id": "t"}],
            "waiting for approval",
        ),  # fmt: skip
        (
            [
                message("system", subtype="init", data={}),
                {"type": "permission_request", "tool_use_id": "t"},
                {"type": "tool_outcome", "tool_use_id": "t"},
            ],
            "running",
        ),  # fmt: skip
        ([message("result", is_error=False), message("system", subtype="init", data={})], "running"),
        ([], "running"),
    ],
)
def test_status_comes_from_the_latest_run(entries: list[Any], status: str) -> None:
    assert summarize("s", "p", 0, entries).status == status


def test_summary_sums_tokens_and_per_turn_cost() -> None:
    entries = [
        message("system", subtype="init", data={"model": "m1", "cwd": "/w"}),
        message("user", content="  first\n prompt  "),
        {
            **message("assistant", model="m2", content=[], usage={"input_tokens": 10, "output_tokens": 5}),
            "cost_usd": 0.25,
            "latency_ms": 100,
        },  # fmt: skip
        message("assistant", model="m3", content=[], usage={"input_tokens": 1}, parent_tool_use_id="t"),
        message("result", is_error=False, duration_ms=1500, total_cost_usd=9.0),
    ]
    summary = summarize("s", "p", 0, entries)
    assert (summary.title, summary.model, summary.turns, summary.tokens) == ("first prompt", "m2", 1, 16)
    assert (summary.cost_usd, summary.duration_ms, summary.cwd) == (0.25, 1500, "/w")


def test_the_chart_has_at_most_300_bars() -> None:
    entries = [message("assistant", model="m", content=[], usage={"output_tokens": n}) for n in range(1000)]
    _, timeline = render(entries)
    assert len(re.findall("<rect", str(chart(timeline.turns)))) == 250  # 4 turns a bar


def test_redaction_replaces_secret_values_everywhere() -> None:
    secrets = secrets_from(
        {
            "OPENAI_API_KEY": "sk-abcdef123456",
            "GITHUB_TOKEN": "ghp_zzzzzzzz",
            "HOME": "/root",
            "MY_KEY": "short",
        },
        store_url="redis://user:hunter2hunter2@127.0.0.1/0",
    )
    assert secrets == ["sk-abcdef123456", "hunter2hunter2", "ghp_zzzzzzzz"]
    redactor = Redactor(secrets)
    entries = [{"type": "user", "sk-abcdef123456": ["x sk-abcdef123456 y", {"k": "hunter2hunter2"}], "n": 1}]
    assert json.dumps(redactor.entries(entries)) == json.dumps(
        [{"type": "user", MARK: [f"x {MARK} y", {"k": MARK}], "n": 1}]
    )
    untouched = [{"type": "user", "text": "nothing secret"}]
    assert redactor.entries(untouched) is untouched


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("3f2a-b1", True),
        ("a.b_c-d", True),
        ("..", False),
        ("a/..", False),
        ("a/b", False),
        ("", False),
        (".hidden", False),
        ("x" * 201, False),
        ("a\x00b", False),
        ("a..b", False),
        (5, False),
    ],  # fmt: skip
)
def test_session_ids_are_checked_before_any_store_sees_them(value: Any, ok: bool) -> None:
    assert is_session_id(value) is ok


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_image_results_become_data_uris_only_for_known_types_in_base64() -> None:
    blocks = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "data": PNG, "mimeType": "image/png"},  # MCP's form
        {"type": "image", "source": {"type": "url", "url": "http://example.com/x.png"}},
        {"type": "image", "data": PNG, "mimeType": "image/svg+xml"},
        {"type": "image", "data": "not base64!", "mimeType": "image/png"},
        {"type": "text", "text": "caption"},
    ]
    entry = message("user", content=[{"type": "tool_result", "tool_use_id": "t", "content": blocks}])
    page, timeline = render([entry])
    kinds = [part.kind for part in timeline.roots[0].parts]
    assert kinds == ["image", "image", "json", "json", "json", "text"]
    assert timeline.roots[0].parts[0].value == f"data:image/png;base64,{PNG}"
    assert page.count('<img class="image"') == 2 and "example.com" in page
