"""Memory: notes an agent keeps under keys, with a catalogue (keys and descriptions) it always sees.

The model reads, writes and deletes entries with three tools (``MemoryRead``, ``MemoryWrite``,
``MemoryDelete``); the catalogue reaches it through a ``UserPromptSubmit`` hook that appends it to each
prompt, and ``MemoryRead`` without a key lists it again (after a compaction, say). Values are read only on
demand, so a large memory costs the context window one line per entry::

    memory = Memory(SessionMemoryStore())     # kept with the sessions, per project; Memory() keeps a dict
    options = AgentOptions(model="ollama:qwen3", tools=memory.tools, hooks=memory.hooks)

Stores are pluggable (`MemoryStore`): `DictMemoryStore` keeps entries in this process;
`SessionMemoryStore` keeps them in any `openagent.plugin.SessionStore` (the JSONL files by default), in a
reserved session of the project, so every later session of the same project sees them.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from openagent import HookContext, HookMatcher, Tool, ToolContext, ToolError, tool
from openagent.plugin import SessionKey, SessionStore, project_key_for, resolve

__all__ = [
    "MEMORY_SESSION_ID",
    "DictMemoryStore",
    "Memory",
    "MemoryEntry",
    "MemoryStore",
    "SessionMemoryStore",
]

logger = logging.getLogger("openagent.tools.memory")

MEMORY_SESSION_ID = "openagent-memory"
"""The session id `SessionMemoryStore` writes under (its entries sit in the ``memory`` sub-transcript, so
session listings, ``continue_conversation`` and resume never mistake it for a conversation)."""

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}")
MAX_DESCRIPTION_CHARS = 200


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One remembered note."""

    key: str
    value: str
    description: str
    """One line saying what the value holds: this is what the catalogue shows."""
    updated_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))


@runtime_checkable
class MemoryStore(Protocol):
    """Where entries live, per project (a project key, as `openagent.plugin.project_key_for` makes)."""

    async def load(self, project: str) -> dict[str, MemoryEntry]:
        """Every entry of the project, by key."""
        ...

    async def save(self, project: str, entry: MemoryEntry) -> None:
        """Add the entry, or replace the one with the same key."""
        ...

    async def remove(self, project: str, key: str) -> None:
        """Forget the entry under ``key`` (nothing happens if there is none)."""
        ...


class DictMemoryStore:
    """Entries in a dict of this process: gone when it ends (the default)."""

    def __init__(self) -> None:
        self.projects: dict[str, dict[str, MemoryEntry]] = {}

    async def load(self, project: str) -> dict[str, MemoryEntry]:
        """Every entry of the project, by key."""
        return dict(self.projects.get(project, {}))

    async def save(self, project: str, entry: MemoryEntry) -> None:
        """Add or replace the entry."""
        self.projects.setdefault(project, {})[entry.key] = entry

    async def remove(self, project: str, key: str) -> None:
        """Forget the entry under ``key``."""
        self.projects.get(project, {}).pop(key, None)


