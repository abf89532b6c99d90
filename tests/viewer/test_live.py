"""A page follows a session that another process is writing: new entries appear without a reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from viewer_support import Project, run_async, wait_until

from openagent import JSONLSessionStore
from openagent.plugin import project_key_for


def _running(project: Project, tmp_path: Path, scenario: str, marker: str) -> tuple[Any, str, Path, str]:
    """A scenario running in its own process, stopped where it writes ``marker``; and the viewer's URL."""
    control = tmp_path / "control"
    control.mkdir()
    writer, session_id = project.start_agent(scenario, control)
    wait_until((control / marker).exists, f"{scenario} to reach {marker}")
    return writer, session_id, control, project.serve()


def test_a_running_session_updates_live_as_another_process_appends(
    project: Project, page, tmp_path: Path
) -> None:
    writer, session_id, control, url = _running(project, tmp_path, "steps", "waiting-1")
    page.goto(f"{url.rstrip('/')}/s/{project_key_for(project.cwd)}/{session_id}")
    page.evaluate("window.__same_page = true")  # gone if the page reloads
    assert page.locator("#summary .badge").inner_text() == "running"
    first = page.locator('section.card[data-tool="wait_for"]').first
    assert first.locator(".badge.running").inner_text() == "running…"

    (control / "go-1").touch()
    first.locator(".result pre", has_text="step 1 done").wait_for()
    page.locator('section.card[data-tool="wait_for"]').nth(1).wait_for()
    assert page.locator("#chart rect.bar").count() == 2

    (control / "go-2").touch()
    page.locator(".item.result .md", has_text="all steps done").wait_for()
    page.locator("#summary .badge.finished").wait_for()
    assert page.evaluate("window.__same_page") is True
    assert page.locator("#chart rect.bar").count() == 3
    assert writer.wait(15) == 0
    # what the page built live is what a fresh load shows
    live = page.locator("#timeline").inner_text()
    page.reload()
    assert page.locator("#timeline").inner_text() == live


def test_waiting_for_approval_shows_until_the_call_is_approved(
    project: Project, page, tmp_path: Path
) -> None:
    writer, session_id, control, url = _running(project, tmp_path, "approval", "asked")
    page.goto(url)
    assert page.locator(f'a.row[data-session="{session_id}"] .badge').inner_text() == "waiting for approval"
    page.goto(f"{url.rstrip('/')}/s/{project_key_for(project.cwd)}/{session_id}")
    card = page.locator('section.card[data-tool="write_note"]')
    assert card.locator(".badge.waiting").inner_text() == "waiting for approval"
    assert "waiting for approval (write_note)" in page.locator("#summary").inner_text()

    (control / "approve").touch()
    card.locator(".badge.allow", has_text="approved").wait_for()
    assert card.locator(".badge.waiting").count() == 0
    assert card.locator(".result pre").inner_text() == "wrote 'hello'"
    page.locator("#summary .badge.finished").wait_for()
    assert writer.wait(15) == 0


def test_markup_arriving_live_is_inert(project: Project, page) -> None:
    """Entries appended by any process, however forged, go through the same escaping."""
    session_id = project.agent("demo")
    url = project.serve()
    page.goto(f"{url.rstrip('/')}/s/{project_key_for(project.cwd)}/{session_id}")
    page.locator("#live", has_text="following").wait_for()
    payload = '<script>window.__pwned=1</script><img src="x" onerror="window.__pwned=2">'
    forged = [
        {"type": "user", "uuid": "f1", "message": {"type": "user", "content": payload}},
        {
            "type": "assistant",
            "uuid": "f2",
            "message": {
                "type": "assistant",
                "model": payload,
                "content": [{"type": "tool_use", "id": "t1", "name": payload, "input": {"x": payload}}],
            },
        },  # fmt: skip
        {
            "type": "user",
            "uuid": "f3",
            "message": {
                "type": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": payload, "is_error": True}
                ],
            },
        },  # fmt: skip
        {"type": "tool_outcome", "uuid": "f4", "tool_use_id": "t1", "permission": {"behavior": payload}},
    ]
    store = JSONLSessionStore(project.data / "openagent" / "sessions")
    key = {"project_key": project_key_for(project.cwd), "session_id": session_id}
    run_async(store.append, key, forged)
    card = page.locator("section.card", has_text="x").last
    card.locator(".result.error pre", has_text="window.__pwned=1").wait_for()
    assert page.locator(".item.prompt pre", has_text="onerror").count() == 1
    assert page.locator('img[src="x"]').count() == 0
    assert page.evaluate("window.__pwned") is None
