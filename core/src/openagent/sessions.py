"""Sessions: the `SessionStore` protocol, the JSONL file store (the default), and resume/fork.

The protocol is the Claude Agent SDK's, so a store written for one works with the other: ``append`` and
``load`` are required; ``list_sessions``, ``delete`` and ``list_subkeys`` are optional and probed for at run
time. Entries are JSON objects with ``type``, ``uuid`` and ``timestamp``; ``uuid`` is an idempotency key.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid as uuid_mod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NotRequired, Protocol, TypedDict, runtime_checkable

import anyio
import anyio.to_thread

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

from ._history import UNFINISHED_CALL, history_from_entries
from ._keys import check_key, check_session_id, file_name, id_of
from .errors import SessionError
from .types import AssistantMessage, Message, UserMessage, parse_message

__all__ = [
    "JSONLSessionStore",
    "MemorySessionStore",
    "SessionInfo",
    "SessionKey",
    "SessionListEntry",
    "SessionStore",
    "UNFINISHED_CALL",
    "check_key",
    "check_session_id",
    "delete_session",
    "entry_for",
    "fork_session",
    "get_session_entries",
    "get_session_messages",
    "session_info",
    "set_session_metadata",
    "history_from_entries",
    "info_from_entries",
    "list_sessions",
    "encode_entries",
    "open_store",
    "project_key_for",
    "require_asyncio",
    "restore",
]

logger = logging.getLogger("openagent.sessions")
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone one cannot be written as UTF-8


class SessionKey(TypedDict):
    """Where a transcript lives: a project, a session, and optionally a sub-transcript (a subagent's)."""

    project_key: str
    session_id: str
    subpath: NotRequired[str]


class SessionListEntry(TypedDict):
    """One row of `SessionStore.list_sessions`: the id and last modification, epoch milliseconds."""

    session_id: str
    mtime: int


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
        "uuid": getattr(message, "uuid", None) or uuid_mod.uuid4().hex,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "session_id": session_id,
    }
    if not isinstance(message, str):
        entry["message"] = message.model_dump(mode="json", exclude_none=True)
    return entry


def _default_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("openagent", appauthor=False)) / "sessions"


class JSONLSessionStore:
    """One JSONL file per session under the user data directory; the default store.

    Appends are flushed per batch (``durability="fsync"`` also fsyncs), each under an exclusive lock on
    the session's lock file, so concurrent writers never interleave lines. A torn last line (a crash
    mid-write) is skipped on load and reported.
    """

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, durability: Literal["flush", "fsync"] = "flush"
    ) -> None:
        self.root = Path(root) if root is not None else _default_root()
        self.durability = durability
        self._seen: dict[Path, set[str]] = {}
        self._ends: dict[Path, int] = {}  # where our last append ended: no torn line can follow it
        self.warnings: list[str] = []
        """Problems met while loading (torn or corrupt lines), newest last."""

    def _path(self, key: SessionKey) -> Path:
        """The file of a transcript: every part of the key a file name of its own (`file_name`)."""
        check_key(key)
        folder, name = self.root / file_name(key["project_key"]), file_name(key["session_id"])
        subpath = key.get("subpath")
        if not subpath:
            return folder / f"{name}.jsonl"
        *inner, last = [file_name(part) for part in subpath.split("/")]
        return folder.joinpath(name, *inner, f"{last}.jsonl")

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Append ``entries``, skipping uuids already stored."""
        path = self._path(key)
        seen = self._seen.get(path)
        if seen is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            seen = self._seen[path] = {e["uuid"] for e in self._read(path) or [] if "uuid" in e}
        fresh = [(uuid, text) for uuid, text in encode_entries(entries) if uuid is None or uuid not in seen]
        if not fresh:
            return
        data = "".join(text + "\n" for _, text in fresh)
        try:
            if self.durability == "fsync":
                await anyio.to_thread.run_sync(self._write, path, data, True)
            else:
                self._write(path, data, False)
        except OSError as exc:
            raise SessionError(f"cannot write session file {path}: {exc}") from exc
        seen.update(uuid for uuid, _ in fresh if uuid is not None)

    def _write(self, path: Path, data: str, fsync: bool) -> None:
        """Append under an exclusive lock on ``<session>.lock``: writers never interleave lines."""
        with path.with_suffix(".lock").open("a") as lock, path.open("a+b") as fh:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            end = fh.seek(0, os.SEEK_END)
            if end and end != self._ends.get(path):  # a last line we did not write may be torn: check it
                fh.seek(-1, os.SEEK_END)
                data = data if fh.read(1) == b"\n" else "\n" + data  # start on a line of our own
            self._ends[path] = end + fh.write(data.encode("utf-8"))
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry of the session, in order; ``None`` when it was never written."""
        return self._read(self._path(key))

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
        folder = self.root / file_name(project_key)
        if not folder.is_dir():
            return []
        return [
            {"session_id": id_of(p.stem), "mtime": int(p.stat().st_mtime * 1000)}
            for p in folder.glob("*.jsonl")
        ]

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript; without ``subpath`` its sub-transcripts go too."""
        path = self._path(key)
        path.unlink(missing_ok=True)
        self._seen.pop(path, None)
        if "subpath" not in key:
            import shutil

            shutil.rmtree(path.with_suffix(""), ignore_errors=True)
            path.with_suffix(".lock").unlink(missing_ok=True)

    async def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths stored under a session (subagent transcripts)."""
        folder = self._path({**key, "subpath": ""}).with_suffix("")
        return sorted(
            "/".join(id_of(part) for part in p.relative_to(folder).with_suffix("").parts)
            for p in folder.rglob("*.jsonl")
        )

    async def aclose(self) -> None:
        """Forget cached state (files are closed after every append)."""
        self._seen.clear()
        self._ends.clear()


