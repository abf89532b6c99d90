"""The viewer in a real browser, over sessions that real runs wrote: the list, a session's timeline, a
subagent nested under its Task call, escaping, redaction and "show all"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from viewer_support import SECRET, Project

from openagent.plugin import project_key_for

pytest.importorskip("openagent_openai", reason="the wire scenario runs the openai plugin")


@dataclass
class Site:
    project: Project
    url: str
    ids: dict[str, str]

    def session(self, scenario: str) -> str:
        return f"{self.url.rstrip('/')}/s/{project_key_for(self.project.cwd)}/{self.ids[scenario]}"


@pytest.fixture(scope="module")
def site(shared: Project) -> Iterator[Site]:
    ids = shared.agents("demo", "wire", "inject", "secret")
    yield Site(shared, shared.serve(), ids)


def test_list_shows_the_sessions_real_runs_made(site: Site, page) -> None:
    page.goto(site.url)
    rows = page.locator("a.row")
    assert rows.count() == 4
    demo = page.locator(f'a.row[data-session="{site.ids["demo"]}"]')
    assert demo.locator(".title").inner_text() == "Read README.md, then have the math agent add 2 and 3"
    cells = demo.locator(":scope > span").all_inner_texts()
    assert cells[2:7] == [
        "scripted",
        "3",
        "835",
        "$0.00142",
        cells[6],
    ]  # model, turns, tokens, cost, duration
    assert demo.locator(".badge").inner_text() == "finished"
    wire = page.locator(f'a.row[data-session="{site.ids["wire"]}"]')
    assert wire.locator(".model").inner_text() == "wire-model"  # over HTTP from the scripted server
    assert wire.locator(".badge").inner_text() == "finished"


def test_list_searches_text_and_filters_by_model_and_status(site: Site, page) -> None:
    page.goto(site.url)
    page.fill('input[name="q"]', "40 + 2 over the wire")
    page.press('input[name="q"]', "Enter")
    page.wait_for_url(re.compile(r"q=40"))
    assert page.locator("a.row").count() == 1
    assert page.locator("a.row .title").inner_text() == "What is 40 + 2 over the wire?"
    page.goto(site.url)
    page.select_option('select[name="model"]', "wire-model")  # the page submits on change
    page.wait_for_url(re.compile(r"model=wire-model"))
    assert page.locator("a.row").count() == 1
    page.goto(site.url + "?status=running")
    assert page.locator("a.row").count() == 0
    assert "No sessions match" in page.locator(".sessions").inner_text()


def test_session_page_shows_a_tool_call_with_its_input_and_output(site: Site, page) -> None:
    page.goto(site.session("demo"))
    card = page.locator('section.card[data-tool="read_file"]')
    assert '"path": "README.md"' in card.locator("details.input pre").inner_text()
    result = card.locator(".result pre")
    assert result.inner_text().startswith("contents of README.md\nline 1\n")
    assert card.locator(".badge.allow").inner_text() == "allowed"
    assert re.fullmatch(r"\d+ ms", card.locator(".duration").inner_text())
    # the long result is cut, and "show all" brings the rest as text
    assert "line 900" not in result.inner_text()
    card.locator("button.more").click()
    page.wait_for_function(
        "document.querySelector('section.card[data-tool=read_file] .result pre').textContent.includes('line 900')"
    )
    assert card.locator("button.more").count() == 0
    # thinking is collapsed, the answer is markdown with highlighted code, turns carry tokens and cost
    thinking = page.locator("details.thinking").first
    assert thinking.get_attribute("open") is None
    assert page.locator(".md strong", has_text="look").count() == 1
    assert page.locator(".md pre code span").count() > 0
    assert "turn 1 · 120 in · 30 out · $0.0003 · model" in page.locator(".turn").first.inner_text()
    assert page.locator("#chart rect.bar").count() == 3
    assert page.locator(".item.result .badge").inner_text() == "success"


def test_subagent_runs_nest_under_their_task_call(site: Site, page) -> None:
    page.goto(site.session("demo"))
    task = page.locator('section.card[data-tool="Task"]')
    nested = task.locator(".children > .item")
    kinds = [k.split()[1] for k in nested.evaluate_all("items => items.map(i => i.className)")]
    assert kinds == [
        "task",
        "prompt",
        "assistant",
        "assistant",
        "task",
    ]  # the task's start and end around its run
    assert nested.nth(0).inner_text().startswith("● task started: math")
    assert nested.nth(4).inner_text().startswith("■ task completed · 125 tokens · 1 tool uses")
    assert nested.nth(1).locator("pre.prompt").inner_text() == "add 2 and 3"
    inner = nested.nth(2).locator('section.card[data-tool="add"]')
    assert inner.locator(".result pre").inner_text() == "5.0"
    assert task.locator(":scope > .result pre").inner_text() == "5"
    # nothing of the subagent leaks to the top level
    assert page.locator('#timeline > .item section.card[data-tool="add"]').count() == 1


def test_resume_and_fork_commands_are_shown_exactly(site: Site, page) -> None:
    page.goto(site.session("demo"))
    commands = page.locator(".command code").all_inner_texts()
    sid = site.ids["demo"]
    where = f"cd {site.project.cwd} && "
    assert commands == [
        f"{where}openagent chat --resume {sid}",
        f'{where}openagent chat --resume "$(openagent sessions fork {sid})"',
    ]


def test_html_in_a_session_is_shown_as_text_and_never_runs(site: Site, page) -> None:
    page.goto(site.session("inject"))
    page.wait_for_load_state("load")
    assert page.evaluate("window.__pwned") is None
    assert page.locator('img[src="x"]').count() == 0 and page.locator("#timeline script").count() == 0
    card = page.locator("section.card").first
    assert card.locator(".tool").inner_text().startswith("evil<script>")
    assert "<script>window.__pwned = 3</script>" in card.locator(".result pre").inner_text()
    assert '<img src="x" onerror=' in page.locator(".item.prompt pre").inner_text()
    assert page.locator('a[href^="javascript"]').count() == 0  # markdown-it refuses the link
    page.locator("details.thinking summary").click()
    assert "<script>" in page.locator("details.thinking pre").inner_text()
    assert page.evaluate("window.__pwned") is None


def test_secrets_are_redacted(site: Site, page) -> None:
    page.goto(site.session("secret"))
    assert "VIEWER_TEST_SECRET_TOKEN=[redacted]" in page.locator(".card .result pre").inner_text()
    assert SECRET not in page.content()


def test_screenshots_of_the_list_and_a_session(site: Site, page, tmp_path: Path) -> None:
    """The pictures in docs/viewer.md (written there when OPENAGENT_VIEWER_SCREENSHOTS names a folder)."""
    import os

    folder = Path(os.environ.get("OPENAGENT_VIEWER_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(site.url)
    page.screenshot(path=folder / "viewer-list.png")
    page.goto(site.session("demo"))
    page.locator('section.card[data-tool="read_file"] button.more').wait_for()
    page.screenshot(path=folder / "viewer-session.png", full_page=True)
    for name in ("viewer-list.png", "viewer-session.png"):
        data = (folder / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000
