"""The SDK's session functions over `openagent.sessions`.

The plain functions (``list_sessions``, ``get_session_messages``, ``fork_session`` …) are synchronous, as in
the SDK, and read openagent's default store (JSONL files per project); the ``*_from_store`` /
``*_via_store`` variants are async and take any `SessionStore`. A project is a working directory
(``directory``, default the current one), keyed by `project_key_for_directory`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ... import sessions as core
from ...errors import SessionError
from .types import SDKSessionInfo, SessionKey, SessionMessage, SessionStore, SessionSummaryEntry

__all__ = [
    "ForkSessionResult", "delete_session", "delete_session_via_store", "fold_session_summary", "fork_session",
    "fork_session_via_store", "get_session_info", "get_session_info_from_store", "get_session_messages",
    "get_session_messages_from_store", "get_subagent_messages", "get_subagent_messages_from_store",
    "import_session_to_store", "list_sessions", "list_sessions_from_store", "list_subagents",
    "list_subagents_from_store", "project_key_for_directory", "rename_session", "rename_session_via_store",
    "tag_session", "tag_session_via_store",
]  # fmt: skip

T = TypeVar("T")


@dataclass
class ForkSessionResult:
    """What ``fork_session`` returns: the new session's id."""

    session_id: str


def project_key_for_directory(directory: str | Path | None = None) -> str:
    """The project key openagent stores a directory's sessions under."""
    return core.project_key_for(directory if directory is not None else Path.cwd())


def _blocking(call: Callable[[], Awaitable[T]]) -> T:
    """Run an async session call from synchronous code, even inside a running event loop (on a thread)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, anyio.run(call)))
        except BaseException as exc:
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="openagent-sessions")
    worker.start()
    worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def _info(info: core.SessionInfo) -> SDKSessionInfo:
    return SDKSessionInfo(
        session_id=info.session_id, summary=info.summary, last_modified=info.last_modified,
        custom_title=info.title, first_prompt=info.first_prompt, cwd=info.cwd, tag=info.tag,
        created_at=info.created_at,
    )  # fmt: skip


def _api_message(message: dict[str, Any]) -> dict[str, Any]:
    """A stored message as the Anthropic API shapes it: ``role`` and ``content`` (and ``model``)."""
    out = {"role": message["type"], "content": message.get("content")}
    if message.get("model"):
        out["model"] = message["model"]
    return out


def _messages(
    session_id: str, entries: list[dict[str, Any]], agent: str | None, limit: int | None, offset: int
) -> list[SessionMessage]:
    found = []
    for entry in entries:
        message = entry.get("message") or {}
        if entry.get("type") not in ("user", "assistant") or message.get("parent_tool_use_id") != agent:
            continue
        found.append(
            SessionMessage(
                type=entry["type"], uuid=message.get("uuid") or entry.get("uuid", ""), session_id=session_id,
                message=_api_message(message), parent_tool_use_id=agent,
            )
        )  # fmt: skip
    found = found[offset:]
    return found if limit is None else found[:limit]


def _agents(entries: list[dict[str, Any]]) -> list[str]:
    ids = ((e.get("message") or {}).get("parent_tool_use_id") for e in entries)
    return list(dict.fromkeys(i for i in ids if i))


async def _entries(store: Any, session_id: str, directory: Any) -> list[dict[str, Any]]:
    return await core.get_session_entries(session_id, cwd=directory, store=store)


# --- async, on any store ----------------------------------------------------------------------------------


async def list_sessions_from_store(
    session_store: SessionStore, directory: str | None = None, limit: int | None = None, offset: int = 0
) -> list[SDKSessionInfo]:
    """The project's sessions, newest first, with their titles and first prompts."""
    listed = await core.list_sessions(cwd=directory, store=session_store)  # type: ignore[arg-type]
    infos = []
    for row in listed[offset:] if limit is None else listed[offset : offset + limit]:
        try:
            entries = await _entries(session_store, row["session_id"], directory)
        except SessionError:
            continue
        info = core.info_from_entries(row["session_id"], entries)
        info.last_modified = max(info.last_modified, row["mtime"])
        infos.append(_info(info))
    return infos


async def get_session_info_from_store(
    session_store: SessionStore, session_id: str, directory: str | None = None
) -> SDKSessionInfo | None:
    """One session's details, or ``None`` when there is no such session."""
    try:
        return _info(await core.session_info(session_id, cwd=directory, store=session_store))  # type: ignore[arg-type]
    except SessionError:
        return None


