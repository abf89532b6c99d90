"""The CLI under test runs as a real process: the ``openagent`` console script of this environment.

Its model is a scripted one from a third-party-style plugin (``plugin/``) found through its entry point,
so each test writes the turns the model will play into a JSON file and passes ``--model clitest:FILE``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import OPENAGENT, PLUGIN_DIR


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The working directory of the CLI (its sessions and ``.openagent/settings.toml`` belong to it)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of the CLI process: the test plugin importable and enabled, no colour codes."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGIN_DIR), env.get("PYTHONPATH")]))
    env["OPENAGENT_PLUGINS"] = "clitest"
    env["NO_COLOR"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # cache bytecode: every test starts the CLI several times
    env["COLUMNS"] = "160"
    env.pop("FORCE_COLOR", None)
    return env


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a model script; returns the ``--model`` value that plays it."""
    count = 0

    def make(turns: list[Any], **more: Any) -> str:
        nonlocal count
        count += 1
        path = tmp_path / f"script{count}.json"
        path.write_text(json.dumps({"turns": turns, **more}))
        return f"clitest:{path}"

    return make


@pytest.fixture
def openagent(project: Path, cli_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``openagent ARGS`` to completion in the project directory."""

    def run(
        *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [OPENAGENT, *args],
            cwd=project,
            env={**cli_env, **(env or {})},
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


@pytest.fixture
def record(tmp_path: Path) -> Path:
    """A file the scripted model appends each request it receives to (pass ``record=str(path)``)."""
    return tmp_path / "requests.jsonl"


def read_records(path: Path) -> list[dict[str, Any]]:
    """The requests the scripted model received (one JSON object per line)."""
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def requests_seen() -> Callable[[Path], list[dict[str, Any]]]:
    """Read a record file."""
    return read_records
