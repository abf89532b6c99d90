"""openagent's built-in tools: Read, Write, Edit, Glob, Grep, Bash, WebFetch, WebSearch, TodoWrite,
AskUserQuestion, and the memory tools MemoryRead, MemoryWrite, MemoryDelete.

Installed, they are selected by name: ``AgentOptions(tools=["Read", "Grep", "Edit"])``. WebSearch and
AskUserQuestion need something from the application (a search backend, a way to reach the user): pass the
tools the factories make, ``web_search(backend)`` and ``ask_user_question(callback)``; the registered ones
answer with an error saying so. File tools work only under the run's ``cwd`` and ``add_dirs``.
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from openagent.plugin import hookimpl, lazy

if TYPE_CHECKING:
    from openagent import Tool

    from ._bash import bash
    from ._files import edit, read, write
    from ._interactive import Question, Todo, ask_user_question, todo_write
    from ._search import glob, grep
    from ._web import SearchBackend, SearchResult, web_fetch, web_search
    from .memory import DictMemoryStore, Memory, MemoryEntry, MemoryStore, SessionMemoryStore

__all__ = [
    "REGISTERED",
    "DictMemoryStore",
    "Memory",
    "MemoryEntry",
    "MemoryStore",
    "Question",
    "SearchBackend",
    "SearchResult",
    "SessionMemoryStore",
    "Todo",
    "all_tools",
    "ask_user_question",
    "bash",
    "edit",
    "glob",
    "grep",
    "read",
    "register_tools",
    "register_toolsets",
    "todo_write",
    "web_fetch",
    "web_search",
    "write",
]

REGISTERED = (
    "Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch", "WebSearch", "TodoWrite", "AskUserQuestion",
    "MemoryRead", "MemoryWrite", "MemoryDelete",
)  # fmt: skip
"""The names the plugin registers; the tools themselves are made when the first is used (`_registered`)."""

_HOMES = {
    "bash": "_bash",
    "edit": "_files",
    "read": "_files",
    "write": "_files",
    "Question": "_interactive",
    "Todo": "_interactive",
    "ask_user_question": "_interactive",
    "todo_write": "_interactive",
    "glob": "_search",
    "grep": "_search",
    "SearchBackend": "_web",
    "SearchResult": "_web",
    "web_fetch": "_web",
    "web_search": "_web",
    "DictMemoryStore": "memory",
    "Memory": "memory",
    "MemoryEntry": "memory",
    "MemoryStore": "memory",
    "SessionMemoryStore": "memory",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:  # imported on first use: registering the tools needs none of them
        from importlib import import_module

        return getattr(import_module(f"openagent_tools.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'openagent_tools' has no attribute {name!r}")


def all_tools() -> list[Tool]:
    """Every built-in tool, WebSearch and AskUserQuestion without a backend or callback."""
    from ._bash import bash
    from ._files import edit, read, write
    from ._interactive import ask_user_question, todo_write
    from ._search import glob, grep
    from ._web import web_fetch, web_search

    return [read, write, edit, glob, grep, bash, web_fetch, web_search(), todo_write, ask_user_question()]


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """Register the built-in tools under their Claude Code names, and the memory tools (made on first use)."""
    for name in REGISTERED:
        register(lazy(f"openagent_tools._registered:{name}"), name=name)


@hookimpl
def register_toolsets(register: Callable[[str, Any], None]) -> None:
    """Report the Bash sandbox's state in the init message when the options enable it."""
    register("sandbox", lazy("openagent_tools._sandbox:sandbox_toolset"))
