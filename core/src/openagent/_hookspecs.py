"""The plugin hook specifications. Hooks register things once per process; they never run per request.

Anything a hook registers may be given as ``lazy("package.module:attribute")`` (`openagent.plugin.lazy`):
the module is imported when the registration is first used, so a plugin's entry-point module stays cheap to
import however heavy what it offers is.

Each hook receives a ``register`` callable, typed by one of the ``Register…`` protocols below. The core's own
defaults (the JSONL session store, the default retry policy, the ``test`` provider, the ``Task`` subagent
tool) are registered through these same hooks by its built-in plugin, ``openagent._builtin``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from ._lazy import Lazy, lazy

if TYPE_CHECKING:
    from ._hooks import HookEvent, HookMatcher
    from ._models import ModelProfileSource, ProviderFactory
    from ._options import AgentOptions
    from ._retry import RetryPolicy
    from ._sessions import SessionStore
    from ._tools import Tool, Toolset

__all__ = [
    "Lazy",
    "RegisterHook",
    "RegisterModelProfiles",
    "RegisterProvider",
    "RegisterRetryPolicy",
    "RegisterSessionStore",
    "RegisterSkill",
    "RegisterTools",
    "RegisterToolset",
    "hookimpl",
    "hookspec",
    "lazy",
]

hookspec = pluggy.HookspecMarker("openagent")
hookimpl = pluggy.HookimplMarker("openagent")
"""Decorate a plugin's functions with this: ``@hookimpl def register_providers(register): ...``."""


class RegisterProvider(Protocol):
    """``register(name, factory, *, aliases=())``; ``factory(model, *, base_url, api_key) -> Provider``,
    or ``lazy("package.module:Provider", **bound_keyword_arguments)``.
    """  # noqa: D205

    def __call__(self, name: str, factory: ProviderFactory | Lazy, *, aliases: Sequence[str] = ()) -> None:
        """Register."""


class RegisterTools(Protocol):
    """``register(tool_or_iterable_of_tools)``: tools users select by name (``tools=["Read"]``); a tool
    whose module is heavy to import: ``register(lazy("package.module:tool"), name="ToolName")``.
    """  # noqa: D205

    def __call__(self, tools: Tool | Iterable[Tool] | Lazy, *, name: str | None = None) -> None:
        """Register."""


class RegisterToolset(Protocol):
    """``register(name, factory)``; ``factory(options)`` gives a `Toolset` for the run, or ``None``."""

    def __call__(self, name: str, factory: Callable[[AgentOptions], Toolset | None]) -> None:
        """Register."""


class RegisterSessionStore(Protocol):
    """``register(scheme, factory)``; ``factory(url)`` makes a store for a ``scheme://…`` URL."""

    def __call__(self, scheme: str, factory: Callable[[str], SessionStore] | Lazy) -> None:
        """Register."""


class RegisterRetryPolicy(Protocol):
    """``register(name, policy)``; ``"default"`` is the policy runs use when none is given."""

    def __call__(self, name: str, policy: RetryPolicy) -> None:
        """Register."""


class RegisterHook(Protocol):
    """``register(event, matcher)``: a run-time hook every run gets, before the run's own."""

    def __call__(self, event: HookEvent, matcher: HookMatcher) -> None:
        """Register."""


class RegisterSkill(Protocol):
    """``register(name, description, body)``: offered like project skills when settings load."""

    def __call__(self, name: str, description: str, body: str) -> None:
        """Register."""


class RegisterModelProfiles(Protocol):
    """``register(source)``; ``source(provider_name, model) -> ModelProfile | None`` (prices, windows …)."""

    def __call__(self, source: ModelProfileSource) -> None:
        """Register."""


@hookspec
def register_providers(register: RegisterProvider) -> None:
    """Add providers: ``register(name, factory, *, aliases=())``; ``factory(model, *, base_url, api_key)``.

    ``factory`` may be ``lazy("package.module:Provider", **bound_keyword_arguments)``.
    """


@hookspec
def register_tools(register: RegisterTools) -> None:
    """Add tools users can select by name: ``register(tool_or_iterable_of_tools)``.

    A tool whose module is heavy to import: ``register(lazy("package.module:tool"), name="ToolName")``.
    """


@hookspec
def register_toolsets(register: RegisterToolset) -> None:
    """Add toolset factories: ``register(name, factory)``; ``factory(options)`` gives a `Toolset` or None."""


@hookspec
def register_session_stores(register: RegisterSessionStore) -> None:
    """Add session stores: ``register(scheme, factory)``; ``factory(url)`` makes a store for that URL."""


@hookspec
def register_skills(register: RegisterSkill) -> None:
    """Add skills: ``register(name, description, body)``; offered like project skills when settings load."""


@hookspec
def register_hooks(register: RegisterHook) -> None:
    """Add run-time hooks every run gets: ``register(event, HookMatcher)``; they run before the run's own."""


@hookspec
def register_retry_policies(register: RegisterRetryPolicy) -> None:
    """Add retry policies users can select by name: ``register(name, policy)``."""


@hookspec
def register_model_profiles(register: RegisterModelProfiles) -> None:
    """Add maintained model data: ``register(source)``; later sources win over earlier ones per field."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add subcommands to the ``openagent`` command line (``cli`` is its click group)."""
