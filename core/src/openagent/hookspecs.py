"""The plugin hook specifications. Hooks register things once per process; they never run per request.

Anything a hook registers may be given as ``lazy("package.module:attribute")`` (see `openagent.plugins.lazy`):
the module is imported when the registration is first used, so a plugin's entry-point module stays cheap to
import however heavy what it offers is.
"""

from __future__ import annotations

from typing import Any

import pluggy

from .plugins import Lazy, lazy

__all__ = ["Lazy", "hookimpl", "hookspec", "lazy"]

hookspec = pluggy.HookspecMarker("openagent")
hookimpl = pluggy.HookimplMarker("openagent")
"""Decorate a plugin's functions with this: ``@hookimpl def register_providers(register): ...``."""


@hookspec
def register_providers(register: Any) -> None:
    """Add providers: ``register(name, factory, *, aliases=())``; ``factory(model, *, base_url, api_key)``.

    ``factory`` may be ``lazy("package.module:Provider", **bound_keyword_arguments)``.
    """


@hookspec
def register_tools(register: Any) -> None:
    """Add tools users can select by name: ``register(tool_or_iterable_of_tools)``.

    A tool whose module is heavy to import: ``register(lazy("package.module:tool"), name="ToolName")``.
    """


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
