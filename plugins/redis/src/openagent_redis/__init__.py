"""Redis session store for openagent: ``session_store="redis://localhost:6379/0"`` or `RedisSessionStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openagent.plugin import hookimpl

if TYPE_CHECKING:
    from ._store import RedisSessionStore

__all__ = ["RedisSessionStore", "register_session_stores"]


def __getattr__(name: str) -> Any:
    # redis-py is imported when a store is first wanted, not when the plugin manager loads this plugin.
    if name == "RedisSessionStore":
        from ._store import RedisSessionStore

        return RedisSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _from_url(url: str) -> RedisSessionStore:
    from ._store import RedisSessionStore

    return RedisSessionStore.from_url(url)


@hookimpl
def register_session_stores(register: Any) -> None:
    """Register the ``redis``, ``rediss`` and ``unix`` URL schemes."""
    for scheme in ("redis", "rediss", "unix"):
        register(scheme, _from_url)