class SessionMemoryStore:
    """Entries kept in a `SessionStore`, so they outlive the process and every session of a project sees them.

    Each write or delete appends one entry (``type: "memory"``) to the project's reserved session; loading
    replays them, the latest write of a key winning. Malformed entries are skipped and listed in `warnings`.

    Args:
        store: A session store instance (used as is, never closed here), a plugin URL such as
            ``"sqlite:///sessions.db"``, or ``None`` for the default JSONL files; a URL or ``None`` opens the
            store for each operation and closes it after.
        session_id: The reserved session id the entries go under.
    """

    def __init__(
        self, store: SessionStore | str | None = None, *, session_id: str = MEMORY_SESSION_ID
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.warnings: list[str] = []

    def _key(self, project: str) -> SessionKey:
        return {"project_key": project, "session_id": self.session_id, "subpath": "memory"}

    async def _with_store(self, action: Any) -> Any:
        if self.store is not None and not isinstance(self.store, str):
            return await action(self.store)
        store = resolve("session_store", self.store)
        try:
            return await action(store)
        finally:
            close = getattr(store, "aclose", None)
            if close is not None:
                await close()

    async def load(self, project: str) -> dict[str, MemoryEntry]:
        """Replay the project's memory log into entries by key."""

        async def load(store: SessionStore) -> list[dict[str, Any]] | None:
            found: list[dict[str, Any]] | None = await store.load(self._key(project))
            return found

        entries: dict[str, MemoryEntry] = {}
        for number, raw in enumerate(await self._with_store(load) or [], 1):
            if raw.get("type") != "memory":
                continue
            key, op = raw.get("key"), raw.get("op")
            if op == "delete" and isinstance(key, str):
                entries.pop(key, None)
            elif op == "write" and all(isinstance(raw.get(f), str) for f in ("key", "value", "description")):
                updated = str(raw.get("timestamp", ""))
                entries[raw["key"]] = MemoryEntry(raw["key"], raw["value"], raw["description"], updated)
            else:
                message = f"memory entry {number} of project {project!r} is malformed, skipped: {raw!r:.200}"
                self.warnings.append(message)
                logger.warning("%s", message)
        return entries

    async def _append(self, project: str, record: dict[str, Any]) -> None:
        entry = {
            "type": "memory",
            "uuid": uuid.uuid4().hex,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "session_id": self.session_id,
            **record,
        }

        async def append(store: SessionStore) -> None:
            await store.append(self._key(project), [entry])

        await self._with_store(append)

    async def save(self, project: str, entry: MemoryEntry) -> None:
        """Append a write of the entry."""
        record = {"op": "write", "key": entry.key, "value": entry.value, "description": entry.description}
        await self._append(project, record)

    async def remove(self, project: str, key: str) -> None:
        """Append a delete of ``key``."""
        await self._append(project, {"op": "delete", "key": key})


class Memory:
    """The memory tool set: ``MemoryRead``, ``MemoryWrite``, ``MemoryDelete`` and the catalogue hook.

    Args:
        store: Where entries live; a fresh `DictMemoryStore` by default.
        project: The project key entries are filed under; ``None`` derives it from each run's ``cwd``
            (the key the session stores use, so it matches the project's sessions).
        max_value_chars: The longest value ``MemoryWrite`` accepts.
    """

    def __init__(
        self, store: MemoryStore | None = None, *, project: str | None = None, max_value_chars: int = 20_000
    ) -> None:
        self.store: MemoryStore = store if store is not None else DictMemoryStore()
        self.project = project
        self.max_value_chars = max_value_chars
        self.tools: list[Tool] = self._make_tools()
        """The three tools, for ``AgentOptions.tools``."""
        self.hooks: dict[str, list[HookMatcher]] = {
            "UserPromptSubmit": [HookMatcher(hooks=[self._show_catalogue])]
        }
        """The hook that shows the catalogue with each prompt, for ``AgentOptions.hooks``."""

    def _project(self, cwd: str) -> str:
        return self.project or project_key_for(cwd)

    async def catalogue(self, cwd: str) -> str:
        """The catalogue as the model sees it: one line per entry, ``key: description``."""
        entries = await self.store.load(self._project(cwd))
        if not entries:
            return "Memory is empty. Save what is worth remembering across sessions with MemoryWrite."
        lines = [f"- {key}: {entries[key].description}" for key in sorted(entries)]
        head = "Memory catalogue (read a value with MemoryRead, change it with MemoryWrite, remove it with "
        return head + "MemoryDelete):\n" + "\n".join(lines)

    async def _show_catalogue(
        self, data: dict[str, Any], tool_use_id: str | None, ctx: HookContext
    ) -> Mapping[str, Any]:
        text = await self.catalogue(str(data.get("cwd") or "."))
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}

    def _make_tools(self) -> list[Tool]:
        memory = self

        async def read(context: ToolContext, key: str | None = None) -> str:
            """Read a memory entry's value. Without a key, list the catalogue (every key and description).

            Args:
                context: The calling run (given by the loop, not by the model).
                key: The entry's key, as the catalogue lists it.
            """
            if key is None or not key.strip():
                return await memory.catalogue(context.cwd)
            entries = await memory.store.load(memory._project(context.cwd))
            if key not in entries:
                raise ToolError(f"no memory entry {key!r}. {await memory.catalogue(context.cwd)}")
            return entries[key].value

        async def write(context: ToolContext, key: str, value: str, description: str) -> str:
            """Save a value under a key for later runs and sessions, replacing any value the key had.

            Args:
                context: The calling run (given by the loop, not by the model).
                key: A short name: letters, digits and _ . : / - (at most 100 characters).
                value: What to remember.
                description: One line saying what the value holds (shown in the catalogue).
            """
            description = _checked(key, value, description, memory.max_value_chars)
            await memory.store.save(memory._project(context.cwd), MemoryEntry(key, value, description))
            return f"Saved memory entry {key!r}."

        async def delete(context: ToolContext, key: str) -> str:
            """Delete a memory entry.

            Args:
                context: The calling run (given by the loop, not by the model).
                key: The entry's key.
            """
            project = memory._project(context.cwd)
            if key not in await memory.store.load(project):
                raise ToolError(f"no memory entry {key!r}. {await memory.catalogue(context.cwd)}")
            await memory.store.remove(project, key)
            return f"Deleted memory entry {key!r}."

        return [
            tool("MemoryRead", is_read_only=True)(read),
            tool("MemoryWrite")(write),
            tool("MemoryDelete")(delete),
        ]


def _checked(key: str, value: str, description: str, max_value_chars: int) -> str:
    """The description on one line, once key, value and description are known to be acceptable."""
    if not _KEY.fullmatch(key):
        raise ToolError(
            f"invalid memory key {key!r}: use 1 to 100 letters, digits and _ . : / -, "
            "starting with a letter or digit"
        )
    description = " ".join(description.split())
    if not description:
        raise ToolError("a memory entry needs a description (one line saying what it holds)")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise ToolError(f"the description is over {MAX_DESCRIPTION_CHARS} characters; shorten it")
    if len(value) > max_value_chars:
        raise ToolError(
            f"the value has {len(value)} characters, over the limit of {max_value_chars}; "
            "save a summary or split it under several keys"
        )
    return description
