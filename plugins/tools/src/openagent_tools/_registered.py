"""The tools the plugin registers, made when the first of them is used: one attribute per tool name."""

from __future__ import annotations

from typing import Any

from openagent import Tool

from . import all_tools
from .memory import Memory, SessionMemoryStore

__all__ = ["TOOLS"]

TOOLS: dict[str, Tool] = {t.name: t for t in [*all_tools(), *Memory(SessionMemoryStore()).tools]}


def __getattr__(name: str) -> Any:
    try:
        return TOOLS[name]
    except KeyError:
        raise AttributeError(f"module 'openagent_tools._registered' has no tool {name!r}") from None
