"""Test set-up for the anthropic plugin: cassettes under cassettes/anthropic/<module>/<test>.yaml."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _json_body(r1: Any, r2: Any) -> None:
    """Requests match when their JSON bodies are equal (key order and whitespace aside)."""
    assert json.loads(r1.body or b"null") == json.loads(r2.body or b"null"), "request bodies differ"


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(ROOT / "cassettes" / "anthropic" / request.module.__name__.rpartition(".")[2])


@pytest.fixture
def default_cassette_name(request: pytest.FixtureRequest) -> str:
    # One cassette per test whatever the async backend: drop the [asyncio]/[trio] parameter.
    return re.sub(r"\[(asyncio|trio)\]$|(asyncio|trio)-|-(asyncio|trio)", "", request.node.name)


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": ["authorization", "x-api-key", "cookie", "set-cookie"],
        "match_on": ["method", "path", "json_body"],
        "allow_playback_repeats": False,
        "decode_compressed_response": True,
    }


def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    vcr.register_matcher("json_body", _json_body)


@pytest.fixture
def played(vcr: Any) -> Any:
    """The active cassette; after the test, every recorded interaction must have been played."""
    yield vcr
    if vcr.record_mode == "none":
        assert vcr.all_played, f"cassette {vcr._path} has interactions the test never made"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """No real network in these tests unless re-recording (``nox -s record`` passes --record-mode)."""
    if config.getoption("--record-mode") in (None, "none"):
        here = Path(__file__).parent
        for item in items:
            if here in Path(item.fspath).parents:
                item.add_marker(pytest.mark.block_network)
