"""Whole sessions: list, read, fork and delete them in any store, and the history a run resumes from.

A ``store`` argument is what ``AgentOptions.session_store`` takes: an instance, a ``scheme://…`` URL of a
registered store, or ``None`` for the default (JSONL files); a store opened here is closed here.
"""

from __future__ import annotations

import os
import uuid as uuid_mod
from typing import TYPE_CHECKING

from .errors import SessionError
from .plugins import resolve
from .sessions import SessionKey, SessionListEntry, SessionStore, history_from_entries, project_key_for
from .types import AssistantMessage, Message, UserMessage, parse_message

if TYPE_CHECKING:
    from .options import AgentOptions

__all__ = ["delete_session", "fork_session", "get_session_messages", "list_sessions", "restore"]


class _Scope:
    """Resolves the store and project of a helper call, closing a store it made itself."""

    def __init__(self, cwd: str | os.PathLike[str] | None, store: SessionStore | str | None) -> None:
        self.project = project_key_for(cwd if cwd is not None else os.getcwd())
        self.owned = store is None or isinstance(store, str)
        self.store = resolve("session_store", store)

    def key(self, session_id: str) -> SessionKey:
        return {"project_key": self.project, "session_id": session_id}

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
        lister = getattr(scope.store, "list_sessions", None)
        if lister is None:
            raise SessionError(f"{type(scope.store).__name__} cannot list sessions (no list_sessions method)")
        return sorted(await lister(scope.project), key=lambda s: s["mtime"], reverse=True)


async def get_session_messages(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> list[Message]:
    """Every message a session recorded, in order (subagent messages included)."""
    async with _Scope(cwd, store) as scope:
        entries = await scope.store.load(scope.key(session_id))
    if entries is None:
        raise SessionError(f"no session {session_id!r} in project {scope.project!r}")
    return [parse_message(e["message"]) for e in entries if "message" in e]


async def fork_session(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> str:
    """Copy a session under a new id and return the id; the original is untouched."""
    async with _Scope(cwd, store) as scope:
        entries = await scope.store.load(scope.key(session_id))
        if entries is None:
            raise SessionError(f"no session {session_id!r} in project {scope.project!r}")
        new_id = str(uuid_mod.uuid4())
        copied = [{**e, "uuid": uuid_mod.uuid4().hex, "session_id": new_id} for e in entries]
        await scope.store.append(scope.key(new_id), copied)
    return new_id


async def delete_session(
    session_id: str, *, cwd: str | os.PathLike[str] | None = None, store: SessionStore | str | None = None
) -> None:
    """Delete a session and its sub-transcripts."""
    async with _Scope(cwd, store) as scope:
        deleter = getattr(scope.store, "delete", None)
        if deleter is None:
            raise SessionError(f"{type(scope.store).__name__} cannot delete sessions (no delete method)")
        await deleter(scope.key(session_id))


async def restore(
    store: SessionStore, cwd: str | os.PathLike[str], session_id: str, options: AgentOptions
) -> tuple[SessionKey, list[UserMessage | AssistantMessage]]:
    """The key a conversation writes to and the history it starts from, per ``resume``,
    ``continue_conversation`` and ``fork_session`` (a fork copies the transcript under ``session_id``).
    """  # noqa: D205
    project = project_key_for(cwd)
    source = options.resume
    if source is None and options.continue_conversation and hasattr(store, "list_sessions"):
        sessions = await store.list_sessions(project)
        source = max(sessions, key=lambda s: s["mtime"])["session_id"] if sessions else None
    if source is None:
        return {"project_key": project, "session_id": session_id}, []
    entries = await store.load({"project_key": project, "session_id": source})
    if entries is None:
        raise SessionError(f"no session {source!r} in project {project!r} to resume")
    if not options.fork_session:
        return {"project_key": project, "session_id": source}, history_from_entries(entries)
    key: SessionKey = {"project_key": project, "session_id": session_id}
    await store.append(key, [{**e, "session_id": session_id} for e in entries])
    return key, history_from_entries(entries)
