"""The plugin manager: finds plugins through entry points and collects what they register.

Plugins load on first use, not at ``import openagent``. ``OPENAGENT_PLUGINS`` limits which load (a comma
list of entry-point names; empty means none). A plugin that fails to import or to register is reported by
name with its error, and the others keep working.

What a plugin registers may be a `Lazy` reference (``lazy("package.module:attribute")``) instead of the
object itself: its module is imported when the registration is first used, not when plugins load, so a plugin
offers a provider, store or tool without paying for the modules behind it until something needs them. A
reference that fails to import is reported like a broken plugin (`PluginInfo.error`, a warning in the log)
and its registration is dropped, so the lookup fails the way an unknown name does, naming the broken plugin.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    import pluggy

    from .models import ProviderFactory
    from .tools import Tool

__all__ = [
    "Lazy",
    "PluginInfo",
    "Registry",
    "get_plugin_manager",
    "lazy",
    "list_plugins",
    "load_plugins",
    "registry",
]

logger = logging.getLogger("openagent.plugins")
ENTRY_POINT_GROUP = "openagent"


@dataclass(frozen=True, slots=True)
class Lazy:
    """A registration resolved on first use: ``target`` is ``"package.module:attribute"`` (the attribute may
    be dotted); ``kwargs``, when given, are bound to it (``functools.partial``).
    """  # noqa: D205

    target: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def load(self) -> Any:
        """Import the module and return the attribute (with ``kwargs`` bound).

        Raises:
            Exception: whatever importing the module or finding the attribute raised.
        """
        module, _, attribute = self.target.partition(":")
        value: Any = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            value = getattr(value, part)
        return functools.partial(value, **dict(self.kwargs)) if self.kwargs else value


def lazy(target: str, **kwargs: Any) -> Lazy:
    """Register ``target`` (``"package.module:attribute"``) without importing it until first use.

    ``register("ollama", lazy("openagent_openai._provider:ChatCompletionsProvider", profile=OLLAMA))``
    """
    if ":" not in target or not target.partition(":")[0]:
        raise ValueError(f"a lazy registration is 'package.module:attribute', not {target!r}")
    return Lazy(target, tuple(kwargs.items()))


class _Table(dict[str, Any]):
    """A registry table whose `Lazy` values are resolved when they are read.

    A value that fails to resolve marks its plugin broken and is removed; the read then fails as for an
    unknown name (`KeyError`, or the default of `get`).
    """

    def __init__(self, kind: str, on_error: Callable[[str, str, BaseException], None]) -> None:
        super().__init__()
        self.kind = kind
        self.owners: dict[str, str] = {}
        """Which plugin registered each name."""
        self._on_error = on_error

    def __getitem__(self, name: str) -> Any:
        value = super().__getitem__(name)
        if isinstance(value, Lazy):
            try:
                value = value.load()
            except Exception as exc:  # a broken plugin must not take the others down
                super().__delitem__(name)
                self._on_error(self.owners.get(name, "?"), f"{self.kind} {name!r}", exc)
                raise KeyError(name) from exc
            self[name] = value
        return value

    def get(self, name: str, default: Any = None) -> Any:
        """The resolved value, or ``default`` when the name is unknown or its plugin is broken."""
        try:
            return self[name]
        except KeyError:
            return default

    def values(self) -> list[Any]:  # type: ignore[override]
        """Every value, resolved (broken ones left out)."""
        return [value for _, value in self.items()]

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        """Every ``(name, value)``, resolved (broken ones left out)."""
        out = []
        for name in list(self.keys()):
            try:
                out.append((name, self[name]))
            except KeyError:
                continue
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.keys()))


@dataclass
class PluginInfo:
    """One plugin: where it came from and what it registered, or why it is broken."""

    name: str
    dist: Any = field(default=None, repr=False, compare=False)
    """The installed distribution the plugin came from (``None`` for the built-in one and extras)."""
    providers: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    session_stores: list[str] = field(default_factory=list)
    retry_policies: list[str] = field(default_factory=list)
    toolsets: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the plugin could not load or register; ``None`` when it works."""

    @property
    def version(self) -> str | None:
        """The distribution's version, read when asked (parsing every plugin's metadata at load costs)."""
        return str(self.dist.version) if self.dist is not None else None


