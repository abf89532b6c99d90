"""The agents a worker runs: their options, how Temporal runs their steps, and their opened runtimes.

A worker opens each agent's runtime once (providers, tools, MCP connections, the session store) and keeps it
for every run; the workflow reads it for its decisions (no I/O: it is already open), the activities use it to
run model turns and tool calls. A run's own option changes (`RunSpec.overrides`) and a subagent's runtime are
derived from it without I/O, so any worker derives the same one.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio.common import RetryPolicy

from openagent import AgentDefinition, AgentOptions, ToolContext
from openagent.plugin import ConfigError, Runtime, child_runtime, open_runtime, prepare_runtime

from ._spec import OVERRIDABLE, RunSpec

__all__ = ["DurableAgent", "close_agents", "durable_agent", "open_agents", "opened_runtime", "runtime_for"]

MODEL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), backoff_coefficient=2.0, maximum_interval=timedelta(seconds=60),
    maximum_attempts=6,
)  # fmt: skip
NO_RETRY = RetryPolicy(maximum_attempts=1)


@dataclass(frozen=True)
class DurableAgent:
    """An agent a worker runs durably: its options, and how Temporal runs its model turns and tool calls.

    Args:
        options: The agent's options (model, tools, MCP servers, hooks, session store, …), as for `query()`.
        model_retry: Retries of a model turn; a 400 or an authentication error is never retried, a
            ``Retry-After`` sets the next wait.
        tool_retries: Retries per tool name. A tool not named is not retried: a failed or cut call is
            answered with an error and the model decides what to do.
        model_timeout: The longest a model turn may take.
        tool_timeout: The longest a tool call may take.
        heartbeat_timeout: A model turn or tool call whose worker stops heartbeating this long (it died) is
            handed to another worker (a tool call only when its retry policy allows another attempt).
        local_model_turns: Run model turns as local activities: in the worker that runs the workflow task,
            recorded in the history as markers, without a round trip through the task queue (about twice
            the throughput; a model turn has no side effect to protect). A worker that dies mid-turn is
            noticed when its workflow task times out (10 s), and the turn runs again on another worker.
    """

    options: AgentOptions
    model_retry: RetryPolicy = field(default_factory=lambda: MODEL_RETRY)
    tool_retries: Mapping[str, RetryPolicy] = field(default_factory=dict)
    model_timeout: timedelta = timedelta(minutes=10)
    tool_timeout: timedelta = timedelta(minutes=30)
    heartbeat_timeout: timedelta = timedelta(seconds=30)
    local_model_turns: bool = False
    inline_limit: int = 64 * 1024
    """A tool result larger than this (bytes of JSON) is kept in the session store and referenced, so the
    workflow history and every later payload stay small (only when the run keeps a session)."""

    def tool_retry(self, name: str) -> RetryPolicy:
        """The retry policy of one tool's calls (default: one attempt)."""
        return self.tool_retries.get(name, NO_RETRY)


_AGENTS: dict[str, DurableAgent] = {}
_HOLDERS: dict[str, int] = {}
"""How many running workers of this process run each agent."""
_RUNTIMES: dict[str, Runtime] = {}
_DERIVED: OrderedDict[tuple[Any, ...], Runtime] = OrderedDict()
_OPENED: OrderedDict[tuple[Any, ...], Runtime] = OrderedDict()
_KEEP = 512


def durable_agent(value: AgentOptions | DurableAgent) -> DurableAgent:
    """An agent as given to a worker: options alone get the default durability settings."""
    return value if isinstance(value, DurableAgent) else DurableAgent(value)


async def open_agents(agents: Mapping[str, AgentOptions | DurableAgent]) -> None:
    """Open each agent's runtime (once per process and name; each worker that runs it holds it open)."""
    held: list[str] = []
    try:
        for name, value in agents.items():
            agent = durable_agent(value)
            if name in _AGENTS and _AGENTS[name].options is not agent.options:
                raise ConfigError(f"this process already runs another agent named {name!r}")
            if name not in _RUNTIMES:
                runtime = await open_runtime(prepare_runtime(agent.options))
                _AGENTS[name], _RUNTIMES[name] = agent, runtime
            _HOLDERS[name] = _HOLDERS.get(name, 0) + 1
            held.append(name)
    except BaseException:  # one agent failed to open: let go of the others, as if the worker had stopped
        await close_agents(held)
        raise


