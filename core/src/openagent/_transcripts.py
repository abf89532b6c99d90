"""Whole sessions: list, read, title, fork and delete them in any store, and the history a run resumes from.

A ``store`` argument is what ``AgentOptions.session_store`` takes: an instance, a ``scheme://…`` URL of a
registered store, or ``None`` for the default (JSONL files); a store opened here is closed here.
"""

from __future__ import annotations

import logging
import os
import uuid as uuid_mod
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio

from ._errors import SessionError
from ._plugins import resolve
from ._sessions import (
    SessionInfo,
    SessionKey,
    SessionListEntry,
    SessionStore,
    check_session_id,
    history_from_entries,
    info_from_entries,
    project_key_for,
)
from ._types import AssistantMessage, Message, UserMessage, parse_message

if TYPE_CHECKING:
    from ._options import AgentOptions

logger = logging.getLogger("openagent.sessions")

__all__ = [
    "cut_entries",
    "delete_session",
    "fork_session",
    "get_session_entries",
    "get_session_messages",
    "list_sessions",
    "restore",
    "session_info",
    "set_session_metadata",
]


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
        self.store = resolve("session_store", store)

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
    store: SessionStore, cwd: str | os.PathLike[str], session_id: str, options: AgentOptions
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
