"""Sessions: the `SessionStore` protocol, the JSONL file store, an in-memory store, entries and keys.

The protocol is the Claude Agent SDK's, so a store written for one works with the other: ``append`` and
``load`` are required; ``list_sessions``, ``delete`` and ``list_subkeys`` are optional and probed for at run
time. Entries are JSON objects with ``type``, ``uuid`` and ``timestamp``; ``uuid`` is an idempotency key.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import anyio
import anyio.to_thread

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

from ._errors import SessionError
from ._history import UNFINISHED_CALL, history_from_entries
from ._keys import SessionKey, SessionListEntry, check_key, check_session_id, file_name, id_of
from ._types import Message

__all__ = [
    "UNFINISHED_CALL",
    "JSONLSessionStore",
    "MemorySessionStore",
    "SessionInfo",
    "SessionKey",
    "SessionListEntry",
    "SessionStore",
    "check_key",
    "check_session_id",
    "encode_entries",
    "entry_for",
    "history_from_entries",
    "info_from_entries",
    "project_key_for",
    "require_asyncio",
]

logger = logging.getLogger("openagent.sessions")
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone one cannot be written as UTF-8


@runtime_checkable
class SessionStore(Protocol):
    """Persists transcripts. Only `append` and `load` are required (duck-typed: no subclassing needed).

    Optional methods, used when present: ``async list_sessions(project_key) -> list[SessionListEntry]``,
    ``async delete(key)`` (a key without ``subpath`` cascades to its subkeys) and
    ``async list_subkeys(key) -> list[str]``.
    """

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Persist ``entries`` in order; an entry whose ``uuid`` is already stored is skipped."""
        ...

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry appended under ``key``, deep-equal and in order; ``None`` if never written."""
        ...


def encode_entries(entries: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    """``(uuid, JSON text)`` per entry, every entry checked before anything is written.

    Raises:
        SessionError: An entry that is not a JSON object, has a non-string ``uuid``, or cannot be JSON
            (NaN, a set …), naming its position.
    """
    encoded: list[tuple[str | None, str]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise SessionError(f"session entry {i} is a {type(entry).__name__}, not a JSON object")
        uuid = entry.get("uuid")
        if uuid is not None and not isinstance(uuid, str):
            raise SessionError(f"session entry {i} has a non-string uuid: {uuid!r}")
        try:
            text = json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            if not text.isascii() and _SURROGATE.search(text):  # escaped, it round-trips exactly
                text = json.dumps(entry, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError) as exc:
            raise SessionError(f"session entry {i} is not JSON-serializable: {exc}") from exc
        encoded.append((uuid, text))
    return encoded


def require_asyncio(store: object, driver: str) -> None:
    """For stores on asyncio-only drivers: fail clearly, not deep inside the driver, under trio."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise SessionError(f"{store!r} runs on asyncio only: its driver, {driver}, is asyncio-only") from None


def project_key_for(cwd: str | os.PathLike[str]) -> str:
    """The default project key: the absolute working directory with every non-alphanumeric run as ``-``."""
    return re.sub(r"[^A-Za-z0-9]+", "-", str(Path(cwd).resolve())).strip("-")[:200] or "root"


def entry_for(message: Message | str, session_id: str) -> dict[str, Any]:
    """The store entry for one message: ``type``, ``uuid``, ``timestamp``, ``session_id`` and the message.

    Given a type name instead of a message, a bare entry of that type (no ``message``): a note readers of
    messages skip, such as the loop's ``permission_request`` and ``tool_outcome``.
    """
    entry = {
        "type": message if isinstance(message, str) else message.type,
        "uuid": getattr(message, "uuid", None) or os.urandom(16).hex(),
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "session_id": session_id,
    }
    if not isinstance(message, str):
        entry["message"] = message.model_dump(mode="json", exclude_none=True)
    return entry


def _default_root() -> Path:
    """The user data directory's ``openagent/sessions``, as platformdirs finds it for this environment."""
    return _data_root(os.environ.get("XDG_DATA_HOME"), os.environ.get("HOME"))


