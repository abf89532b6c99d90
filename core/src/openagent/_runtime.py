"""`Runtime`: what a conversation runs with, resolved once from its options and never changed in place.

The provider and its model profile, the tools (the options', the project's, the toolsets'), the hooks (the
plugins' and the options', merged once), the permission rules, the retry policy, the session store, the
project settings. `prepare` does the part that needs no I/O (so a bad model string fails at ``query()``);
`open` the rest (settings files, toolsets, the store). A subagent's runtime inherits its parent's live tools
and merged hooks (`Inherited`), so MCP servers are never reconnected and hooks never merged twice.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._compaction import MIN_CONTEXT_WINDOW
from ._errors import ConfigError
from ._hooks import HookMatcher, merge_hooks
from ._models import ModelProfile, Provider, ProviderProfile, split_model
from ._plugins import registry, resolve
from ._settings import ProjectSettings, load_settings
from ._structured import OutputSchema
from ._tasks import spawn
from ._toolcall import ToolEnv
from ._tools import Tool, Toolset
from ._types import SystemMessage

if TYPE_CHECKING:
    from ._checkpoints import FileCheckpoints
    from ._options import AgentOptions
    from ._permissions import PermissionState
    from ._retry import RetryPolicy
    from ._sessions import SessionStore

__all__ = [
    "MIN_CONTEXT_WINDOW",
    "Inherited",
    "Runtime",
    "describe_toolsets",
    "merged_hooks",
    "model_profile",
    "open_runtime",
    "open_toolsets",
    "prepare",
]


@dataclass(frozen=True, slots=True)
class Inherited:
    """What a subagent takes from its parent's run, instead of building it again, and how it differs."""

    parent_tool_use_id: str
    """The call the subagent answers; stamped on every message it yields."""
    depth: int
    tools: Mapping[str, Tool] | None = None
    """The parent's live tools (``None``: the child's options make its own, toolsets included)."""
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None
    """The parent's merged hooks (``None``: merged from the child's options)."""
    only: tuple[str, ...] | None = None
    """Names of the tools the child may use (``None``: all)."""
    without: tuple[str, ...] = ()
    """Tools taken away from the child."""


