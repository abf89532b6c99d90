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
import time
import uuid as uuid_mod
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NotRequired, Protocol, TypedDict, runtime_checkable

import anyio
import anyio.to_thread

from .errors import SessionError
from .types import AssistantMessage, Message, UserMessage, parse_message

__all__ = [
    "JSONLSessionStore",
    "SessionKey",
    "SessionListEntry",
    "SessionStore",
    "delete_session",
    "entry_for",
    "fork_session",
    "get_session_messages",
    "history_from_entries",
    "list_sessions",
    "project_key_for",
]

logger = logging.getLogger("openagent.sessions")


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
