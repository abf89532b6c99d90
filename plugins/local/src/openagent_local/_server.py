"""Start, reuse and stop engine processes (llama.cpp's server from ``xllamacpp``, see `_engine`) on loopback.

Each running server has a state file, ``<user cache>/openagent/local/running/<key>.json``, holding its pid,
port and model; ``key`` is a hash of what the server was started with (model, template, context size,
threads), so a second process asking for the same thing reuses a healthy server, and a state file whose
process is gone (or is no longer an engine) is replaced. A server started by this process is stopped when
the interpreter exits, unless it was started detached (``openagent local start``).

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
import select
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import anyio.to_thread
import filelock
import platformdirs

from openagent.errors import ProviderConnectionError

from ._engine import HOST, READY

__all__ = [
    "RunningServer",
    "ServerSpec",
    "cache_root",
    "ensure_server",
    "ensure_server_sync",
    "running_servers",
    "server_alive",
    "stop_server",
]

logger = logging.getLogger("openagent.local")

ENGINE = str(Path(__file__).with_name("_engine.py"))
"""The engine's script, run by path: ``python -m openagent_local._engine`` would import the package, and with
it all of openagent, before llama.cpp loads (a second of start-up where bytecode is not cached)."""
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
    threads: int | None = None
    """CPU threads for decoding; `default_threads` when ``None``."""
    keep_alive: float = 0.0
    """Seconds the server stays up after its last request, outliving the process that started it (as
    Ollama's ``keep_alive``); ``0``: it stops when that process exits. Not part of the key."""

    @property
    def key(self) -> str:
        """A short stable hash of the spec: names its state file."""
        text = json.dumps([str(self.model), self.alias, str(self.chat_template), self.ctx_size, self.threads])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def command(self) -> list[str]:
        """The engine's command line for this spec (it picks its own free port)."""
        cmd = [sys.executable, "-P", ENGINE, "--model", str(self.model), "--alias", self.alias]
        cmd += ["--ctx-size", str(self.ctx_size), "--threads", str(self.threads or default_threads())]
        if self.chat_template is not None:
            cmd += ["--chat-template", str(self.chat_template)]
        if self.keep_alive > 0:
            cmd += ["--idle-exit", str(self.keep_alive)]
        return cmd


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


def cache_root() -> Path:
    """``<user cache>/openagent``: where the running servers' state lives."""
    return Path(platformdirs.user_cache_dir("openagent"))


def _running_dir(root: Path | None) -> Path:
    return (root or cache_root()) / "local" / "running"


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
    """Whether the recorded process still runs and is an engine (not a reused pid)."""
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
    return ENGINE.encode() in cmdline[:4]  # python -P …/openagent_local/_engine.py …


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


def _spawn(spec: ServerSpec, state: Path, detach: bool) -> RunningServer:
    """Start one engine and wait for its ready line; `ProviderConnectionError` if it fails or dies."""
    log = state.with_suffix(".log")
    command = spec.command()
    with log.open("wb") as err:
        # A session of its own: Ctrl-C in the terminal interrupts the agent, not the server under it.
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, start_new_session=True
        )
    _OWNED[proc.pid] = (proc, state, not detach)  # stopped at exit even if this process is interrupted now
    port = _ready_port(proc)
    server = RunningServer(
        key=spec.key,
        pid=proc.pid,
        port=port or 0,
        model=str(spec.model),
        alias=spec.alias,
        chat_template=str(spec.chat_template) if spec.chat_template else None,
        log=str(log),
        owner_pid=None if detach else os.getpid(),
    )
    if port is None or not _healthy(server, timeout=5.0):
        _OWNED.pop(proc.pid, None)
        if proc.poll() is None:
            _terminate(proc, STOP_TIMEOUT)
        raise ProviderConnectionError(
            f"the local engine did not become ready (exit status {proc.returncode}); "
            f"command: {' '.join(command)}\n{server.log_tail()}",
            provider="local",
        )
    state.write_text(json.dumps(asdict(server)))
    return server


def _ready_port(proc: subprocess.Popen[bytes]) -> int | None:
    """The port from the engine's ready line, or ``None`` when it exits or stays silent too long."""
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + START_TIMEOUT
    with proc.stdout:  # the engine writes one line; nothing reads its stdout after that
        while not line.endswith(b"\n") and (left := deadline - time.monotonic()) > 0:
            if not select.select([proc.stdout], [], [], min(left, 0.5))[0]:
                if proc.poll() is not None:
                    return None
                continue
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                return None
            line += chunk
    text = line.decode(errors="replace").strip()
    if not text.startswith(READY):
        return None
    port = text.rpartition(":")[2]
    return int(port) if port.isdigit() else None


def ensure_server_sync(spec: ServerSpec, *, root: Path | None = None, detach: bool = False) -> RunningServer:
    """Reuse the healthy server for ``spec``, or start one.

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
            logger.info("replacing stale local engine state %s (pid %s)", state.name, current.pid)
            if server_alive(current):
                stop_server(current, root=root)
            state.unlink(missing_ok=True)
        return _spawn(spec, state, detach or spec.keep_alive > 0)


async def ensure_server(spec: ServerSpec, *, root: Path | None = None) -> RunningServer:
    """`ensure_server_sync` in a worker thread: the event loop keeps running while a server starts."""
    return await anyio.to_thread.run_sync(lambda: ensure_server_sync(spec, root=root), abandon_on_cancel=True)