async def get_session_messages_from_store(
    session_store: SessionStore, session_id: str, directory: str | None = None, limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:  # fmt: skip
    """The session's user and assistant messages (not its subagents'), oldest first."""
    try:
        entries = await _entries(session_store, session_id, directory)
    except SessionError:
        return []
    return _messages(session_id, entries, None, limit, offset)


async def list_subagents_from_store(
    session_store: SessionStore, session_id: str, directory: str | None = None
) -> list[str]:
    """The subagents that ran in the session (their ids are the ``Task`` calls' ids)."""
    try:
        return _agents(await _entries(session_store, session_id, directory))
    except SessionError:
        return []


async def get_subagent_messages_from_store(
    session_store: SessionStore, session_id: str, agent_id: str, directory: str | None = None,
    limit: int | None = None, offset: int = 0,
) -> list[SessionMessage]:  # fmt: skip
    """One subagent's messages."""
    try:
        entries = await _entries(session_store, session_id, directory)
    except SessionError:
        return []
    return _messages(session_id, entries, agent_id, limit, offset)


async def rename_session_via_store(
    session_store: SessionStore, session_id: str, title: str, directory: str | None = None
) -> None:
    """Give the session a title."""
    if not title.strip():
        raise ValueError("the title must not be empty")
    await core.set_session_metadata(session_id, title=title.strip(), cwd=directory, store=session_store)  # type: ignore[arg-type]


async def tag_session_via_store(
    session_store: SessionStore, session_id: str, tag: str | None, directory: str | None = None
) -> None:
    """Tag the session (``None`` clears the tag)."""
    await core.set_session_metadata(session_id, tag=tag, cwd=directory, store=session_store)  # type: ignore[arg-type]


async def delete_session_via_store(
    session_store: SessionStore, session_id: str, directory: str | None = None
) -> None:
    """Delete the session and its sub-transcripts."""
    await core.delete_session(session_id, cwd=directory, store=session_store)  # type: ignore[arg-type]


async def fork_session_via_store(
    session_store: SessionStore, session_id: str, directory: str | None = None,
    up_to_message_id: str | None = None, title: str | None = None,
) -> ForkSessionResult:  # fmt: skip
    """Copy the session (up to a message) under a new id."""
    new_id = await core.fork_session(
        session_id,
        up_to=up_to_message_id,
        title=title,
        cwd=directory,
        store=session_store,  # type: ignore[arg-type]
    )
    return ForkSessionResult(new_id)


async def import_session_to_store(
    session_id: str, store: SessionStore, *, directory: str | None = None, include_subagents: bool = True,
    batch_size: int = 500,
) -> None:  # fmt: skip
    """Copy a session from the default store into ``store`` (subagent messages travel in the transcript)."""
    entries = await _entries(None, session_id, directory)
    if not include_subagents:
        entries = [e for e in entries if not (e.get("message") or {}).get("parent_tool_use_id")]
    key: SessionKey = {"project_key": project_key_for_directory(directory), "session_id": session_id}
    for start in range(0, len(entries), max(batch_size, 1)):
        await store.append(key, entries[start : start + max(batch_size, 1)])  # type: ignore[arg-type]


def fold_session_summary(
    prev: SessionSummaryEntry | None, key: SessionKey, entries: list[dict[str, Any]]
) -> SessionSummaryEntry:
    """Fold new entries into a session's summary (for stores that keep one)."""
    data = dict(prev["data"]) if prev else {}
    for entry in entries:
        message = entry.get("message") or {}
        if (
            entry.get("type") == "user"
            and "first_prompt" not in data
            and isinstance(message.get("content"), str)
        ):
            data["first_prompt"] = message["content"]
        if entry.get("type") == "metadata":
            data.update({k: entry[k] for k in ("title", "tag") if k in entry})
    return {"session_id": key["session_id"], "mtime": prev["mtime"] if prev else 0, "data": data}


# --- synchronous, on the default store ----------------------------------------------------------------------


def list_sessions(
    directory: str | None = None, limit: int | None = None, offset: int = 0, include_worktrees: bool = True
) -> list[SDKSessionInfo]:
    """The sessions of ``directory`` (default: the current one), newest first."""
    return _blocking(lambda: list_sessions_from_store(None, directory, limit, offset))  # type: ignore[arg-type]


def get_session_info(session_id: str, directory: str | None = None) -> SDKSessionInfo | None:
    """One session's details, or ``None``."""
    return _blocking(lambda: get_session_info_from_store(None, session_id, directory))  # type: ignore[arg-type]


def get_session_messages(
    session_id: str, directory: str | None = None, limit: int | None = None, offset: int = 0
) -> list[SessionMessage]:
    """The session's user and assistant messages, oldest first."""
    return _blocking(lambda: get_session_messages_from_store(None, session_id, directory, limit, offset))  # type: ignore[arg-type]


def list_subagents(session_id: str, directory: str | None = None) -> list[str]:
    """The subagents that ran in the session."""
    return _blocking(lambda: list_subagents_from_store(None, session_id, directory))  # type: ignore[arg-type]


def get_subagent_messages(
    session_id: str, agent_id: str, directory: str | None = None, limit: int | None = None, offset: int = 0
) -> list[SessionMessage]:
    """One subagent's messages."""
    return _blocking(
        lambda: get_subagent_messages_from_store(None, session_id, agent_id, directory, limit, offset)  # type: ignore[arg-type]
    )


def rename_session(session_id: str, title: str, directory: str | None = None) -> None:
    """Give the session a title."""
    _blocking(lambda: rename_session_via_store(None, session_id, title, directory))  # type: ignore[arg-type]


def tag_session(session_id: str, tag: str | None, directory: str | None = None) -> None:
    """Tag the session (``None`` clears the tag)."""
    _blocking(lambda: tag_session_via_store(None, session_id, tag, directory))  # type: ignore[arg-type]


def delete_session(session_id: str, directory: str | None = None) -> None:
    """Delete the session."""
    _blocking(lambda: delete_session_via_store(None, session_id, directory))  # type: ignore[arg-type]


def fork_session(
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Copy the session (up to a message) under a new id."""
    return _blocking(lambda: fork_session_via_store(None, session_id, directory, up_to_message_id, title))  # type: ignore[arg-type]
