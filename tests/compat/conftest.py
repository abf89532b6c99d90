"""The programs in programs/ run against the project's scripted loopback server, through the openai plugin."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
from scripted_server import ScriptedServer, Turn


@pytest.fixture(scope="session")
def server() -> Iterator[ScriptedServer]:
    """One scripted model server on loopback for the whole session."""
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def script(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Callable[..., list[Any]]:
    """``script(turns, mode=...)`` serves ``turns`` to this test's model; returns the recorded request bodies.

    The model is chosen the way a ported program chooses it: ``OPENAGENT_MODEL`` and ``OPENAGENT_BASE_URL``.
    """
    name = request.node.name.replace("[", "-").rstrip("]")
    monkeypatch.setenv("HOME", str(request.getfixturevalue("tmp_path_factory").mktemp("home")))
    monkeypatch.setenv("OPENAGENT_PLUGINS", "openai,mcp,tools")
    monkeypatch.setenv("OPENAGENT_MODEL", f"openai-compatible:{name}")
    monkeypatch.setenv("OPENAGENT_BASE_URL", server.url)

    def add(turns: list[Turn], mode: str = "history") -> list[Any]:
        server.add_script(name, turns, mode=mode)  # type: ignore[arg-type]
        return requests

    requests: list[Any] = _Bodies(server, name)  # type: ignore[assignment]
    return add


class _Bodies:
    """The JSON bodies this test's model received, read when asked (the server appends as requests come)."""

    def __init__(self, server: ScriptedServer, name: str) -> None:
        self.server, self.name = server, name

    def _all(self) -> list[Any]:
        return [r.body for r in list(self.server.requests) if r.script == self.name]

    def __getitem__(self, index: int) -> Any:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())
