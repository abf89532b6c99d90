"""Test set-up for the anthropic plugin: cassettes under cassettes/anthropic/<module>/<test>.yaml."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The helper modules beside this file (anthropic_streams) import by name under any --import-mode.
sys.path.insert(0, str(Path(__file__).parent))


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


API_MODULES = ("test_contract.py", "test_constructed.py")  # their cassettes are Anthropic API exchanges


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """No real network unless re-recording (``nox -s record`` passes --record-mode); re-recording the
    Anthropic API cassettes without a key skips them at collection, before pytest-recording deletes them.
    """
    here = Path(__file__).parent
    ours = [item for item in items if here in Path(item.fspath).parents]
    if not recording(config):
        for item in ours:
            item.add_marker(pytest.mark.block_network)
    elif not os.environ.get("ANTHROPIC_API_KEY"):
        skip = pytest.mark.skip(reason="re-recording Anthropic API cassettes needs ANTHROPIC_API_KEY")
        for item in ours:
            if Path(item.fspath).name in API_MODULES and item.get_closest_marker("vcr"):
                item.add_marker(skip)


def recording(config: pytest.Config) -> bool:
    return config.getoption("--record-mode") not in (None, "none")


@pytest.fixture
def anthropic_key() -> str:
    """The key for Anthropic API cassettes: any string when playing, a real one to re-record."""
    return os.environ.get("ANTHROPIC_API_KEY") or "test-key"
