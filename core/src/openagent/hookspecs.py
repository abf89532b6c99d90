"""The plugin hook specifications. Hooks register things once per process; they never run per request."""

from __future__ import annotations

from typing import Any

import pluggy

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("openagent")
hookimpl = pluggy.HookimplMarker("openagent")
"""Decorate a plugin's functions with this: ``@hookimpl def register_providers(register): ...``."""


@hookspec
def register_providers(register: Any) -> None:
    """Add providers: ``register(name, factory, *, aliases=())``; ``factory(model, *, base_url, api_key)``."""


@hookspec
def register_tools(register: Any) -> None:
    """Add tools users can select by name: ``register(tool_or_iterable_of_tools)``."""


@hookspec
def register_toolsets(register: Any) -> None:
    """Add toolset factories: ``register(name, factory)``; ``factory(options)`` gives a `Toolset` or None."""


@hookspec
def register_session_stores(register: Any) -> None:
    """Add session stores: ``register(scheme, factory)``; ``factory(url)`` makes a store for that URL."""


@hookspec
def register_skills(register: Any) -> None:
    """Add skills: ``register(name, description, body)``; offered like project skills when settings load."""


@hookspec
def register_hooks(register: Any) -> None:
    """Add run-time hooks every run gets: ``register(event, HookMatcher)``; they run before the run's own."""


@hookspec
def register_retry_policies(register: Any) -> None:
    """Add retry policies users can select by name: ``register(name, policy)``."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``openagent`` command line (``cli`` is its click group)."""
