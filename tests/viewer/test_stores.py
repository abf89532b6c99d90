"""Each session store served: JSONL files, SQLite, and real Redis and PostgreSQL servers on loopback.

Per store, real runs write a finished session and one the test steps through; the viewer (``--store URL``)
lists both, shows the finished one's tool call, and follows the other live.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from viewer_support import Project, wait_until

from openagent.plugin import project_key_for

STORES = ["jsonl", "sqlite", "redis", "postgres"]


@pytest.fixture(params=STORES)
def store_project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Project]:
    kind = request.param
    if kind == "jsonl":
        url = None
    elif kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue(f"{kind}_server").url
    (tmp_path / "work").mkdir()
    made = Project(cwd=tmp_path / "work", data=tmp_path / "data", store=url)
    yield made
    made.close()


def test_each_store_is_served_listed_shown_and_followed(store_project: Project, page, tmp_path: Path) -> None:
    project = store_project
    control = tmp_path / "control"
    control.mkdir()
    writer, running = project.start_agent("steps", control)
    finished = project.agent("demo")  # while the other one runs
    url = project.serve()
    wait_until((control / "waiting-1").exists, "the running session's first tool call")
    page.goto(url)
    assert page.locator(f'a.row[data-session="{finished}"] .badge').inner_text() == "finished"
    assert page.locator(f'a.row[data-session="{running}"] .badge').inner_text() == "running"

    base = f"{url.rstrip('/')}/s/{project_key_for(project.cwd)}"
    page.goto(f"{base}/{finished}")
    card = page.locator('section.card[data-tool="read_file"]')
    assert '"path": "README.md"' in card.locator("details.input pre").inner_text()
    assert card.locator(".result pre").inner_text().startswith("contents of README.md")
    if project.store:  # the commands name the store the session lives in
        assert (
            f"OPENAGENT_SESSION_STORE={project.store} openagent chat --resume {finished}"
            in page.locator(".command code").first.inner_text()
        )

    page.goto(f"{base}/{running}")
    page.locator('section.card[data-tool="wait_for"]').first.wait_for()
    (control / "go-1").touch()
    (control / "go-2").touch()
    page.locator(".item.result .md", has_text="all steps done").wait_for()
    page.locator("#summary .badge.finished").wait_for()
    assert writer.wait(15) == 0
