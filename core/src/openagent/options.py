"""`AgentOptions`: everything one run needs, with the Claude Agent SDK's field names."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, SessionError, masked

if TYPE_CHECKING:
    from .compaction import Compaction
    from .hooks import HookMatcher
    from .models import Provider
    from .permissions import CanUseTool, PermissionMode
    from .retry import RetryPolicy
    from .sessions import SessionStore
    from .tools import Tool

__all__ = ["AgentOptions"]


@dataclass(kw_only=True)
class AgentOptions:
    """Options for `query()`, `run()` and `Client`. Unknown keyword arguments raise `TypeError`."""

    model: str | Provider | None = None
    """``"provider:model"`` (``"ollama:qwen3:8b"``), or a provider instance; default ``$OPENAGENT_MODEL``."""
    base_url: str | None = None
    """Overrides the provider's default endpoint; default ``$OPENAGENT_BASE_URL``."""
    api_key: str | None = None
    """Overrides the provider's key; default ``$OPENAGENT_API_KEY``, then the vendor's variable."""
    system_prompt: str | None = None
    tools: Sequence[Tool | str | Mapping[str, Any] | Callable[..., Any]] = ()
    """`Tool` objects, plain functions, names of installed tools (``"Read"``), or bare schemas
    (``{"name", "description", "input_schema"}``: client-side, answered with `Client.add_tool_result`)."""
    allowed_tools: Sequence[str] = ()
    """Permission rules that allow without asking (``"Read"``, ``"Bash(git status:*)"``)."""
    disallowed_tools: Sequence[str] = ()
    """Permission rules that deny; the model is told."""
    ask_tools: Sequence[str] = ()
    """Permission rules that always go to ``can_use_tool`` (Claude's ``ask`` rules); denied without one."""
    max_turns: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: Sequence[str] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    """``None``/``True``: several calls in one turn run concurrently; ``False``: one after another."""
    timeout: float | None = 600.0
    """Seconds for one model request (connect and each read)."""
    retry: RetryPolicy | str | None = None
    """A policy, the name of a registered one, or ``None`` for the default (stamina backoff)."""
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None
    can_use_tool: CanUseTool | None = None
    permission_mode: PermissionMode = "default"
    include_partial_messages: bool = False
    resume: str | None = None
    continue_conversation: bool = False
    fork_session: bool = False
    session_id: str | None = None
    session_store: SessionStore | str | None = None
    """A store instance, a URL handled by a store plugin (``redis://…``), or ``None`` for JSONL files."""
    persist_session: bool = True
    """``False`` keeps the transcript in memory only."""
    cwd: str | Path | None = None
    add_dirs: Sequence[str | Path] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    max_budget_usd: float | None = None
    output_format: Mapping[str, Any] | type | None = None
    """``{"type": "json_schema", "schema": {...}}`` or a pydantic model type; the validated answer is
    `ResultMessage.structured_output` (a model instance when a type was given)."""
    compaction: Compaction | None = field(default_factory=lambda: _compaction())
    """When and how to compact a history that nears the context window; ``None``: never."""
    max_structured_output_retries: int = 2
    """How many times a final answer that does not match ``output_format`` is sent back for repair."""
    agents: Mapping[str, Any] | None = None
    """Subagent definitions for the ``Task`` tool (subagents issue)."""
    mcp_servers: Mapping[str, Any] | None = None
    """MCP servers in the Claude format (needs ``openagent[mcp]``)."""
    setting_sources: Sequence[str] = ()
    """Which project files to read: ``"user"``, ``"project"``, ``"local"`` (default: none; see
    `openagent.settings`)."""
    trust_project: bool | str = False
    """Let the project's settings files (``setting_sources``) change where requests go, widen permissions
    or start processes: ``permissions.allow``/``defaultMode``/``additionalDirectories``, ``env``, the MCP
    servers of ``.mcp.json``, subagent models naming a provider. ``True``, or a `settings.project_digest`
    (trusted only while the files are unchanged); otherwise they are ignored and reported."""
    skills: Sequence[str] | str = "all"
    """Which of the skills found in the setting sources the model may load (``"all"`` or names)."""
    on_message: Callable[[Any], Any] | None = None
    """Called (sync or async) with every message the run yields; exceptions are logged, not raised."""
    extra_body: Mapping[str, Any] | None = None
    """Merged verbatim into every request body."""
    metadata: Mapping[str, Any] | None = None

    def __repr__(self) -> str:
        """Every field, with keys, tokens and credentials in URLs masked (options end up in logs)."""
        shown = ", ".join(f"{f.name}={masked(getattr(self, f.name), f.name)!r}" for f in fields(self))
        return f"AgentOptions({shown})"

    def resolved_model(self) -> str | Provider:
        """The model to use: the option, else ``$OPENAGENT_MODEL``; `ConfigError` when neither is set."""
        model = self.model or os.environ.get("OPENAGENT_MODEL")
        if not model:
            raise ConfigError(
                "no model: pass AgentOptions(model='provider:model') or set OPENAGENT_MODEL "
                "(e.g. 'ollama:qwen3', 'openai:gpt-4.1-mini', 'test:echo')"
            )
        return model

    def resolved_cwd(self) -> Path:
        """The working directory of the run (the process's when unset)."""
        return Path(self.cwd) if self.cwd is not None else Path.cwd()


def _compaction() -> Compaction:
    from .compaction import Compaction

    return Compaction()


_FIELDS = frozenset(f.name for f in fields(AgentOptions))
_dataclass_init = AgentOptions.__init__


def _checked_init(self: AgentOptions, **kwargs: Any) -> None:
    unknown = sorted(set(kwargs) - _FIELDS)
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, _FIELDS, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise TypeError(f"AgentOptions got unknown option(s): {', '.join(hints)}")
    _dataclass_init(self, **kwargs)
    _check(self)


_LISTS = ("tools", "allowed_tools", "disallowed_tools", "ask_tools", "stop", "add_dirs", "setting_sources")


def _check(options: AgentOptions) -> None:
    """Catch values that would be read wrongly: a string where a list is documented is iterated per
    character (``add_dirs="/x"`` would grant ``/``), a session id that is a path.
    """  # noqa: D205
    for name in (*_LISTS, *(("skills",) if options.skills != "all" else ())):
        value = getattr(options, name)
        if isinstance(value, str | bytes | os.PathLike):
            raise ConfigError(
                f"{name} must be a list, not the single value {value!r}: write {name}=[{value!r}]"
            )
    try:
        from .sessions import check_session_id

        for name in ("session_id", "resume"):
            if getattr(options, name) is not None:
                check_session_id(getattr(options, name), name)
    except SessionError as exc:
        raise ConfigError(str(exc)) from None


AgentOptions.__init__ = _checked_init  # type: ignore[method-assign]
