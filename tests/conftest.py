"""Shared test set-up: no plugin autoload unless asked, a private user directory, both async backends."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test under asyncio and under trio."""
    return str(request.param)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No entry-point plugins (tests that need them set OPENAGENT_PLUGINS), no real home directory."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("OPENAGENT_PLUGINS", "")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for var in (
        "OPENAGENT_MODEL",
        "OPENAGENT_BASE_URL",
        "OPENAGENT_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
    ):
        monkeypatch.delenv(var, raising=False)
