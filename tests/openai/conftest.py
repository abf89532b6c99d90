"""Cassette settings for the openai plugin's tests, and the replay fixtures."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_replay import Replay

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripted loopback server the transport tests use
SECRET_HEADERS = [
    "authorization",
    "x-api-key",
    "cookie",
    "set-cookie",
    "openai-organization",
    "openai-project",
]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: a hypothesis property test (OPENAGENT_FUZZ_EXAMPLES examples)")


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": SECRET_HEADERS,
        "match_on": ["method", "path", "query", "body"],  # any base URL replays
        "allow_playback_repeats": False,
        "decode_compressed_response": True,
    }


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(ROOT / "cassettes" / "openai" / request.module.__name__.rpartition(".")[2])


@pytest.fixture
def default_cassette_name(request: pytest.FixtureRequest) -> str:
    """One cassette per test, shared by the asyncio and trio runs: ``<test_module>/<test_name>.yaml``."""
    return str(request.node.originalname)


@pytest.fixture(autouse=True)
def _cassette_fully_played(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test fails when its cassette has interactions it never replayed."""
    if request.node.get_closest_marker("vcr") is None:
        yield
        return
    cassette = request.getfixturevalue("vcr")
    yield
    if cassette is not None and request.getfixturevalue("record_mode") == "none":
        unplayed = [r.uri for i, r in enumerate(cassette.requests) if not cassette.play_counts[i]]
        assert cassette.all_played, f"cassette {cassette._path} has unplayed interactions: {unplayed}"


@pytest.fixture
def replay() -> Replay:
    return Replay()


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated tool-call ids become ``gen_0``, ``gen_1`` … so expected events can name them."""
    import itertools

    from openagent_openai import _chat

    counter = itertools.count()
    monkeypatch.setattr(_chat, "new_call_id", lambda: f"gen_{next(counter)}")
