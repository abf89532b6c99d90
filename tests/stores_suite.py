"""The session-store suite every store plugin passes, and the real servers its tests run against.

A store's test module subclasses `StoreSuite` (and `ServerRestartSuite` when the store talks to a server)
and provides one fixture, ``backend``: a `Backend` that makes stores on fresh, isolated namespaces. The
servers (`RedisServer`, `PostgresServer`) are real processes on a free loopback port in a temp directory;
the benchmarks start them the same way.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from glob import glob
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk.testing import run_session_store_conformance

from openagent.errors import SessionError

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


# -- what a store's test module provides ---------------------------------------------------------------------


class Backend:
    """How the suite makes stores of one kind. Subclasses fill in the four members."""

    name: str
    """The plugin's entry-point name (``OPENAGENT_PLUGINS`` value)."""
    url: str
    """A URL the plugin's registered factory opens (default namespace)."""
    schemes: tuple[str, ...]
    """Every URL scheme the plugin registers."""

    def store(self, namespace: str | None = None) -> Any:
        """A store on ``namespace`` (a fresh one when ``None``); the same namespace shares data."""
        raise NotImplementedError

    def unreachable(self) -> Any:
        """A store whose backing server or file cannot be reached."""
        raise NotImplementedError

    def namespace_of(self, store: Any) -> str:
        raise NotImplementedError

    def restart(self, *, crash: bool) -> Callable[[], None]:
        """Stop the server now; return the function that starts it again."""
        raise NotImplementedError


def make_entry(i: int, *, uuid_: str | None = "auto", **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "user" if i % 2 else "assistant",
        "timestamp": f"2026-01-01T00:00:{i % 60:02}Z",
    }
    if uuid_ is not None:
        entry["uuid"] = f"u-{i}" if uuid_ == "auto" else uuid_
    entry["message"] = {"role": entry["type"], "content": [{"type": "text", "text": f"message {i}"}]}
    return {**entry, **extra}


def _key(session_id: str | None = None, **extra: str) -> Any:
    return {"project_key": "proj", "session_id": session_id or uuid.uuid4().hex, **extra}