@dataclass(frozen=True, slots=True)
class Runtime:
    """Everything a conversation runs with that its options decide. Frozen: a change makes a new one."""

    options: AgentOptions
    provider: Provider
    model: str
    """The model name sent to the provider (``qwen3:8b`` for ``ollama:qwen3:8b``)."""
    profile: ModelProfile
    """What the model can do, from every layer known without asking the server."""
    tools: Mapping[str, Tool]
    hooks: Mapping[str, Sequence[HookMatcher]]
    retry: RetryPolicy
    cwd: Path
    output: OutputSchema | None = None
    settings: ProjectSettings = field(default_factory=ProjectSettings)
    allowed: tuple[str, ...] = ()
    disallowed: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    described: Mapping[str, Any] = field(default_factory=dict)
    """What toolsets and settings add to the init message."""
    toolsets: tuple[Toolset, ...] = ()
    store: SessionStore | None = None
    lineage: Inherited | None = None
    """Set for a subagent: its parent's call and what it inherits."""

    @property
    def depth(self) -> int:
        """How many subagents deep this run is (0 for the top-level agent)."""
        return self.lineage.depth if self.lineage else 0

    @property
    def parent_tool_use_id(self) -> str | None:
        """The call a subagent answers; ``None`` for the top-level agent."""
        return self.lineage.parent_tool_use_id if self.lineage else None

    @property
    def owns_provider(self) -> bool:
        """A provider made from a model string is the run's to close; an instance is the caller's."""
        return isinstance(self.options.model, str | None)

    @property
    def owns_store(self) -> bool:
        """Likewise for the session store."""
        return isinstance(self.options.session_store, str | None)

    def init_message(self, session_id: str, permission_mode: str) -> SystemMessage:
        """``SystemMessage(subtype="init")``: session, model, tools, cwd, mode, and what toolsets report."""
        data = {
            "session_id": session_id,
            "model": self.model,
            "tools": list(self.tools),
            "cwd": str(self.cwd),
            "permission_mode": permission_mode,
            "mcp_servers": [],
            **self.described,
            **describe_toolsets(self.toolsets),  # live: a server may have connected or failed since
        }
        return SystemMessage(subtype="init", data=data)

    def tool_env(
        self,
        session_id: str,
        permissions: PermissionState,
        hook_base: Mapping[str, Any],
        *,
        checkpoints: FileCheckpoints | None = None,
        tasks: dict[str, Any] | None = None,
        record: Callable[..., Awaitable[None]] | None = None,
    ) -> ToolEnv:
        """What the tool pipeline gets from this run (``permissions``: the rules and mode in force)."""
        return ToolEnv(
            tools=self.tools,
            hooks=self.hooks,
            options=self.options,
            session_id=session_id,
            cwd=self.cwd,
            permissions=permissions,
            depth=self.depth,
            parent_tool_use_id=self.parent_tool_use_id,
            hook_base=hook_base,
            checkpoints=checkpoints,
            tasks=tasks,
            record=record,
        )

    def extra_tokens(self) -> int:
        """About how many tokens the system prompt and the tool schemas add to every request."""
        system = self.settings.system_prompt(self.options.system_prompt) or ""
        tools = self.tools.values()
        return (len(system) + sum(len(json.dumps(t.input_schema)) + len(t.description) for t in tools)) // 4

    def with_model(self, model: str | Provider | None) -> Runtime:
        """The same runtime on another model (history and everything else stay)."""
        options = self.options.replace(model=model)
        provider, name = _provider(options)
        return replace(
            self,
            options=options,
            provider=provider,
            model=name,
            profile=model_profile(provider, name, options),
        )


def _provider(options: AgentOptions) -> tuple[Provider, str]:
    model = options.resolved_model()
    if not isinstance(model, str):
        return model, str(getattr(model, "model", type(model).__name__))
    provider = resolve("provider", model, base_url=options.base_url, api_key=options.api_key)
    return provider, split_model(model)[1]


def model_profile(provider: Provider, model: str, options: AgentOptions) -> ModelProfile:
    """The model's profile from the endpoint's defaults, maintained data and the run's override, in order.

    What the server reports is a further layer, asked for only when a run needs it (see `MIN_CONTEXT_WINDOW`).
    """
    endpoint = getattr(provider, "profile", None)
    profile = endpoint.defaults if isinstance(endpoint, ProviderProfile) else ModelProfile()
    name = endpoint.name if isinstance(endpoint, ProviderProfile) else ""
    for source in registry().model_profiles if name else ():
        found = source(name, model)
        if found is not None:
            profile = found.over(profile)
    return ModelProfile.of(options.model_profile).over(profile)


def merged_hooks(options: AgentOptions) -> dict[str, list[HookMatcher]]:
    """The plugins' hooks, then the options' own, by event (checking event names and entries)."""
    return merge_hooks(registry().hooks, options.hooks)


def prepare(options: AgentOptions, inherit: Inherited | None = None) -> Runtime:
    """The part of a runtime that needs no I/O: provider, profile, the options' tools, hooks, policy."""
    provider, model = _provider(options)
    if inherit is not None and inherit.tools is not None:
        tools = dict(inherit.tools)
    else:
        tools = {t.name: t for t in (resolve("tool", item) for item in options.tools)}
    hooks = inherit.hooks if inherit is not None and inherit.hooks is not None else merged_hooks(options)
    output = OutputSchema(options.output_format) if options.output_format is not None else None
    return Runtime(
        options=options,
        provider=provider,
        model=model,
        profile=model_profile(provider, model, options),
        tools=tools,
        hooks=hooks,
        retry=resolve("retry_policy", options.retry),
        cwd=options.resolved_cwd(),
        output=output,
        allowed=tuple(options.allowed_tools),
        disallowed=tuple(options.disallowed_tools),
        ask=tuple(options.ask_tools),
        lineage=inherit,
    )


