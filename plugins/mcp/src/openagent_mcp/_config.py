"""Server configurations in the Claude Agent SDK's format, checked and given their defaults.

``{"type": "stdio" | "http" | "sse" | "sdk", ...}`` plus openagent's keys: ``timeout`` (start-up),
``startup_wait``, ``tool_timeout``, ``tool_timeouts``, ``max_tool_timeout``, ``reconnect`` and
``max_binary_bytes``. Claude Code's ``MCP_TIMEOUT`` and ``MCP_TOOL_TIMEOUT`` environment variables
(milliseconds) set the defaults of ``timeout`` and ``tool_timeout`` when they are set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openagent.errors import ConfigError
from openagent.retry import RetryPolicy, StaminaRetry, resolve_retry

__all__ = [
    "DEFAULT_MAX_BINARY_BYTES",
    "DEFAULT_MAX_TOOL_TIMEOUT",
    "DEFAULT_STARTUP_WAIT",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "ServerConfig",
    "load_servers",
    "parse_config",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools (``"timeout"``; ``$MCP_TIMEOUT`` in ms)."""
DEFAULT_STARTUP_WAIT = 5.0
"""Seconds the init message waits for a server still starting (or its ``timeout`` and a second, when that is
shorter); it is then listed ``pending``, and its tools join when it connects."""
DEFAULT_TOOL_TIMEOUT = 60.0
"""Seconds a call may go without an answer or a progress notification (``$MCP_TOOL_TIMEOUT`` in ms)."""
DEFAULT_MAX_TOOL_TIMEOUT = 3600.0
"""Seconds a call may take in all, however often it reports progress."""
DEFAULT_MAX_BINARY_BYTES = 1_000_000
"""The largest image or binary blob passed on; bigger ones are replaced by a notice."""

_KINDS = ("stdio", "http", "sse", "sdk")


def _env_seconds(name: str, default: float) -> float:
    value = os.environ.get(name)
    try:
        return float(value) / 1000 if value else default
    except ValueError:
        return default


@dataclass(frozen=True)
class ServerConfig:
    """One server's checked configuration."""

    key: str
    kind: str
    raw: Mapping[str, Any] = field(repr=False)
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    instance: Any = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    startup_wait: float = DEFAULT_STARTUP_WAIT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    tool_timeouts: Mapping[str, float] = field(default_factory=dict)
    max_tool_timeout: float = DEFAULT_MAX_TOOL_TIMEOUT
    reconnect: RetryPolicy | None = None
    max_binary_bytes: int = DEFAULT_MAX_BINARY_BYTES

    def timeout_for(self, tool: str) -> float:
        """The per-call timeout of ``tool`` (its ``tool_timeouts`` entry, or the server's)."""
        return self.tool_timeouts.get(tool, self.tool_timeout)

    def for_status(self) -> dict[str, Any]:
        """The config as `get_mcp_status` shows it: header values and environment values redacted."""
        if self.kind == "sdk":
            return {"type": "sdk", "name": str(self.raw.get("name", self.key))}
        if self.kind == "stdio":
            shown: dict[str, Any] = {"type": "stdio", "command": self.command, "args": list(self.args)}
            if self.env:
                shown["env"] = dict.fromkeys(self.env, "[redacted]")
            return shown
        shown = {"type": self.kind, "url": self.url}
        if self.headers:
            shown["headers"] = dict.fromkeys(self.headers, "[redacted]")
        return shown


def _number(raw: Mapping[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{key!r} must be a positive number of seconds, not {value!r}")
    return float(value)


def _strings(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{what!r} must map names to strings")
    return {str(k): v for k, v in value.items()}


def _reconnect(value: Any, retry: Any) -> RetryPolicy | None:
    if value is None or value is False:
        return None
    if value is True:
        return resolve_retry(retry)
    if isinstance(value, int) and value > 0:
        return StaminaRetry(attempts=value)
    if isinstance(value, RetryPolicy):
        return value
    raise ConfigError(f"'reconnect' must be true, a number of attempts or a retry policy, not {value!r}")


def _transport(key: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    kind = raw.get("type", "stdio")
    if kind not in _KINDS:
        raise ConfigError(f"unknown MCP server type {kind!r}; expected stdio, sse, http or sdk")
    if kind == "stdio":
        args = raw.get("args", [])
        if not isinstance(raw.get("command"), str) or not raw["command"]:
            raise ConfigError("a stdio server needs a 'command' string")
        if not isinstance(args, list | tuple) or not all(isinstance(a, str) for a in args):
            raise ConfigError("'args' must be a list of strings")
        env = _strings(raw.get("env"), "env") if raw.get("env") is not None else None
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str | Path):
            raise ConfigError("'cwd' must be a path")
        return {"command": raw["command"], "args": tuple(args), "env": env, "cwd": cwd and str(cwd)}
    if kind in ("http", "sse"):
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"an {kind} server needs a 'url' string (http:// or https://)")
        return {"url": url, "headers": _strings(raw.get("headers"), "headers")}
    instance = raw.get("instance")
    server = getattr(instance, "_mcp_server", instance)  # a FastMCP instance wraps a low-level server
    if not hasattr(instance, "tools") and not (
        hasattr(server, "run") and hasattr(server, "create_initialization_options")
    ):
        raise ConfigError("an sdk server needs an 'instance' from create_sdk_mcp_server() or an mcp Server")
    return {"instance": instance}


def parse_config(key: str, raw: Any, *, retry: Any = None) -> ServerConfig:
    """Check one server's configuration.

    Raises:
        ConfigError: Naming what is wrong with it.
    """
    if not isinstance(raw, Mapping):
        raise ConfigError(f"a server config must be a dict, not {type(raw).__name__}")
    timeouts = raw.get("tool_timeouts") or {}
    if not isinstance(timeouts, Mapping):
        raise ConfigError("'tool_timeouts' must map tool names to seconds")
    limit = raw.get("max_binary_bytes", DEFAULT_MAX_BINARY_BYTES)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ConfigError(f"'max_binary_bytes' must be a whole number of bytes, not {limit!r}")
    timeout = _number(raw, "timeout", _env_seconds("MCP_TIMEOUT", DEFAULT_TIMEOUT))
    return ServerConfig(
        key=key,
        kind=str(raw.get("type", "stdio")),
        raw=raw,
        timeout=timeout,
        # a server whose own timeout is shorter is waited for until that timeout has settled it
        startup_wait=_number(raw, "startup_wait", min(DEFAULT_STARTUP_WAIT, timeout + 1.0)),
        tool_timeout=_number(raw, "tool_timeout", _env_seconds("MCP_TOOL_TIMEOUT", DEFAULT_TOOL_TIMEOUT)),
        tool_timeouts={str(k): _number(timeouts, k, 1.0) for k in timeouts},
        max_tool_timeout=_number(raw, "max_tool_timeout", DEFAULT_MAX_TOOL_TIMEOUT),
        reconnect=_reconnect(raw.get("reconnect"), retry),
        max_binary_bytes=limit,
        **_transport(key, raw),
    )


def load_servers(spec: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """The ``mcp_servers`` option as a dict: given directly, or a JSON file (``{"mcpServers": {...}}``)."""
    if isinstance(spec, Mapping):
        return dict(spec)
    try:
        data = json.loads(Path(spec).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"mcp_servers: cannot read {spec!s}: {exc}") from exc
    servers = data.get("mcpServers", data) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"mcp_servers: {spec!s} holds no server mapping")
    return servers
