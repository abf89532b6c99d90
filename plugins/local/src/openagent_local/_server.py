"""Start, reuse and stop ``llama-server`` processes on loopback.

Each running server has a state file, ``<user cache>/openagent/llama-server/running/<key>.json``, holding its
pid, port and model; ``key`` is a hash of what the server was started with (model, template, context size,
extra arguments), so a second process asking for the same thing reuses a healthy server, and a state file
whose process is gone (or is no longer ``llama-server``) is replaced. A server started by this process is
stopped when the interpreter exits, unless it was started detached (``openagent local start``).

Starting runs in a worker thread (`ensure_server`), never on the event loop.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import http.client
import json
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import anyio.to_thread
import filelock

from openagent.plugin import ProviderConnectionError

from ._build import LLAMA_CPP_VERSION, ServerBuild, build_server, cache_root, find_server

__all__ = [
    "RunningServer",
    "ServerSpec",
    "ensure_server",
    "ensure_server_sync",
    "running_servers",
    "server_alive",
    "stop_server",
]

logger = logging.getLogger("openagent.local")

HOST = "127.0.0.1"
START_TIMEOUT = 120.0
"""Seconds to wait for ``/health`` (a 100 MB model is ready in under a second; large ones take longer)."""
STOP_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """What a server is started with; equal specs share one server."""

    model: Path
    alias: str
    """The model name the server reports and accepts (``--alias``)."""
    chat_template: Path | None = None
    """A Jinja chat template file (``--chat-template-file``); the model's own template when ``None``."""
    ctx_size: int = 4096
    extra_args: tuple[str, ...] = ()
    """More command-line arguments; ``--threads`` here replaces the default below."""

    @property
    def key(self) -> str:
        """A short stable hash of the spec: names its state file."""
        text = json.dumps(
            [str(self.model), self.alias, str(self.chat_template), self.ctx_size, self.extra_args]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def command(self, binary: Path, port: int) -> list[str]:
        """The ``llama-server`` command line for this spec on ``port``."""
        cmd = [str(binary), "-m", str(self.model), "--host", HOST, "--port", str(port), "--jinja"]
        cmd += ["-c", str(self.ctx_size), "--alias", self.alias]
        if self.chat_template is not None:
            cmd += ["--chat-template-file", str(self.chat_template)]
        if not {"-t", "--threads"} & set(self.extra_args):
            cmd += ["--threads", str(default_threads())]
        return [*cmd, *self.extra_args]


def default_threads() -> int:
    """Half the usable cores, at least one.

    llama.cpp's threads wait on each other at every step: when the machine is busy, one descheduled thread
    stalls the rest. Measured on a loaded 2-core machine with SmolLM2-135M: 1.5 tokens/s with 2 threads,
    23 with 1.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 2
    return max(1, cores // 2)


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A server process as recorded in its state file."""

    key: str
    pid: int
    port: int
    model: str
    alias: str
    binary: str
    chat_template: str | None = None
    log: str | None = None
    started_at: float = field(default_factory=time.time)
    owner_pid: int | None = None
    """The process that stops it at exit; ``None`` for a detached server."""

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root: ``http://127.0.0.1:<port>/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server's log, for error messages."""
        if not self.log:
            return ""
        try:
            text = Path(self.log).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


# Servers this interpreter started: (process, state file, stop it at exit). Process-wide by nature: a child
# process outlives any one event loop or options object, and atexit is process-wide too. Detached ones are
# kept as well, so they are reaped (not left as zombies) and their Popen is never collected while running.
_OWNED: dict[int, tuple[subprocess.Popen[bytes], Path, bool]] = {}


def _running_dir(root: Path | None) -> Path:
    return (root or cache_root()) / "llama-server" / "running"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _pid_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (an orphan waits for an init that may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no procfs (macOS): existence is all we can check
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def server_alive(server: RunningServer) -> bool:
    """Whether the recorded process still runs and is that ``llama-server`` (not a reused pid)."""
    owned = _OWNED.get(server.pid)
    if owned is not None and owned[0].poll() is not None:
        return False
    if not _pid_running(server.pid):
        return False
    if owned is not None:
        return True
    try:
        cmdline = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True
    # The binary, or a script run through its interpreter (then the script is the second word).
    return server.binary.encode() in cmdline[:2]


def _healthy(server: RunningServer, timeout: float = 2.0) -> bool:
    """``GET /health`` answers 200 (503 while the model loads). Plain http.client: polled many times."""
    connection = http.client.HTTPConnection(HOST, server.port, timeout=timeout)
    try:
        connection.request("GET", "/health")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _read_state(path: Path) -> RunningServer | None:
    try:
        return RunningServer(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def running_servers(root: Path | None = None) -> list[RunningServer]:
    """The servers recorded in the cache, live ones only; stale state files are removed."""
    servers = []
    for path in sorted(_running_dir(root).glob("*.json")):
        server = _read_state(path)
        if server is not None and server_alive(server):
            servers.append(server)
        else:
            path.unlink(missing_ok=True)
    return servers


def stop_server(server: RunningServer, *, root: Path | None = None, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop a server (SIGTERM, then SIGKILL after ``timeout``) and remove its state file.

    Returns whether a live process was stopped.
    """
    was_alive = server_alive(server)
    if was_alive:
        owned = _OWNED.pop(server.pid, None)
        if owned is not None:
            _terminate(owned[0], timeout)
        else:
            _signal_and_wait(server.pid, timeout)
    path = _running_dir(root) / f"{server.key}.json"
    current = _read_state(path)
    if current is not None and current.pid == server.pid:
        path.unlink(missing_ok=True)
    return was_alive


def _terminate(proc: subprocess.Popen[bytes], timeout: float) -> None:
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _signal_and_wait(pid: int, timeout: float) -> None:
    """Stop a process this interpreter did not start (no Popen to wait on)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _pid_running(pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                break
            time.sleep(0.05)


@atexit.register
def _stop_owned() -> None:
    for pid, (proc, state, stop_at_exit) in list(_OWNED.items()):
        _OWNED.pop(pid, None)
        if not stop_at_exit:
            proc.returncode = proc.poll() or 0  # let it run on; silence Popen's "still running" warning
            continue
        _terminate(proc, STOP_TIMEOUT)
        current = _read_state(state)
        if current is not None and current.pid == pid:
            state.unlink(missing_ok=True)


def _spawn(spec: ServerSpec, build: ServerBuild, state: Path, detach: bool) -> RunningServer:
    """Start one server process and wait for its ``/health``; `ProviderConnectionError` if it dies."""
    port = _free_port()
    log = state.with_suffix(".log")
    with log.open("wb") as out:
        # A session of its own: Ctrl-C in the terminal interrupts the agent, not the server under it.
        proc = subprocess.Popen(
            spec.command(build.binary, port),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = RunningServer(
        key=spec.key,
        pid=proc.pid,
        port=port,
        model=str(spec.model),
        alias=spec.alias,
        binary=str(build.binary),
        chat_template=str(spec.chat_template) if spec.chat_template else None,
        log=str(log),
        owner_pid=None if detach else os.getpid(),
    )
    _OWNED[proc.pid] = (proc, state, not detach)
    deadline = time.monotonic() + START_TIMEOUT
    while not _healthy(server, timeout=1.0):
        if proc.poll() is not None or time.monotonic() > deadline:
            _OWNED.pop(proc.pid, None)
            if proc.poll() is None:
                _terminate(proc, STOP_TIMEOUT)
            raise ProviderConnectionError(
                f"llama-server did not become ready (exit status {proc.returncode}); "
                f"command: {' '.join(spec.command(build.binary, port))}\n{server.log_tail()}",
                provider="local",
            )
        time.sleep(0.05)
    state.write_text(json.dumps(asdict(server)))
    return server


Builder = Callable[[], ServerBuild]


def ensure_server_sync(
    spec: ServerSpec, *, root: Path | None = None, detach: bool = False, builder: Builder | None = None
) -> RunningServer:
    """Reuse the healthy server for ``spec``, or start one (building ``llama-server`` first if needed).

    Blocks; use `ensure_server` from async code. A lock file keeps two processes from starting two servers.
    """
    folder = _running_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    state = folder / f"{spec.key}.json"
    with filelock.FileLock(folder / f"{spec.key}.lock"):
        current = _read_state(state)
        if current is not None:
            if server_alive(current) and _healthy(current):
                return current
            logger.info("replacing stale llama-server state %s (pid %s)", state.name, current.pid)
            if server_alive(current):
                stop_server(current, root=root)
            state.unlink(missing_ok=True)
        build = find_server(LLAMA_CPP_VERSION, root=root) or (builder or (lambda: build_server(root=root)))()
        attempts = 3  # the free port may be taken between choosing it and the server binding it
        for attempt in range(attempts):
            try:
                return _spawn(spec, build, state, detach)
            except ProviderConnectionError as exc:
                if attempt == attempts - 1 or "bind" not in str(exc).lower():
                    raise
        raise AssertionError("unreachable")


async def ensure_server(
    spec: ServerSpec, *, root: Path | None = None, builder: Builder | None = None
) -> RunningServer:
    """`ensure_server_sync` in a worker thread: the event loop keeps running while a server starts."""
    return await anyio.to_thread.run_sync(
        lambda: ensure_server_sync(spec, root=root, builder=builder), abandon_on_cancel=True
    )
