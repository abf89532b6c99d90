"""The built-in plugin: the core's defaults, registered through the same hooks as any third-party plugin's.

- the ``test`` provider (``model="test:echo"`` answers with the prompt; `openagent.testing.ScriptedModel`);
- the JSONL session store, under the ``jsonl`` scheme (``jsonl://`` is the user data directory,
  ``jsonl:///some/dir`` another root); it is the default store;
- the default retry policy (`StaminaRetry`), under ``default``;
- the ``agents`` toolset: the ``Task`` tool, when a run has subagent definitions.

It is loaded first, by module path, whatever ``OPENAGENT_PLUGINS`` says; nothing imports it otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._hookspecs import hookimpl

if TYPE_CHECKING:
    from ._hookspecs import RegisterProvider, RegisterRetryPolicy, RegisterSessionStore, RegisterToolset
    from ._options import AgentOptions
    from ._sessions import JSONLSessionStore
    from ._tools import Tool
    from .testing import ScriptedModel

__all__ = ["register_providers", "register_retry_policies", "register_session_stores", "register_toolsets"]


def _echo(model: str, *, base_url: str | None = None, api_key: str | None = None) -> ScriptedModel:
    from .testing import ScriptedModel

    return ScriptedModel(model=model)


def _jsonl(url: str) -> JSONLSessionStore:
    from ._sessions import JSONLSessionStore

    root = url.partition("://")[2]
    return JSONLSessionStore(root or None)


class _Agents:
    """The ``Task`` tool as a toolset: there for runs whose options define subagents."""

    def __init__(self, agents: dict[str, Any]) -> None:
        self.agents = agents

    async def open(self) -> list[Tool]:
        from ._agents import task_tool

        return [task_tool(self.agents)]

    async def aclose(self) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return {}


def _agents(options: AgentOptions) -> _Agents | None:
    return _Agents(dict(options.agents)) if options.agents else None


@hookimpl
def register_providers(register: RegisterProvider) -> None:
    """The ``test`` provider: ``model="test:echo"`` echoes the prompt."""
    register("test", _echo)


@hookimpl
def register_session_stores(register: RegisterSessionStore) -> None:
    """The JSONL file store, the default one."""
    register("jsonl", _jsonl)


@hookimpl
def register_retry_policies(register: RegisterRetryPolicy) -> None:
    """Exponential backoff with jitter, as the default."""
    from ._retry import StaminaRetry

    register("default", StaminaRetry())


@hookimpl
def register_toolsets(register: RegisterToolset) -> None:
    """Subagents: the ``Task`` tool for runs with ``agents``."""
    register("agents", _agents)