async def open_runtime(runtime: Runtime) -> Runtime:
    """The rest: project settings, toolsets (not for a subagent with its parent's tools), the store."""
    options, lineage = runtime.options, runtime.lineage
    inherited = lineage is not None and lineage.tools is not None
    tools, described = dict(runtime.tools), dict(runtime.described)
    settings, toolsets = runtime.settings, list(runtime.toolsets)
    allowed, disallowed, ask = runtime.allowed, runtime.disallowed, runtime.ask
    if options.setting_sources:
        settings = load_settings(
            options.setting_sources, runtime.cwd, options.skills, trust_project=options.trust_project
        )
        options = settings.apply(options)  # a trusted project's mode, add_dirs, env, MCP servers
        for found in settings.tools():
            tools.setdefault(found.name, found)
        allowed += tuple(settings.allowed_tools)
        disallowed += tuple(settings.disallowed_tools)
        ask += tuple(settings.ask_tools)
        described.update(settings.describe())
    if not inherited:
        agents = {**settings.agents, **(options.agents or {})}  # code wins over files
        toolsets = await open_toolsets(options.replace(agents=agents or None), tools)
    if lineage is not None:
        tools = {n: t for n, t in tools.items() if lineage.only is None or n in lineage.only}
        tools = {n: t for n, t in tools.items() if n not in lineage.without}
    _warn_if_tools_unsupported(runtime, bool(tools))
    store = resolve("session_store", options.session_store) if options.persist_session else None
    return replace(
        runtime, options=options, tools=tools, settings=settings, allowed=allowed, disallowed=disallowed,
        ask=ask, described=described, toolsets=tuple(toolsets), store=store,
    )  # fmt: skip


async def open_toolsets(options: AgentOptions, tools: MutableMapping[str, Tool]) -> list[Toolset]:
    """Open the toolsets plugins make from the options (MCP servers, subagents …) and add their tools to
    ``tools`` (a tool already there keeps its name); toolsets with ``attach`` keep ``tools`` current from
    then on (a server that connects late adds its tools to the next request).
    """  # noqa: D205
    factories = registry().toolsets
    if options.mcp_servers and "mcp" not in factories:
        raise ConfigError('mcp_servers needs the MCP plugin: pip install "openagent[mcp]"')
    toolsets: list[Toolset] = []
    for factory in factories.values():
        toolset = factory(options)
        if toolset is None:
            continue
        toolsets.append(toolset)
        try:
            opened = await toolset.open()
        except BaseException:  # cancelled or failed: close what was started, even if this task cannot wait
            for made in toolsets:
                spawn(made.aclose, "closing a toolset that did not open")
            raise
        for found in opened:
            tools.setdefault(found.name, found)
        attach = getattr(toolset, "attach", None)
        if callable(attach):
            attach(tools)
    return toolsets


def describe_toolsets(toolsets: Sequence[Toolset]) -> dict[str, Any]:
    """What the toolsets report now for the init message (``{"mcp_servers": [...]}`` …)."""
    described: dict[str, Any] = {}
    for toolset in toolsets:
        described.update(toolset.describe())
    return described


_WARNED: set[str] = set()


def _warn_if_tools_unsupported(runtime: Runtime, has_tools: bool) -> None:
    """Warn once per model when tools were given to a model its profile says cannot call them."""
    profile = runtime.profile
    if not has_tools or profile.supports_tools is not False or profile.tool_call_protocol == "text":
        return
    endpoint = getattr(getattr(runtime.provider, "profile", None), "name", "?")
    if runtime.model not in _WARNED:
        _WARNED.add(runtime.model)
        warnings.warn(
            f"{endpoint}:{runtime.model} cannot call tools natively, so the tools given will not be used; "
            "use a profile with tool_call_protocol='text' (tool calls parsed from <tool_call> tags) instead",
            stacklevel=5,
        )
