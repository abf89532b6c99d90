"""The names the model sees: ``mcp__<server>__<tool>``, within 64 characters, unique, mapped back.

Providers accept tool names of ``[A-Za-z0-9_-]`` up to 64 characters. Every other character becomes ``_``;
in the server part, runs of ``_`` collapse to one, so a server named ``files__x`` can never produce names
that a rule for the server ``files`` (``mcp__files``) would cover. A name longer than 64 characters keeps
its start and ends in ``_`` and 8 hex digits of the SHA-256 of the server key and the tool's real name:
stable across runs and reconnects. Two servers whose keys give the same prefix (``my.fs`` and ``my_fs``),
or two tools of one server that give the same name, are told apart in configuration (or listing) order:
the first keeps the name, the next gets ``_2``, then ``_3`` …, and a warning says so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["MAX_NAME", "allocate", "server_prefixes", "tool_name"]

MAX_NAME = 64
"""The longest tool name providers accept."""
_MAX_SERVER = 30  # the server part's share, so that every tool keeps room for its own name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_RUNS = re.compile(r"_{2,}")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


def _fit(text: str, limit: int, *key: str) -> str:
    """``text`` if it fits in ``limit`` characters, else its start, ``_`` and a digest of ``key``."""
    return text if len(text) <= limit else f"{text[: limit - 9]}_{_digest(*key)}"


def _server_part(server: str) -> str:
    part = _RUNS.sub("_", _UNSAFE.sub("_", server)).strip("_") or "server"
    return _fit(part, _MAX_SERVER, server)


def tool_name(server: str, tool: str, prefix: str | None = None) -> str:
    """The name the model sees for ``tool`` of ``server`` (``prefix`` is the server's allocated part)."""
    head = f"mcp__{prefix or _server_part(server)}__"
    return head + _fit(_UNSAFE.sub("_", tool) or "tool", MAX_NAME - len(head), server, tool)


def allocate(wanted: str, taken: set[str]) -> str:
    """``wanted``, or ``wanted`` with the first free ``_2``, ``_3`` … suffix (still within 64 characters)."""
    name, number = wanted, 1
    while name in taken:
        number += 1
        suffix = f"_{number}"
        name = wanted[: MAX_NAME - len(suffix)] + suffix
    taken.add(name)
    return name


def server_prefixes(servers: Iterable[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each server's name part, unique, in order; and a warning for each server that had to be renamed."""
    keys = list(servers)
    plain = {key: _server_part(key) for key in keys}
    first: dict[str, str] = {}
    for key in keys:
        first.setdefault(plain[key], key)
    taken = set(first)  # every plain prefix some server owns outright
    prefixes: dict[str, str] = {}
    warnings: dict[str, str] = {}
    for key in keys:
        if first[plain[key]] == key:
            prefixes[key] = plain[key]
            continue
        prefixes[key] = allocate(plain[key], taken)
        warnings[key] = (
            f"MCP servers {first[plain[key]]!r} and {key!r} both give the tool prefix "
            f"mcp__{plain[key]}__; the tools of {key!r} are named mcp__{prefixes[key]}__…"
        )
    return prefixes, warnings