@dataclass
class Registry:
    """What the loaded plugins registered, by kind and name."""

    manager: pluggy.PluginManager
    plugins: dict[str, PluginInfo] = field(default_factory=dict)
    providers: dict[str, ProviderFactory] = field(init=False)
    tools: dict[str, Tool] = field(init=False)
    session_stores: dict[str, Callable[[str], Any]] = field(init=False)
    retry_policies: dict[str, Any] = field(init=False)
    toolsets: dict[str, Callable[[Any], Any]] = field(init=False)
    hooks: dict[str, list[Any]] = field(default_factory=dict)
    """Hook matchers by event, contributed by plugins for every run."""
    skills: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Skill name → (description, body), contributed by plugins."""

    def __post_init__(self) -> None:
        for kind in ("providers", "tools", "session_stores", "retry_policies", "toolsets"):
            setattr(self, kind, _Table(kind.removesuffix("s").replace("_", " "), self._broken))

    def _broken(self, plugin: str, what: str, exc: BaseException) -> None:
        """A lazy registration failed to load: report its plugin as broken."""
        error = f"{what} failed to load: {type(exc).__name__}: {exc}"
        info = self.plugins.get(plugin)
        if info is not None:
            info.error = error
        logger.warning("openagent plugin %r is broken: %s", plugin, error)

    def provider_factory(self, name: str) -> ProviderFactory:
        """The factory registered under ``name``; `ConfigError` naming the installed ones otherwise."""
        try:
            return self.providers[name]
        except KeyError:
            owner = self.providers.owners.get(name) if isinstance(self.providers, _Table) else None
            info = self.plugins.get(owner) if owner else None
            if info is not None and info.error:
                raise ConfigError(
                    f"provider {name!r} comes from the plugin {owner!r}, which is broken: {info.error}"
                ) from None
            known = ", ".join(sorted(self.providers)) or "none"
            broken = [f"{p.name} ({p.error})" for p in self.plugins.values() if p.error]
            hint = f"; plugins that failed to load: {', '.join(broken)}" if broken else ""
            raise ConfigError(
                f"unknown provider {name!r}; installed providers: {known}{hint}. "
                f'Providers come from plugins, e.g. pip install "openagent[openai]".'
            ) from None

    def session_store_factory(self, scheme: str) -> Callable[[str], Any]:
        """The session-store factory for a URL scheme; `ConfigError` naming the installed ones otherwise."""
        try:
            return self.session_stores[scheme]
        except KeyError:
            known = ", ".join(sorted(self.session_stores)) or "none"
            raise ConfigError(f"no session store for {scheme!r} URLs; installed: {known}") from None

    # -- registration ---------------------------------------------------------------------------------------

    def _collect(self, name: str, plugin: object) -> None:
        info = self.plugins[name]
        calls: list[tuple[str, Callable[..., None]]] = [
            (
                "register_providers",
                lambda n, f, *, aliases=(): self._add(info, "providers", [n, *aliases], f),
            ),
            ("register_tools", lambda t, *, name=None: self._add_tools(info, t, name)),
            ("register_session_stores", lambda n, f: self._add(info, "session_stores", [n], f)),
            ("register_retry_policies", lambda n, p: self._add(info, "retry_policies", [n], p)),
            ("register_toolsets", lambda n, f: self._add(info, "toolsets", [n], f)),
            ("register_hooks", lambda event, matcher: self._add_hook(info, event, matcher)),
            ("register_skills", lambda n, d, body: self._add(info, "skills", [n], (d, body))),
        ]
        for hook_name, register in calls:
            for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                try:
                    impl.function(register=register)
                except Exception as exc:  # a broken plugin must not take the others down
                    info.error = f"{hook_name} failed: {type(exc).__name__}: {exc}"
                    logger.warning("openagent plugin %r failed in %s: %s", name, hook_name, exc)

    def _add(self, info: PluginInfo, kind: str, names: list[str], value: Any) -> None:
        table: dict[str, Any] = getattr(self, kind)
        for name in names:
            table[name] = value
            if isinstance(table, _Table):
                table.owners[name] = info.name
            getattr(info, kind).append(name)

    def _add_hook(self, info: PluginInfo, event: str, matcher: Any) -> None:
        self.hooks.setdefault(event, []).append(matcher)
        info.hooks.append(event)

    def _add_tools(
        self, info: PluginInfo, tools: Tool | Iterable[Tool] | Lazy, name: str | None = None
    ) -> None:
        from .tools import Tool

        if isinstance(tools, Lazy):
            if not name:
                raise ConfigError(f"a lazy tool needs its name: register(lazy({tools.target!r}), name=...)")
            self._add(info, "tools", [name], tools)
            return
        for tool in [tools] if isinstance(tools, Tool) else list(tools):
            self._add(info, "tools", [tool.name], tool)


def get_plugin_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with openagent's hook specifications (no plugins registered)."""
    import pluggy  # lazily, with the entry-point scan: `import openagent` needs neither

    from . import hookspecs

    manager = pluggy.PluginManager(ENTRY_POINT_GROUP)
    manager.add_hookspecs(hookspecs)
    return manager