def open_store(spec: SessionStore | str | None) -> SessionStore:
    """The store for an ``AgentOptions.session_store`` value: an instance, a plugin URL, or JSONL files."""
    if spec is None:
        return JSONLSessionStore()
    if isinstance(spec, str):
        from .plugins import registry

        scheme = spec.partition("://")[0].split("+")[0]
        return registry().session_store_factory(scheme)(spec)  # type: ignore[no-any-return]
    return spec


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


async def _optional(store: SessionStore, method: str, *args: Any) -> tuple[bool, Any]:
    """Call an optional store method: ``(False, None)`` when the store lacks it.

    Raising `NotImplementedError` (the Claude Agent SDK protocol's default body) counts as lacking it.
    """
    found = getattr(store, method, None)
    if found is None:
        return False, None
    try:
        return True, await found(*args)
    except NotImplementedError:
        return False, None


class _Scope:
    """Resolves the store and project of a helper call, closing a store it made itself."""

    def __init__(self, cwd: str | os.PathLike[str] | None, store: SessionStore | str | None) -> None:
        self.project = project_key_for(cwd if cwd is not None else os.getcwd())
        self.owned = store is None or isinstance(store, str)
        self.store = open_store(store)

    def key(self, session_id: str) -> SessionKey:
        return {"project_key": self.project, "session_id": check_session_id(session_id)}

    async def entries(self, session_id: str) -> list[dict[str, Any]]:
        entries = await self.store.load(self.key(session_id))
        if entries is None:
            raise SessionError(f"no session {session_id!r} in project {self.project!r}")
        return entries

    async def __aenter__(self) -> _Scope:
        return self

    async def __aexit__(self, *exc: object) -> None:
        close = getattr(self.store, "aclose", None)
        if self.owned and close is not None:
            await close()


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


