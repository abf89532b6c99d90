"""PostgreSQL session store for openagent: ``session_store="postgresql://host/db"`` or a store instance."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.plugin import hookimpl

if TYPE_CHECKING:
    from ._store import PostgresSessionStore

__all__ = ["PostgresSessionStore", "register_session_stores"]


def __getattr__(name: str) -> Any:
    # asyncpg is imported when a store is first wanted, not when the plugin manager loads this plugin.
    if name == "PostgresSessionStore":
        from ._store import PostgresSessionStore

        return PostgresSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _from_url(url: str) -> PostgresSessionStore:
    from ._store import PostgresSessionStore

    return PostgresSessionStore.from_url(url)


@hookimpl
def register_session_stores(register: Any) -> None:
    """Register the ``postgresql`` and ``postgres`` URL schemes."""
    for scheme in ("postgresql", "postgres"):
        register(scheme, _from_url)