@functools.lru_cache(maxsize=4)
def _data_root(xdg_data_home: str | None, home: str | None) -> Path:
    import platformdirs  # asked once per environment

    return Path(platformdirs.user_data_dir("openagent", appauthor=False)) / "sessions"


_OPEN_SESSIONS = 8
"""How many sessions a JSONL store keeps its files open for (the most recently written)."""


_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC


def _append(fd: int, data: bytes, our_end: int | None) -> int:
    """Append ``data`` under an exclusive lock on the session file: writers never interleave lines. A last
    line someone else wrote may be torn: then ``data`` starts on a line of its own. Returns the new end.
    """  # noqa: D205
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        end = os.fstat(fd).st_size
        if end and end != our_end and os.pread(fd, 1, end - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return end + len(data)
    finally:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)


class JSONLSessionStore:
    """One JSONL file per session under the user data directory; the default store.

    Appends are flushed per batch (``durability="fsync"`` also fsyncs), each under an exclusive lock on
    the session file, so concurrent writers never interleave lines. A torn last line (a crash
    mid-write) is skipped on load and reported.
    """

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, durability: Literal["flush", "fsync"] = "flush"
    ) -> None:
        self.root = Path(root) if root is not None else _default_root()
        self.durability = durability
        self._seen: dict[Path, set[str]] = {}
        self._open: dict[Path, int] = {}  # the files of recently written sessions, oldest first
        self._dirs: set[Path] = set()  # directories known to exist
        self._ends: dict[Path, int] = {}  # where our last append ended: no torn line can follow it
        self._closed = False
        self._last: tuple[tuple[str, str, str | None] | None, Path] = (None, self.root)
        self.warnings: list[str] = []
        """Problems met while loading (torn or corrupt lines), newest last."""

    def _path(self, key: SessionKey) -> Path:
        """The file of a transcript: every part of the key a file name of its own (`file_name`)."""
        check = self._last[0] is None or type(key) is not dict
        where = None if check else (key.get("project_key"), key.get("session_id"), key.get("subpath"))
        if where is not None and where == self._last[0]:  # a conversation appends to one session …
            return self._last[1]
        check_key(key)
        where = (key["project_key"], key["session_id"], key.get("subpath"))
        folder, name = self.root / file_name(key["project_key"]), file_name(key["session_id"])
        subpath = key.get("subpath")
        if not subpath:
            path = folder / f"{name}.jsonl"
        else:
            *inner, last = [file_name(part) for part in subpath.split("/")]
            path = folder.joinpath(name, *inner, f"{last}.jsonl")
        self._last = (where, path)
        return path

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Append ``entries``, skipping uuids already stored (or repeated in the batch)."""
        self._check_open()
        path = self._path(key)
        encoded = encode_entries(entries)
        try:
            seen = self._seen.get(path)
            if seen is None:
                if path.parent not in self._dirs:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    self._dirs.add(path.parent)
                seen = self._seen[path] = {e["uuid"] for e in self._read(path) or [] if "uuid" in e}
            fresh, batch = [], set()
            for uuid, text in encoded:
                if uuid is None or (uuid not in seen and uuid not in batch):
                    fresh.append(text)
                    batch.add(uuid)
            if not fresh:
                return
            data = "".join(text + "\n" for text in fresh).encode()
            if self.durability == "fsync":
                await anyio.to_thread.run_sync(self._write_synced, path, data)
            else:
                self._ends[path] = _append(self._file(path), data, self._ends.get(path))
        except (OSError, SessionError) as exc:
            where = f"{key['project_key']}/{key['session_id']}"
            raise SessionError(f"could not append to {where}: session file {path}: {exc}") from exc
        seen.update(uuid for uuid in batch if uuid is not None)

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError(f"the session store at {self.root} is closed")

    def _file(self, path: Path) -> int:
        """The session file, kept open between appends (opening it for every message cost more than the
        rest of persisting it); reopened when it was deleted meanwhile.
        """  # noqa: D205
        fd = self._open.get(path)
        if fd is not None and os.fstat(fd).st_nlink:
            return fd
        self._close(path)
        while len(self._open) >= _OPEN_SESSIONS:
            self._close(next(iter(self._open)))
        fd = self._open[path] = os.open(path, _FLAGS, 0o600)
        return fd

    def _close(self, path: Path) -> None:
        fd = self._open.pop(path, None)
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:  # a store nobody closed must not keep files open
        for fd in getattr(self, "_open", {}).values():
            os.close(fd)

    @staticmethod
    def _write_synced(path: Path, data: bytes) -> None:
        """Append and fsync (in a worker thread), with the file opened for this write alone."""
        fd = os.open(path, _FLAGS, 0o600)
        try:
            _append(fd, data, None)
            os.fsync(fd)
        finally:
            os.close(fd)

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry of the session, in order; ``None`` when it was never written."""
        self._check_open()
        try:
            return self._read(self._path(key))
        except SessionError as exc:
            where = f"{key['project_key']}/{key['session_id']}"
            raise SessionError(f"could not load {where}: {exc}") from exc

    def _read(self, path: Path) -> list[dict[str, Any]] | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SessionError(f"cannot read session file {path}: {exc}") from exc
        lines = raw.split(b"\n")
        try:  # the common case, a whole file, in one call
            entries = json.loads(b"[" + b",".join(line for line in lines if line.strip()) + b"]")
            if all(type(e) is dict for e in entries):
                return list(entries)
        except (ValueError, RecursionError):  # a line nested past the parser's limit is a corrupt line
            pass
        entries = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                what = (
                    "" if type(entry) is dict else f"line that is a JSON {type(entry).__name__}, not an entry"
                )
            except (ValueError, RecursionError):
                torn = number == len(lines) or (number == len(lines) - 1 and not lines[-1])
                what = "torn last line (an interrupted write)" if torn else "corrupt line"
            if not what:
                entries.append(entry)
                continue
            self.warnings.append(message := f"{path}:{number}: skipped a {what}: {line[:80]!r}")
            logger.warning("%s", message)
        return entries

    async def list_sessions(self, project_key: str) -> list[SessionListEntry]:
        """Sessions of a project with their last modification time (epoch ms)."""
        self._check_open()
        folder = self.root / file_name(project_key)
        try:
            found = [p for p in folder.iterdir() if p.suffix == ".jsonl"]
        except FileNotFoundError:
            return []
        except OSError as exc:  # the root is a file, unreadable …
            raise SessionError(f"could not list the sessions of {project_key}: {exc}") from exc
        return [{"session_id": id_of(p.stem), "mtime": int(p.stat().st_mtime * 1000)} for p in found]

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript; without ``subpath`` its sub-transcripts go too."""
        path = self._path(key)
        path.unlink(missing_ok=True)
        self._seen.pop(path, None)
        self._close(path)
        if "subpath" not in key:
            import shutil

            shutil.rmtree(path.with_suffix(""), ignore_errors=True)
            self._dirs.discard(path.with_suffix(""))

    async def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths stored under a session (subagent transcripts)."""
        folder = self._path({**key, "subpath": ""}).with_suffix("")
        return sorted(
            "/".join(id_of(part) for part in p.relative_to(folder).with_suffix("").parts)
            for p in folder.rglob("*.jsonl")
        )

    async def __aenter__(self) -> JSONLSessionStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the files kept open and forget cached state; the store is not used after this."""
        self._closed = True
        self._seen.clear()
        self._ends.clear()
        for path in list(self._open):
            self._close(path)


class MemorySessionStore:
    """Transcripts in a dict, for tests and throw-away runs (the Claude Agent SDK's InMemorySessionStore).

    Entries whose ``uuid`` is already stored are skipped, as in every store; ``mtime`` strictly increases.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._seen: dict[tuple[str, str, str], set[str]] = {}
        self._mtimes: dict[tuple[str, str, str], int] = {}
        self._clock = 0

    @staticmethod
    def _key(key: SessionKey) -> tuple[str, str, str]:
        check_key(key)
        return key["project_key"], key["session_id"], key.get("subpath") or ""

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Append ``entries`` (checked first: nothing is stored if one is not a JSON object)."""
        k = self._key(key)
        encode_entries(entries)
        seen = self._seen.setdefault(k, set())
        stored = self._entries.setdefault(k, [])
        for entry in entries:
            uuid = entry.get("uuid")
            if uuid is None or uuid not in seen:
                stored.append(json.loads(json.dumps(entry)))
                seen.add(uuid) if uuid is not None else None
        self._clock = max(self._clock + 1, int(datetime.now(UTC).timestamp() * 1000))
        self._mtimes[k] = self._clock

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """The entries of ``key``, or ``None`` when it was never written."""
        entries = self._entries.get(self._key(key))
        return None if entries is None else json.loads(json.dumps(entries))

    async def list_sessions(self, project_key: str) -> list[SessionListEntry]:
        """The project's main transcripts and their last write (epoch ms)."""
        keys = [(p, s, sub) for p, s, sub in self._entries if p == project_key and not sub]
        return [{"session_id": k[1], "mtime": self._mtimes[k]} for k in keys]

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript; without ``subpath`` its sub-transcripts go too."""
        project, session, subpath = self._key(key)
        doomed = [k for k in self._entries if k[:2] == (project, session) and subpath in ("", k[2])]
        for k in doomed:
            del self._entries[k], self._mtimes[k], self._seen[k]

    async def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths stored under a session."""
        return [k[2] for k in self._entries if k[:2] == (key["project_key"], key["session_id"]) and k[2]]

    def get_entries(self, key: SessionKey) -> list[dict[str, Any]]:
        """The entries of ``key`` (empty when never written), without copying them."""
        return list(self._entries.get(self._key(key), []))

    @property
    def size(self) -> int:
        """How many main transcripts are stored."""
        return sum(1 for k in self._entries if not k[2])

    def clear(self) -> None:
        """Forget everything."""
        for table in (self._entries, self._seen, self._mtimes):
            table.clear()


@dataclass
class SessionInfo:
    """What `session_info` tells about a session, read from its entries."""

    session_id: str
    last_modified: int
    """Epoch milliseconds of the last entry."""
    created_at: int | None = None
    title: str | None = None
    """Set with `set_session_metadata` (``title=``)."""
    tag: str | None = None
    first_prompt: str | None = None
    cwd: str | None = None
    entries: int = 0

    @property
    def summary(self) -> str:
        """A display title: the title, else the first prompt, else the id."""
        return self.title or (self.first_prompt or "")[:200] or self.session_id


def _epoch_ms(timestamp: Any) -> int | None:
    try:
        return int(datetime.fromisoformat(str(timestamp)).timestamp() * 1000)
    except ValueError:
        return None


def info_from_entries(session_id: str, entries: Sequence[dict[str, Any]]) -> SessionInfo:
    """A `SessionInfo` read from a session's entries."""
    times = [t for t in (_epoch_ms(e.get("timestamp")) for e in entries) if t is not None]
    info = SessionInfo(session_id, max(times, default=0), min(times, default=None), entries=len(entries))
    for entry in entries:
        kind, message = entry.get("type"), entry.get("message") or {}
        if kind == "metadata":
            info.title = entry.get("title", info.title)
            info.tag = entry.get("tag", info.tag) if "tag" in entry else info.tag
        elif kind == "system" and message.get("subtype") == "init":
            info.cwd = info.cwd or (message.get("data") or {}).get("cwd")
        elif kind == "user" and info.first_prompt is None and not message.get("parent_tool_use_id"):
            content = message.get("content")
            info.first_prompt = content if isinstance(content, str) else None
    return info