async def list_sessions(
    *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> list[SessionListEntry]:
    """The sessions of a project (default: the current directory's), most recently modified first."""
    async with _Scope(cwd, store) as scope:
        found, sessions = await _optional(scope.store, "list_sessions", scope.project)
        if not found:
            raise SessionError(f"{type(scope.store).__name__} cannot list sessions (no list_sessions method)")
        return sorted(sessions, key=lambda s: s["mtime"], reverse=True)


async def get_session_entries(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> list[dict[str, Any]]:
    """Every entry a session stored, as stored (`SessionError` when there is no such session)."""
    async with _Scope(cwd, store) as scope:
        return await scope.entries(session_id)


async def get_session_messages(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> list[Message]:
    """Every message a session recorded, in order (subagent messages included)."""
    entries = await get_session_entries(session_id, cwd=cwd, store=store)
    messages: list[Message] = []
    for position, entry in enumerate(entries):
        try:
            if isinstance(entry, dict) and "message" in entry:
                messages.append(parse_message(entry["message"]))
        except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
            logger.warning(
                "skipped entry %d of session %s: not a valid message: %s", position, session_id, exc
            )
    return messages


async def session_info(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> SessionInfo:
    """Title, tag, first prompt, times and working directory of a session."""
    return info_from_entries(session_id, await get_session_entries(session_id, cwd=cwd, store=store))


_UNSET: Any = object()


def _metadata_entry(session_id: str, **fields: Any) -> dict[str, Any]:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    return {
        "type": "metadata",
        "uuid": uuid_mod.uuid4().hex,
        "timestamp": stamp,
        "session_id": session_id,
        **fields,
    }


async def set_session_metadata(
    session_id: str,
    *,
    title: str | None = _UNSET,
    tag: str | None = _UNSET,
    cwd: str | os.PathLike[str] | None = None,
    store: SessionStore | str | None = None,
) -> None:
    """Set a session's title and/or tag (``tag=None`` clears it): an entry appended to the transcript."""
    fields = {k: v for k, v in (("title", title), ("tag", tag)) if v is not _UNSET}
    async with _Scope(cwd, store) as scope:
        await scope.entries(session_id)  # the session must exist
        await scope.store.append(scope.key(session_id), [_metadata_entry(session_id, **fields)])


def cut_entries(entries: list[dict[str, Any]], at: str) -> list[dict[str, Any]]:
    """The entries up to and including the one whose entry or message ``uuid`` is ``at``."""
    for index, entry in enumerate(entries):
        if at in (entry.get("uuid"), (entry.get("message") or {}).get("uuid")):
            return entries[: index + 1]
    raise SessionError(f"no message {at!r} in the session")


async def fork_session(
    session_id: str,
    *,
    up_to: str | None = None,
    title: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    store: SessionStore | str | None = None,
) -> str:
    """Copy a session (up to and including the message ``up_to``) under a new id and return the id."""
    async with _Scope(cwd, store) as scope:
        entries = await scope.entries(session_id)
        if up_to is not None:
            entries = cut_entries(entries, up_to)
        new_id = str(uuid_mod.uuid4())
        copied = [{**e, "uuid": uuid_mod.uuid4().hex, "session_id": new_id} for e in entries]
        if title is not None:
            copied.append(_metadata_entry(new_id, title=title))
        await scope.store.append(scope.key(new_id), copied)
    return new_id


async def delete_session(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> None:
    """Delete a session and its sub-transcripts."""
    async with _Scope(cwd, store) as scope:
        found, _ = await _optional(scope.store, "delete", scope.key(session_id))
        if not found:
            raise SessionError(f"{type(scope.store).__name__} cannot delete sessions (no delete method)")


async def restore(
    store: SessionStore, cwd: str | os.PathLike[str], session_id: str, options: Any
) -> tuple[SessionKey, list[UserMessage | AssistantMessage]]:
    """The key a conversation writes to and the history it starts from, per ``resume``,
    ``continue_conversation``, ``fork_session`` (a fork copies the transcript under ``session_id``) and
    ``resume_session_at`` (only the transcript up to that message: then the run always forks).
    """  # noqa: D205
    project = project_key_for(cwd)
    session_id = check_session_id(session_id)
    timeout = getattr(options, "session_load_timeout", None)
    source = None if options.resume is None else check_session_id(options.resume, "resume id")
    if source is None and options.continue_conversation:
        with anyio.fail_after(timeout):
            _, sessions = await _optional(store, "list_sessions", project)
        source = max(sessions, key=lambda s: s["mtime"])["session_id"] if sessions else None
    if source is None:
        return {"project_key": project, "session_id": session_id}, []
    try:
        with anyio.fail_after(timeout):
            entries = await store.load({"project_key": project, "session_id": source})
    except TimeoutError:
        raise SessionError(f"loading session {source!r} took longer than {timeout} s") from None
    if entries is None:
        raise SessionError(f"no session {source!r} in project {project!r} to resume")
    cut = getattr(options, "resume_session_at", None)
    if cut is not None:
        entries = cut_entries(entries, cut)
    if not options.fork_session and cut is None:
        return {"project_key": project, "session_id": source}, history_from_entries(entries)
    key: SessionKey = {"project_key": project, "session_id": session_id}
    await store.append(key, [{**e, "session_id": session_id} for e in entries])
    return key, history_from_entries(entries)
