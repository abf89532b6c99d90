"""openagent's built-in tools: Read, Write, Edit, Glob, Grep, Bash, WebFetch, WebSearch, TodoWrite,
AskUserQuestion, and the memory tools MemoryRead, MemoryWrite, MemoryDelete.

Installed, they are selected by name: ``AgentOptions(tools=["Read", "Grep", "Edit"])``. WebSearch and
AskUserQuestion need something from the application (a search backend, a way to reach the user): pass the
tools the factories make, ``web_search(backend)`` and ``ask_user_question(callback)``; the registered ones
answer with an error saying so. File tools work only under the run's ``cwd`` and ``add_dirs``.
"""  # noqa: D205

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openagent import Tool, hookimpl

from ._bash import bash
from ._files import edit, read, write
from ._interactive import Question, Todo, ask_user_question, todo_write
from ._sandbox import sandbox_toolset
from ._search import glob, grep
from ._web import SearchBackend, SearchResult, web_fetch, web_search
from .memory import DictMemoryStore, Memory, MemoryEntry, MemoryStore, SessionMemoryStore

__all__ = [
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


def all_tools() -> list[Tool]:
    """Every built-in tool, WebSearch and AskUserQuestion without a backend or callback."""
    return [read, write, edit, glob, grep, bash, web_fetch, web_search(), todo_write, ask_user_question()]


@hookimpl
def register_tools(register: Callable[[Any], None]) -> None:
    """Register the built-in tools under their Claude Code names, and the memory tools."""
    register(all_tools())
    register(Memory(SessionMemoryStore()).tools)


@hookimpl
def register_toolsets(register: Callable[[str, Callable[[Any], Any]], None]) -> None:
    """Report the Bash sandbox's state in the init message when the options enable it."""
    register("sandbox", sandbox_toolset)