def _open_url(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A store opened as ``session_store="<url>"`` opens it: through the plugin registered for the scheme."""
    from openagent.plugins import registry

    monkeypatch.setenv("OPENAGENT_PLUGINS", backend.name)
    return registry().session_store_factory(backend.url.split(":", 1)[0])(backend.url)


WRITER = """
import asyncio, json, sys
from openagent.plugins import registry

async def main(url, project_key, session_id, count):
    store = registry().session_store_factory(url.split(":", 1)[0])(url)
    key = {"project_key": project_key, "session_id": session_id}
    async with store:
        for i in range(count):
            await store.append(key, [{"type": "user", "uuid": f"u-{i}", "n": i, "text": "é✓ " * 20}])
            print(i, flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


CONVERSATION = """
import json, sys
import anyio
from openagent import AgentOptions, run, tool
from openagent.testing import ScriptedModel, thinking, tool_call

@tool
def echo(s: str) -> str:
    \"\"\"Echo.\"\"\"
    return s

async def main(url, cwd):
    model = ScriptedModel([[thinking("plan", "sig-1"), tool_call("echo", {"s": "hi"})], "said hi"])
    result = await run("say hi", AgentOptions(model=model, tools=[echo], cwd=cwd, session_store=url))
    print(json.dumps({"session_id": result.session_id,
                      "sent": [m.model_dump(mode="json") for m in model.requests[1].messages]}))

anyio.run(main, sys.argv[1], sys.argv[2])
"""


# -- the suite ----------------------------------------------------------------------------------------------


class Stores:
    """Makes stores through a backend and closes every one of them when the test ends."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.made: list[Any] = []

    def new(self, namespace: str | None = None) -> Any:
        store = self.backend.store(namespace)
        self.made.append(store)
        return store

    def again(self, store: Any) -> Any:
        """Another store over the same data as ``store`` (as another process would open it)."""
        return self.new(self.backend.namespace_of(store))


@pytest.mark.anyio
class StoreSuite:
    """Behaviour every session store shares, beyond the Claude Agent SDK's conformance suite."""

    @pytest.fixture
    async def stores(self, backend: Backend) -> AsyncIterator[Stores]:
        made = Stores(backend)
        yield made
        for store in made.made:
            await store.aclose()

    async def test_claude_agent_sdk_conformance(self, stores: Stores) -> None:
        await run_session_store_conformance(stores.new)

    async def test_entries_come_back_deep_equal(self, stores: Stores) -> None:
        store, key = stores.new(), _key()
        entries = [
            make_entry(0, nested={"z": [1, 2.5, -3, None, True, False], "a": {"deep": [[], {}]}}),
            make_entry(1, text="unicode: é 漢字 🚀 \\ \" ' \n\t", big=2**53 + 1, small=-(2**40), frac=0.1),
            {"type": "summary", "summary": "no uuid, no timestamp"},
            make_entry(3, empty="", zero=0, tiny=-1.5e-7, exp=6.02e-23, whole_float=1.0, large=1e15),
        ]
        await store.append(key, entries)
        assert await store.load(key) == entries
        assert await stores.again(store).load(key) == entries

    async def test_uuid_is_an_idempotency_key_and_order_is_kept(self, stores: Stores) -> None:
        store, key = stores.new(), _key()
        a, b, c = make_entry(0), make_entry(1), make_entry(2)
        marker = {"type": "tag", "tag": "no uuid"}
        await store.append(key, [a, b, a])  # a duplicate within one batch
        await store.append(key, [b, marker, c])  # across calls
        await store.append(key, [marker])  # entries without uuid are never deduplicated
        await stores.again(store).append(key, [a, c])  # across store instances (another process)
        assert await store.load(key) == [a, b, marker, c, marker]

    async def test_uuid_dedup_is_scoped_to_one_transcript(self, stores: Stores) -> None:
        store, key = stores.new(), _key()
        sub = {**key, "subpath": "subagents/agent-1"}
        other = {**key, "session_id": key["session_id"] + "-other"}
        entry = make_entry(7)
        for k in (key, sub, other):
            await store.append(k, [entry])
        for k in (key, sub, other):
            assert await store.load(k) == [entry]

    async def test_never_written_loads_none_and_empty_append_writes_nothing(self, stores: Stores) -> None:
        store, key = stores.new(), _key()
        assert await store.load(key) is None
        await store.append(key, [])
        assert await store.load(key) is None
        assert await store.list_sessions("proj") == []
        assert await store.list_subkeys(key) == []
        await store.delete(key)  # deleting what does not exist is not an error

    @pytest.mark.parametrize(
        ("first", "second"),
        [
            (("a:b", "c"), ("a", "b:c")),
            (('a","b', "c"), ("a", 'b","c')),
            (("p/q", "s"), ("p", "q/s")),
            (("proj", "s e:ssion/é 漢"), ("proj", "s e:ssion/é 漢 ")),
        ],
        ids=["colon", "quotes", "slash", "unicode-and-space"],
    )
    async def test_ids_with_separators_never_collide(
        self, stores: Stores, first: tuple[str, str], second: tuple[str, str]
    ) -> None:
        store = stores.new()
        k1 = {"project_key": first[0], "session_id": first[1]}
        k2 = {"project_key": second[0], "session_id": second[1]}
        sub = {**k1, "subpath": "subagents/a:b/é"}
        await store.append(k1, [make_entry(1)])
        await store.append(k2, [make_entry(2)])
        await store.append(sub, [make_entry(3)])
        assert await store.load(k1) == [make_entry(1)]
        assert await store.load(k2) == [make_entry(2)]
        assert await store.load(sub) == [make_entry(3)]
        expected = sorted({first[1], second[1]} if first[0] == second[0] else {first[1]})
        assert sorted(s["session_id"] for s in await store.list_sessions(first[0])) == expected
        assert await store.list_subkeys(k1) == ["subagents/a:b/é"]
        await store.delete(k1)
        assert await store.load(sub) is None
        assert await store.load(k2) == [make_entry(2)]

    async def test_list_sessions_reports_last_write_in_epoch_ms(self, stores: Stores) -> None:
        store = stores.new()
        before = time.time() * 1000
        await store.append(_key("s1"), [make_entry(1)])
        await store.append(_key("s2", subpath="subagents/x"), [make_entry(1)])  # only a subagent transcript
        (first,) = await store.list_sessions("proj")
        assert first["session_id"] == "s1"
        assert isinstance(first["mtime"], int) and math.isfinite(first["mtime"])
        assert before - 5_000 < first["mtime"] < time.time() * 1000 + 5_000  # the server's clock, near ours
        await anyio.sleep(0.01)
        await store.append(_key("s1"), [make_entry(2)])
        (second,) = await store.list_sessions("proj")
        assert second["mtime"] > first["mtime"]

    @pytest.mark.parametrize(
        "bad",
        [
            ["not", "an", "object"],
            {"type": "x", "n": float("nan")},
            {"type": "x", "s": {1, 2}},
            {"type": "x", "uuid": 12},
        ],
        ids=["list", "nan", "set", "int-uuid"],
    )
    async def test_bad_entry_raises_session_error_and_writes_nothing(self, stores: Stores, bad: Any) -> None:
        store, key = stores.new(), _key()
        with pytest.raises(SessionError, match="session entry 1"):
            await store.append(key, [make_entry(0), bad, make_entry(2)])
        assert await store.load(key) is None

    async def test_closed_store_raises_session_error(self, stores: Stores) -> None:
        async with stores.new() as store:
            await store.append(_key("s"), [make_entry(0)])
        with pytest.raises(SessionError, match="closed"):
            await store.load(_key("s"))
        with pytest.raises(SessionError, match="closed"):
            await store.append(_key("s"), [make_entry(1)])
        await store.aclose()  # closing twice is fine

    async def test_unreachable_backend_raises_session_error(self, backend: Backend) -> None:
        async with backend.unreachable() as store:
            with pytest.raises(SessionError, match="could not append to proj/s") as info:
                await store.append(_key("s"), [make_entry(0)])
            assert info.value.__cause__ is not None  # the driver's error is chained, not leaked
            with pytest.raises(SessionError, match="could not load proj/s"):
                await store.load(_key("s"))
            with pytest.raises(SessionError):
                await store.list_sessions("proj")

    @pytest.mark.parametrize("anyio_backend", ["trio"])
    async def test_under_trio_says_asyncio_only(self, backend: Backend) -> None:
        # Every store here sits on an asyncio-only driver: under trio the caller must get a clear typed
        # error, not a RuntimeError from inside the driver.
        store = backend.store()
        with pytest.raises(SessionError, match="runs on asyncio only"):
            await store.append(_key("s"), [make_entry(0)])
        with pytest.raises(SessionError, match="runs on asyncio only"):
            await store.load(_key("s"))

    async def test_registered_by_url_and_resumed_in_another_process(
        self, backend: Backend, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from openagent.plugins import registry

        monkeypatch.setenv("OPENAGENT_PLUGINS", backend.name)
        reg = registry()
        assert backend.name in reg.plugins, f"the {backend.name!r} entry point is not installed"
        for scheme in backend.schemes:
            assert reg.plugins[backend.name].error is None
            assert scheme in reg.plugins[backend.name].session_stores
        session_id = uuid.uuid4().hex
        result = await anyio.run_process(
            [sys.executable, "-c", WRITER, backend.url, "proj", session_id, "25"],
            env={**os.environ, "OPENAGENT_PLUGINS": backend.name},
        )
        assert result.stdout.split() == [str(i).encode() for i in range(25)]
        async with _open_url(backend, monkeypatch) as store:
            loaded = await store.load({"project_key": "proj", "session_id": session_id})
            assert loaded == [
                {"type": "user", "uuid": f"u-{i}", "n": i, "text": "é✓ " * 20} for i in range(25)
            ]
            assert session_id in [s["session_id"] for s in await store.list_sessions("proj")]

    async def test_conversation_resumes_in_another_process_with_identical_history(
        self, backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        from openagent import AgentOptions, run, tool
        from openagent.testing import ScriptedModel

        @tool
        def echo(s: str) -> str:
            """Echo."""
            return s

        env = {**os.environ, "OPENAGENT_PLUGINS": backend.name}
        first = await anyio.run_process(
            [sys.executable, "-c", CONVERSATION, backend.url, str(tmp_path)], env=env
        )
        started = json.loads(first.stdout)
        monkeypatch.setenv("OPENAGENT_PLUGINS", backend.name)
        second = ScriptedModel(["again"])
        options = AgentOptions(
            model=second, tools=[echo], cwd=tmp_path, session_store=backend.url, resume=started["session_id"]
        )
        resumed = await run("once more", options)
        assert resumed.session_id == started["session_id"]
        sent = second.requests[0].messages
        # what an uninterrupted run would have sent: the first run's last request, its answer, the new prompt
        assert [m.model_dump(mode="json") for m in sent[:3]] == started["sent"]
        assert sent[1].content[0].signature == "sig-1"  # thinking kept with its signature
        assert sent[3].content[0].text == "said hi"
        assert sent[4].content == "once more"
        from openagent.sessions import project_key_for

        async with _open_url(backend, monkeypatch) as store:  # the transcript lives in this store
            entries = await store.load(
                {"project_key": project_key_for(tmp_path), "session_id": resumed.session_id}
            )
        assert entries is not None and len(entries) >= 6

    async def test_writer_killed_mid_run_loses_nothing_acknowledged(
        self, backend: Backend, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        session_id = uuid.uuid4().hex
        args = [sys.executable, "-c", WRITER, backend.url, "proj", session_id, "100000"]
        acknowledged: list[int] = []
        with anyio.fail_after(120):
            async with await anyio.open_process(
                args, env={**os.environ, "OPENAGENT_PLUGINS": backend.name}, stderr=subprocess.DEVNULL
            ) as proc:
                assert proc.stdout is not None
                buffer = b""
                async for chunk in proc.stdout:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    acknowledged += [int(line) for line in lines]
                    if len(acknowledged) >= 200:
                        proc.kill()  # SIGKILL: no chance to flush or close anything
                        break
        async with _open_url(backend, monkeypatch) as store:
            loaded = await store.load({"project_key": "proj", "session_id": session_id})
        assert loaded is not None
        ns = [e["n"] for e in loaded]
        assert ns == list(range(len(ns)))  # in order, no gap, no duplicate
        assert len(ns) >= len(acknowledged) == acknowledged[-1] + 1  # every acknowledged entry is there

    async def test_fifty_concurrent_writers_each_session_complete_and_in_order(self, stores: Stores) -> None:
        first = stores.new()
        pool = [first, *(stores.again(first) for _ in range(4))]  # several connections/instances at once
        keys = [_key(f"writer-{w}") for w in range(50)]

        async def writer(w: int) -> None:
            store = pool[w % len(pool)]
            for batch in range(20):
                await store.append(keys[w], [make_entry(batch * 5 + i, w=w) for i in range(5)])

        with anyio.fail_after(300):
            async with anyio.create_task_group() as tg:
                for w in range(50):
                    tg.start_soon(writer, w)
        reader = stores.again(first)
        for w, key in enumerate(keys):
            assert await reader.load(key) == [make_entry(i, w=w) for i in range(100)]
        listed = await reader.list_sessions("proj")
        assert sorted(s["session_id"] for s in listed) == sorted(k["session_id"] for k in keys)


@pytest.mark.anyio
class ServerRestartSuite:
    """For stores on a server: the server dies mid-run and comes back; nothing acknowledged is lost."""

    @pytest.mark.parametrize("crash", [True, False], ids=["killed", "clean-restart"])
    async def test_server_restart_mid_run_loses_nothing_acknowledged(
        self, stores: Stores, crash: bool
    ) -> None:
        store, key = stores.new(), _key()
        entries = [make_entry(i) for i in range(120)]
        failures: list[SessionError] = []
        acknowledged = 0
        reached, outage_started, first_failure = anyio.Event(), anyio.Event(), anyio.Event()

        async def writer() -> None:
            nonlocal acknowledged
            for entry in entries:
                while True:
                    try:
                        await store.append(key, [entry])
                        break
                    except SessionError as exc:  # anything else fails the test
                        failures.append(exc)
                        first_failure.set()
                        await anyio.sleep(0.02)
                acknowledged += 1
                if acknowledged == 40:
                    reached.set()
                    await outage_started.wait()

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer)
                await reached.wait()
                restart = await anyio.to_thread.run_sync(lambda: stores.backend.restart(crash=crash))
                outage_started.set()
                await first_failure.wait()
                with pytest.raises(SessionError):
                    await store.load(key)
                assert acknowledged == 40  # nothing was acknowledged while the server was down
                await anyio.to_thread.run_sync(restart)
        assert all("could not append to proj/" in str(exc) for exc in failures)
        assert await store.load(key) == entries  # the 40 before, none twice, the rest after
        assert await stores.again(store).load(key) == entries
