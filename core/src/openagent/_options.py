"""`AgentOptions`: everything one run needs, in the Claude Agent SDK's names; frozen (`replace` copies).

`AgentDefinition` (a subagent the ``Task`` tool can run) lives here too: it is configuration, read by the
settings loader and the subagent runner alike.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from dataclasses import replace as _replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ._errors import ConfigError, SessionError, masked
from ._keys import check_session_id

if TYPE_CHECKING:
    from ._compaction import Compaction
    from ._hooks import HookMatcher
    from ._models import ModelProfile, Provider
    from ._permissions import CanUseTool, PermissionMode
    from ._retry import RetryPolicy
    from ._sessions import SessionStore
    from ._tools import Tool

__all__ = ["AgentDefinition", "AgentOptions", "SandboxNetworkConfig", "SandboxSettings"]


class SandboxNetworkConfig(TypedDict, total=False):
    """The sandbox's network, with the Claude Agent SDK's keys (docs/security.md says which take effect)."""

    allowedDomains: list[str]
    deniedDomains: list[str]
    allowManagedDomainsOnly: bool
    allowUnixSockets: list[str]
    allowAllUnixSockets: bool
    allowLocalBinding: bool
    allowMachLookup: list[str]
    httpProxyPort: int
    socksProxyPort: int


class SandboxSettings(TypedDict, total=False):
    """How Bash commands are sandboxed, with the Claude Agent SDK's keys.

    ``enabled`` defaults to false, ``autoAllowBashIfSandboxed`` and ``allowUnsandboxedCommands`` to true.
    """

    enabled: bool
    autoAllowBashIfSandboxed: bool
    excludedCommands: list[str]
    allowUnsandboxedCommands: bool
    network: SandboxNetworkConfig
    ignoreViolations: dict[str, list[str]]
    enableWeakerNestedSandbox: bool


@dataclass(kw_only=True, frozen=True)
class AgentOptions:
    """Options for `query()`, `run()` and `Client`. Unknown keyword arguments raise `TypeError`.

    Frozen: a run never changes the options it was given. `replace` makes a changed copy.
    """

    model: str | Provider | None = None
    """``"provider:model"`` (``"ollama:qwen3:8b"``), or a provider instance; default ``$OPENAGENT_MODEL``."""
    fallback_model: str | Provider | None = None
    """Used for the rest of the run when a model request fails after its retries (same forms as ``model``)."""
    base_url: str | None = None
    """Overrides the provider's default endpoint; default ``$OPENAGENT_BASE_URL``."""
    model_profile: ModelProfile | Mapping[str, Any] | None = None
    """What the model can do, where the endpoint's data or the server says otherwise or nothing (context
    window, max output tokens, prices …): a `ModelProfile`, or a dict of its fields. Set fields win."""
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
    thinking: Mapping[str, Any] | None = None
    """Reasoning: ``{"type": "enabled", "budget_tokens": N}``, ``{"type": "adaptive"}`` or
    ``{"type": "disabled"}``; each wire format maps it to its endpoint's parameter."""
    effort: str | None = None
    """Reasoning effort, ``low`` … ``max`` (mapped per provider: ``reasoning_effort``, ``think`` …)."""
    betas: Sequence[str] = ()
    """Anthropic beta features (the ``anthropic-beta`` header); other providers ignore them."""
    user: str | None = None
    """An end-user id sent with requests where the API has a field for it (abuse monitoring)."""
    task_budget: int | None = None
    """Output tokens the whole task should fit in; the model is told how many remain before each turn."""
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
    include_hook_events: bool = False
    """Yield a `HookEventMessage` before and after every hook callback runs."""
    forward_subagent_text: bool = True
    """Forward subagents' text and thinking blocks; ``False`` forwards only their tool calls and results."""
    resume: str | None = None
    continue_conversation: bool = False
    fork_session: bool = False
    resume_session_at: str | None = None
    """With ``resume``: start from the session only up to this message ``uuid`` (as a fork)."""
    session_load_timeout: float | None = 60.0
    """Seconds a session store may take to load a session when resuming."""
    enable_file_checkpointing: bool = False
    """Save files before the edit tools change them, so `Client.rewind_files` can restore them."""
    session_id: str | None = None
    session_store: SessionStore | str | None = None
    """A store instance, a URL handled by a store plugin (``redis://…``), or ``None`` for JSONL files."""
    persist_session: bool = True
    """``False`` keeps the transcript in memory only."""
    cwd: str | Path | None = None
    add_dirs: Sequence[str | Path] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    sandbox: SandboxSettings | bool | None = None
    """Run Bash commands in an OS sandbox (bubblewrap on Linux; needs ``openagent[tools]``): ``True`` or
    `SandboxSettings`. Where it cannot run, Bash says so and runs under the permission rules alone."""
    max_budget_usd: float | None = None
    output_format: Mapping[str, Any] | type | None = None
    """``{"type": "json_schema", "schema": {...}}`` or a pydantic model type; the validated answer is
    `ResultMessage.structured_output` (a model instance when a type was given)."""
    compaction: Compaction | None = field(default_factory=lambda: _compaction())
    """When and how to compact a history that nears the context window; ``None``: never."""
    max_structured_output_retries: int = 2
    """How many times a final answer that does not match ``output_format`` is sent back for repair."""
    agents: Mapping[str, AgentDefinition | Mapping[str, Any] | Any] | None = None
    """Subagents the ``Task`` tool can run: name → `AgentDefinition` (or Claude's, or a dict)."""
    mcp_servers: Mapping[str, Any] | None = None
    """MCP servers in the Claude format (needs ``openagent[mcp]``)."""
    setting_sources: Sequence[str] = ()
    """Which project files to read: ``"user"``, ``"project"``, ``"local"`` (default: none; see
    `openagent._settings`)."""
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

    def replace(self, **changes: Any) -> AgentOptions:
        """A copy with ``changes`` applied (unknown names raise `TypeError`, as in the constructor)."""
        _check_names(changes)
        return _replace(self, **changes)

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