def _allowed() -> set[str] | None:
    raw = os.environ.get("OPENAGENT_PLUGINS")
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def load_plugins(extra: Iterable[tuple[str, object]] = ()) -> Registry:
    """Load the built-in plugin, the installed entry-point plugins (subject to ``OPENAGENT_PLUGINS``) and
    ``extra`` ``(name, plugin)`` pairs, and collect what they register. Never raises for a broken plugin.
    """  # noqa: D205
    from . import testing

    registry = Registry(manager=get_plugin_manager())
    candidates: list[tuple[str, Any, Callable[[], object]]] = [
        ("openagent", None, lambda: testing),
    ]
    allowed = _allowed()
    import importlib.metadata

    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if allowed is None or ep.name in allowed:
            candidates.append((ep.name, ep.dist, ep.load))
    candidates.extend((name, None, functools.partial(_identity, plugin)) for name, plugin in extra)

    for name, dist, load in candidates:
        info = registry.plugins[name] = PluginInfo(name=name, dist=dist)
        plugin: object = None
        try:
            plugin = load()
            registry.manager.register(plugin, name=name)
            _check(registry.manager, plugin)
        except Exception as exc:
            info.error = f"{type(exc).__name__}: {exc}"
            logger.warning("openagent plugin %r could not be loaded: %s", name, info.error)
            if plugin is not None and registry.manager.is_registered(plugin):
                registry.manager.unregister(plugin)
            continue
        registry._collect(name, plugin)
    return registry


def _identity(plugin: object) -> object:
    return plugin


def _check(manager: pluggy.PluginManager, plugin: object) -> None:
    """Refuse a plugin with a hook implementation that matches no specification (a misspelled hook)."""
    for impl in manager.get_hookcallers(plugin) or []:
        if impl.spec is None:
            raise ConfigError(f"hook {impl.name!r} matches no openagent hook specification (misspelled?)")


_CACHE: dict[str | None, Registry] = {}


def registry() -> Registry:
    """The process-wide registry for the current ``OPENAGENT_PLUGINS`` value, loaded on first use."""
    key = os.environ.get("OPENAGENT_PLUGINS")
    if key not in _CACHE:
        _CACHE[key] = load_plugins()
    return _CACHE[key]


def list_plugins() -> list[PluginInfo]:
    """Every plugin found: name, version, what it registered, and the error of those that are broken."""
    return list(registry().plugins.values())
