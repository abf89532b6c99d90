"""What the viewer reads: projects, sessions and their entries, from any session store, checked and redacted.

A project key or session id comes from a URL, so from anyone: a project must be one the viewer knows, a
session id must look like one (letters, digits, ``.``, ``_``, ``-``; no path separator, no ``..``) before
either reaches a store. Entries are redacted (`Redactor`) as they are loaded, before anything uses them.
Summaries are cached per session and last modification time, so the list costs one store read per
changed session.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio

from openagent import JSONLSessionStore, SessionError, SessionStore

from ._redact import Redactor
from ._summary import Summary, summarize

__all__ = ["NotFoundError", "Source", "fingerprint", "is_session_id"]

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_READERS = 16  # sessions loaded at once when the list is (re)built
_RECENT = 8  # sessions remembered redacted, for the pages that follow them


class NotFoundError(LookupError):
    """No such project or session (or an id that cannot be one)."""


def is_session_id(value: object) -> bool:
    """Whether ``value`` is shaped like a session id (and so is safe to hand to any store)."""
    return isinstance(value, str) and _SESSION_ID.fullmatch(value) is not None and ".." not in value


class Source:
    """Read-only access to one store for the pages."""

    def __init__(
        self,
        store: SessionStore,
        project: str,
        *,
        projects: tuple[str, ...] = (),
        redactor: Redactor | None = None,
        owned: bool = True,
    ) -> None:
        self.store = store
        self.project = project
        """The project shown first: the current directory's."""
        self.extra_projects = projects
        self.redactor = redactor or Redactor()
        self.owned = owned
        self._summaries: dict[tuple[str, str], Summary] = {}
        self._refreshing: dict[str, anyio.Lock] = {}
        self._recent: OrderedDict[tuple[str, str], list[Any]] = OrderedDict()

    async def projects(self) -> list[str]:
        """Projects to choose from: the current one, those named at start, and those the store can list."""
        found = {self.project, *self.extra_projects}
        lister = getattr(self.store, "list_projects", None)
        if callable(lister):
            found.update(p for p in await lister() if isinstance(p, str))
        elif isinstance(self.store, JSONLSessionStore):
            found.update(_project_folders(self.store.root))
        return [self.project, *sorted(found - {self.project})]

    async def check_project(self, project: str) -> None:
        """Raise `NotFoundError` unless ``project`` is one of `projects`."""
        if project not in await self.projects():
            raise NotFoundError(f"no project {project!r} here")

    async def check(self, project: str, session_id: str) -> None:
        """Raise `NotFoundError` unless ``project`` is known and ``session_id`` looks like a session id."""
        if not is_session_id(session_id):
            raise NotFoundError("not a session id")
        await self.check_project(project)

    async def summaries(self, project: str) -> list[Summary]:
        """The project's sessions, most recently modified first."""
        await self.check_project(project)
        lister = getattr(self.store, "list_sessions", None)
        if lister is None:
            raise SessionError(f"{type(self.store).__name__} cannot list sessions (no list_sessions method)")
        listed = [
            (row["session_id"], int(row["mtime"]))
            for row in await lister(project)
            if isinstance(row, dict) and is_session_id(row.get("session_id")) and _is_mtime(row.get("mtime"))
        ]
        async with self._refreshing.setdefault(
            project, anyio.Lock()
        ):  # one refresh at a time: the next reuses it
            await self._refresh(project, listed)
        rows = [self._summaries[project, sid] for sid, _ in listed if (project, sid) in self._summaries]
        return sorted(rows, key=lambda s: s.updated, reverse=True)

    async def _refresh(self, project: str, listed: list[tuple[str, int]]) -> None:
        """Summarise the listed sessions that changed since they were last summarised."""
        stale = [
            (sid, mtime)
            for sid, mtime in listed
            if (cached := self._summaries.get((project, sid))) is None or cached.updated != mtime
        ]
        limiter = anyio.CapacityLimiter(_READERS)

        async def refresh(session_id: str, mtime: int) -> None:
            async with limiter:
                entries = await self._load(project, session_id)
            self._summaries[project, session_id] = summarize(session_id, project, mtime, entries or [])

        async with anyio.create_task_group() as group:
            for session_id, mtime in stale:
                group.start_soon(refresh, session_id, mtime)

    async def entries(self, project: str, session_id: str) -> list[Any]:
        """Every entry of a session, redacted.

        The last few sessions read are remembered redacted: the next read of one redacts only what was
        appended since (stores only append; a session rewritten under the same id is noticed by its
        first and last remembered entries and read afresh). The list returned is not to be changed.

        Raises:
            NotFoundError: An unknown project, an id that cannot be a session id, or no such session.
            SessionError: The store failed.
        """
        await self.check(project, session_id)
        raw = await self._read(project, session_id)
        if raw is None:
            raise NotFoundError(f"no session {session_id!r} in project {project!r}")
        key = (project, session_id)
        known = self._recent.pop(key, [])
        if not _extends(raw, known):
            known = []
        entries = known + self.redactor.entries(raw[len(known) :])
        self._recent[key] = entries
        while len(self._recent) > _RECENT:
            self._recent.popitem(last=False)
        return entries

    async def _load(self, project: str, session_id: str) -> list[Any] | None:
        raw = await self._read(project, session_id)
        return None if raw is None else self.redactor.entries(raw)

    async def _read(self, project: str, session_id: str) -> list[Any] | None:
        entries = await self.store.load({"project_key": project, "session_id": session_id})
        warnings = getattr(self.store, "warnings", None)
        if isinstance(
            warnings, list
        ):  # the JSONL store keeps every torn line it met: we poll, so forget them
            warnings.clear()
        if entries is not None and not isinstance(entries, list):
            raise SessionError(f"the store returned {type(entries).__name__} for {session_id!r}, not a list")
        return entries

    async def aclose(self) -> None:
        """Close the store, when the viewer opened it."""
        close = getattr(self.store, "aclose", None)
        if self.owned and close is not None:
            await close()


def fingerprint(entry: Any) -> Any:
    """What tells one entry from another cheaply: its uuid, type and time (a short repr for a non-object)."""
    if isinstance(entry, dict):
        return (entry.get("uuid"), entry.get("type"), entry.get("timestamp"))
    return repr(entry)[:200]


def _extends(entries: list[Any], known: list[Any]) -> bool:
    """Whether ``entries`` starts with the ``known`` ones (the same first and last, as far as they go)."""
    if len(entries) < len(known):
        return False
    return all(fingerprint(entries[i]) == fingerprint(known[i]) for i in {0, len(known) - 1} if known)


def _is_mtime(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _project_folders(root: Path) -> list[str]:
    try:
        return [p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.jsonl"))]
    except OSError:
        return []
