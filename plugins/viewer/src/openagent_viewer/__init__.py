"""The session viewer: ``openagent sessions serve`` shows any session store's sessions as live timelines.

A local, read-only web page (Starlette, uvicorn, server-sent events; server-rendered HTML with one small
script, no build step, nothing fetched from elsewhere). It registers its command with the ``openagent``
command line through ``register_commands``; the web stack loads only when the command runs.
"""

from __future__ import annotations

from typing import Any

from openagent import hookimpl

__all__ = ["create_app", "register_commands"]


def __getattr__(name: str) -> Any:
    if name == "create_app":  # the web stack is imported when an app is wanted, not with the plugin
        from ._app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``serve`` to the ``openagent sessions`` group."""
    from ._command import serve

    sessions = cli.commands.get("sessions")
    if sessions is None:
        raise RuntimeError("the openagent command line has no 'sessions' group to add 'serve' to")
    sessions.add_command(serve)
