"""Viewer tests: real runs in their own processes write sessions, ``openagent sessions serve`` serves them in
its own process, and Debian's Chromium, driven by Playwright (pointed at the system browser), reads the page.

Chromium is started with the flags that work on these machines (``viewer_support.CHROMIUM_ARGS``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stores_suite import postgres_server, redis_server  # noqa: F401 - real servers for the store tests
from viewer_support import Project, launch_chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            launched = launch_chromium(playwright)
        except RuntimeError as exc:
            pytest.fail(str(exc), pytrace=False)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; any script error or console error on it fails the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(15_000)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
    )
    yield opened
    context.close()
    assert not problems, problems


def _project(root: Path, store: str | None = None) -> Project:
    cwd = root / "work"
    cwd.mkdir(parents=True)
    return Project(cwd=cwd, data=root / "data", store=store)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = _project(tmp_path)
    yield made
    made.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """One project with the finished runs most tests read (made once per module), and its viewer."""
    made = _project(tmp_path_factory.mktemp("shared"))
    yield made
    made.close()