async def close_agents(names: Iterable[str]) -> None:
    """Let go of agents `open_agents` opened; the last worker to let go of one closes what it opened
    (toolsets, stores, providers, the fallback models' providers).
    """  # noqa: D205
    from openagent.plugin import Toolset

    closing = []
    for name in names:
        _HOLDERS[name] -= 1
        if _HOLDERS[name] == 0:
            del _HOLDERS[name], _AGENTS[name]
            closing.append(_RUNTIMES.pop(name))
    for key in [key for key in _DERIVED if key[0] not in _RUNTIMES]:
        derived = _DERIVED.pop(key)
        if derived.owns_provider and all(derived.provider is not r.provider for r in closing):
            await _close(derived.provider)  # a fallback model's provider, made here
    for key in [key for key in _OPENED if key[0] not in _RUNTIMES]:
        del _OPENED[key]
    for runtime in closing:
        for toolset in reversed(runtime.toolsets):
            if isinstance(toolset, Toolset):
                await _close(toolset)
        if runtime.owns_store:
            await _close(runtime.store)
        if runtime.owns_provider:
            await _close(runtime.provider)


async def _close(thing: Any) -> None:
    close = getattr(thing, "aclose", None)
    if close is not None:
        try:
            await close()
        except Exception:  # closing never masks the worker's own outcome
            pass


def agent(name: str) -> DurableAgent:
    """The agent named ``name`` on this worker."""
    try:
        return _AGENTS[name]
    except KeyError:
        known = ", ".join(sorted(_AGENTS)) or "none"
        raise ConfigError(f"this worker runs no agent named {name!r} (it runs: {known})") from None


def runtime_for(spec: RunSpec, *, fallback: bool = False) -> Runtime:
    """The runtime a run decides with: its agent's, with the run's overrides, or its subagent's; with
    ``fallback``, the same on the agent's ``fallback_model``. No I/O.
    """  # noqa: D205
    agent(spec.agent)
    key = (spec.agent, tuple(sorted((k, repr(v)) for k, v in spec.overrides.items())), spec.subagent,
           spec.parent_tool_use_id, spec.depth, spec.parent_permission_mode, fallback)  # fmt: skip
    if (found := _DERIVED.get(key)) is not None:
        _DERIVED.move_to_end(key)
        return found
    runtime = _RUNTIMES[spec.agent]
    unknown = set(spec.overrides) - OVERRIDABLE
    if unknown:
        raise ConfigError(f"a durable run cannot set {sorted(unknown)}: define another agent on the worker")
    if spec.overrides:
        runtime = dataclasses.replace(runtime, options=runtime.options.replace(**spec.overrides))
    if spec.subagent is not None:
        runtime = _subagent(runtime, spec)
    if fallback and runtime.options.fallback_model is not None:
        runtime = runtime.with_model(runtime.options.fallback_model)
    _DERIVED[key] = runtime
    if len(_DERIVED) > _KEEP:
        _DERIVED.popitem(last=False)
    return runtime


def _subagent(parent: Runtime, spec: RunSpec) -> Runtime:
    definitions = parent.options.agents or {}
    definition = definitions.get(spec.subagent or "")
    if definition is None:
        known = ", ".join(sorted(definitions)) or "none"
        raise ConfigError(f"unknown subagent_type {spec.subagent!r}; available agents: {known}")
    if isinstance(definition, Mapping):
        definition = AgentDefinition(**definition)
    context = ToolContext(
        tool_use_id=spec.parent_tool_use_id or "",
        session_id=spec.session_id,
        cwd=str(parent.cwd),
        options=parent.options,
        depth=spec.depth - 1,
        tools=parent.tools,
        hooks=parent.hooks,
        permission_mode=spec.parent_permission_mode,
    )
    return child_runtime(context, definition)


async def opened_runtime(spec: RunSpec, *, fallback: bool = False) -> Runtime:
    """`runtime_for`, opened: what the activities run with (a subagent's settings read once per worker)."""
    runtime = runtime_for(spec, fallback=fallback)
    if spec.subagent is None:
        return runtime  # the agent's runtime is open; overrides and the model change no connection
    key = (spec.agent, spec.subagent, spec.parent_tool_use_id, spec.depth, fallback)
    if (found := _OPENED.get(key)) is None:
        found = _OPENED[key] = await open_runtime(runtime)
        if len(_OPENED) > _KEEP:
            _OPENED.popitem(last=False)
    return found