@dataclass
class AgentDefinition:
    """A subagent the ``Task`` tool can run (the Claude Agent SDK's fields)."""

    description: str
    """When to use this agent, for the model choosing one."""
    prompt: str
    """The agent's system prompt."""
    tools: Sequence[str] | None = None
    """Names of the parent's tools the agent may use; ``None`` means all of them."""
    model: str | Provider | None = None
    """``None`` or ``"inherit"``: the parent's model; else a ``"provider:model"`` string or a provider."""
    max_turns: int | None = None
    """The agent's own turn limit; ``None`` keeps the parent's."""
    disallowed_tools: Sequence[str] = ()
    """Tools removed from the agent's set."""

    def __post_init__(self) -> None:
        for name in ("tools", "disallowed_tools"):  # a string would be read per character: fail open
            if isinstance(getattr(self, name), str):
                raise ConfigError(f"AgentDefinition.{name} must be a list of tool names, not a string")


def _compaction() -> Compaction:
    from ._compaction import Compaction

    return Compaction()


_FIELDS = frozenset(f.name for f in fields(AgentOptions))
_dataclass_init = AgentOptions.__init__


def _check_names(kwargs: Mapping[str, Any]) -> None:
    unknown = sorted(set(kwargs) - _FIELDS)
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, _FIELDS, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise TypeError(f"AgentOptions got unknown option(s): {', '.join(hints)}")


def _checked_init(self: AgentOptions, **kwargs: Any) -> None:
    _check_names(kwargs)
    _dataclass_init(self, **kwargs)
    _check(self)


_LISTS = (
    "tools", "allowed_tools", "disallowed_tools", "ask_tools", "stop", "betas", "add_dirs", "setting_sources",
)  # fmt: skip


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
        for name in ("session_id", "resume"):
            if getattr(options, name) is not None:
                check_session_id(getattr(options, name), name)
    except SessionError as exc:
        raise ConfigError(str(exc)) from None


AgentOptions.__init__ = _checked_init  # type: ignore[method-assign]
