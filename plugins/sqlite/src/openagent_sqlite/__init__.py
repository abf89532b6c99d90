"""SQLite session store for openagent: ``session_store="sqlite:///sessions.db"`` or `SQLiteSessionStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.plugin import hookimpl

if TYPE_CHECKING:
    from ._store import SQLiteSessionStore

__all__ = ["SQLiteSessionStore", "register_session_stores"]


def __getattr__(name: str) -> Any:
    # aiosqlite is imported when a store is first wanted, not when the plugin manager loads this plugin.
    if name == "SQLiteSessionStore":
        from ._store import SQLiteSessionStore

        return SQLiteSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _from_url(url: str) -> SQLiteSessionStore:
    from ._store import SQLiteSessionStore

    return SQLiteSessionStore.from_url(url)


@hookimpl
def register_session_stores(register: Any) -> None:
    """Register the ``sqlite`` URL scheme."""
    register("sqlite", _from_url)
