"""Tools: `Tool`, the `@tool` decorator, JSON schema from type hints, argument validation and execution.

A plain function becomes a tool with ``@tool``: its name is the function name, its description the
docstring, its JSON schema comes from the type hints (through pydantic), and parameter descriptions come from
the docstring's ``Args:`` section. The Claude Agent SDK form ``@tool("name", "description", {"a": float})``
on ``async def handler(args) -> {"content": [...]}`` works too. A tool without a handler is client-side.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast, get_type_hints, overload, runtime_checkable

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ._errors import ConfigError, ToolError
from ._models import ToolSpec
from ._types import ToolResultBlock

if TYPE_CHECKING:
    from ._permissions import PathPolicy
    from ._policy import Access

__all__ = [
    "SdkMcpServer",
    "Tool",
    "ToolContext",
    "Toolset",
    "coerce_tool",
    "create_sdk_mcp_server",
    "tool",
]

logger = logging.getLogger("openagent.tools")

DEFAULT_MAX_RESULT_CHARS = 100_000


@dataclass(slots=True)
class ToolContext:
    """What a tool may ask for by annotating one parameter with this type (it is not part of the schema).

    A narrow view of the run that calls it: never the conversation itself.
    """

    tool_use_id: str
    session_id: str
    cwd: str
    options: Any = None
    """The run's `AgentOptions`."""
    emit: Callable[[Any], None] | None = None
    """Hand a `Message` to the run (a subagent's messages); the loop yields it before the tool's result."""
    depth: int = 0
    """How many subagents deep this call is (0 for the top-level agent)."""
    tools: Mapping[str, Tool] | None = None
    """The calling conversation's tools (subagents inherit them without reconnecting MCP servers)."""
    hooks: Mapping[str, Sequence[Any]] | None = None
    """The calling run's hooks, plugins' and options' merged (subagents inherit them)."""
    permission_mode: str | None = None
    """The permission mode in force for this call (``None``: the options')."""
    policy: PathPolicy | None = None
    """The run's path and web rules, for the paths a tool actually opens (``PathPolicy.of(context)``)."""
    tasks: dict[str, Any] | None = None
    """The calling conversation's running subagents by task id (``Client.stop_task`` stops them)."""
    notify: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    """Run the conversation's ``Notification`` hooks with these fields added to the call's (a long call's
    progress: ``notification_type="tool_progress"``); ``None`` when no such hook is registered."""


@runtime_checkable
class Toolset(Protocol):
    """Tools that live as long as a conversation, behind a connection (MCP servers, for example).

    Plugins make them from the options through the ``register_toolsets`` hook; the loop opens them when a
    conversation starts and closes them when it ends. A toolset whose tools come and go (MCP servers that
    connect late, fail or are disabled) may also have ``attach(tools)``: it is given the conversation's
    tool table and keeps its own entries in it current, never replacing another tool.
    """

    async def open(self) -> list[Tool]:
        """Connect, and return the tools now available (failures are reported by `describe`, not raised)."""
        ...

    async def aclose(self) -> None:
        """Disconnect."""
        ...

    def describe(self) -> dict[str, Any]:
        """What to add to ``SystemMessage(subtype="init").data`` (e.g. ``{"mcp_servers": [...]}``)."""
        ...


@dataclass(eq=False)
class Tool:
    """A tool the model can call. Without a ``handler`` it is client-side: the caller answers it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Callable[..., Any] | None = None
    timeout: float | None = None
    """Seconds before the call is abandoned with an error result; ``None`` means no limit."""
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    is_read_only: bool = False
    """The tool changes nothing (plan mode and hooks may rely on it)."""
    requires_permission: bool = False
    """Denied unless a rule, a mode or ``can_use_tool`` allows it (built-in Write, Edit, Bash …)."""
    arguments_model: type[BaseModel] | None = None
    """Validates arguments before the call; ``None`` passes the JSON object through unchecked."""
    sandboxed: Callable[[Mapping[str, Any], Any], bool] | None = field(default=None, repr=False)
    """``(arguments, options) -> bool``: the call will run inside a working OS sandbox whose settings let it
    run without asking (the Bash tool under ``sandbox.autoAllowBashIfSandboxed``)."""
    style: str = "kwargs"
    """``kwargs``: the handler takes the arguments as keyword arguments; ``args``: one dict (Claude form)."""
    context_param: str | None = field(default=None, repr=False)
    paths: Mapping[str, Access] | None = None
    """Arguments that are paths and how the tool uses them (``{"file_path": "read"}``; ``write``, or
    ``edit`` for both), so path rules and protected places apply to it; ``None``: the usual names
    (``path``, ``file_path`` …) are taken as paths, ``{}``: the tool touches no file."""

    @property
    def spec(self) -> ToolSpec:
        """The tool as a model sees it."""
        return ToolSpec(self.name, self.description, self.input_schema)

    async def call(
        self, tool_use_id: str, arguments: dict[str, Any], context: ToolContext
    ) -> ToolResultBlock:
        """Validate ``arguments``, run the handler, and return its result (errors become error results)."""
        if self.handler is None:
            raise ToolError(f"tool {self.name!r} is client-side: answer it with Client.add_tool_result()")
        limit = self.max_result_chars
        try:
            kwargs = self._validate(arguments)
        except ValidationError as exc:
            return _error(tool_use_id, f"Invalid arguments for tool {self.name}: {_readable(exc)}", limit)
        except RecursionError:
            return _error(tool_use_id, f"Invalid arguments for tool {self.name}: nested too deeply", limit)
        if self.context_param:
            kwargs[self.context_param] = context
        try:
            with anyio.fail_after(self.timeout):
                value = await self._invoke(kwargs)
        except TimeoutError:
            return _error(tool_use_id, f"Tool {self.name} timed out after {self.timeout} s", limit)
        except ToolError as exc:
            return _error(tool_use_id, str(exc), limit)
        except Exception as exc:
            logger.warning("tool %s raised %s: %s", self.name, type(exc).__name__, exc, exc_info=True)
            return _error(tool_use_id, f"Tool {self.name} failed: {type(exc).__name__}: {exc}", limit)
        content, is_error = _content(value)
        structured = value.get("structured_content") if isinstance(value, dict) else None
        return ToolResultBlock(
            tool_use_id=tool_use_id,
            content=_truncate(content, self.max_result_chars),
            is_error=is_error,
            structured_content=structured,
        )

    def _validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.arguments_model is None:
            return {"args": arguments} if self.style == "args" else dict(arguments)
        model = self.arguments_model.model_validate(arguments)
        if self.style == "args":
            return {"args": model.model_dump(exclude_unset=True)}
        return {name: getattr(model, name) for name in type(model).model_fields}

    async def _invoke(self, kwargs: dict[str, Any]) -> Any:
        assert self.handler is not None
        if self.style == "args":
            result = self.handler(kwargs["args"])
        elif inspect.iscoroutinefunction(self.handler):
            result = self.handler(**kwargs)
        else:
            handler = self.handler
            return await anyio.to_thread.run_sync(lambda: handler(**kwargs), abandon_on_cancel=True)
        return await result if inspect.isawaitable(result) else result


def _error(tool_use_id: str, message: str, limit: int) -> ToolResultBlock:
    """An error result, cut at the tool's ``max_result_chars`` like any result (hostile input can be long)."""
    return ToolResultBlock(tool_use_id=tool_use_id, content=_truncate(message, limit), is_error=True)


def _readable(exc: ValidationError, shown: int = 200) -> str:
    """The validation errors in one line, each offending value cut to ``shown`` characters."""
    parts = []
    for err in exc.errors(include_url=False)[:20]:
        where = ".".join(str(p) for p in err["loc"])[:shown] or "arguments"
        got = repr(err["input"]) if err["type"] != "missing" else ""
        got = f" (got {got[:shown]}{'…' if len(got) > shown else ''})" if got else ""
        parts.append(f"{where}: {err['msg']}{got}")
    return "; ".join(parts)


_RESULT_KEYS = frozenset({"content", "is_error", "isError", "structured_content"})


def _content(value: Any) -> tuple[str | list[dict[str, Any]], bool | None]:
    """Turn a handler's return value into result content (Claude-form dicts keep their blocks)."""
    if isinstance(value, dict) and "content" in value and set(value) <= _RESULT_KEYS:
        is_error = value.get("is_error", value.get("isError"))
        content = value["content"]
        return (content if isinstance(content, str | list) else str(content)), (bool(is_error) or None)
    if value is None:
        return "", None
    if isinstance(value, str):
        return value, None
    if isinstance(value, BaseModel):
        return value.model_dump_json(), None
    try:
        return json.dumps(value, ensure_ascii=False, default=str), None
    except (TypeError, ValueError):
        return str(value), None


def _truncate(content: str | list[dict[str, Any]], limit: int) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        if len(content) <= limit:
            return content
        return content[:limit] + f"\n[truncated: {limit} of {len(content)} characters shown]"
    blocks = []
    for block in content:
        if block.get("type") == "text" and len(block.get("text", "")) > limit:
            block = {**block, "text": _truncate(block["text"], limit)}
        blocks.append(block)
    return blocks


# --- building tools -----------------------------------------------------------------------------------------

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s+(\*{0,2}\w+)\s*(\([^)]*\))?:\s*(.*)$")


def _docstring(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The description (text before the ``Args:`` section) and per-parameter docs of a Google docstring."""
    doc = inspect.getdoc(func) or ""
    lines = doc.splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            if line and not line[0].isspace():
                in_args = False
            elif match := _ARG_LINE.match(line):
                current = match.group(1).lstrip("*")
                params[current] = match.group(3).strip()
                continue
            elif current and line.strip():
                params[current] += " " + line.strip()
                continue
            else:
                continue
        if not in_args and not re.match(r"^\s*(Returns|Raises|Yields|Examples?):\s*$", line):
            description.append(line)
        elif not in_args:
            break
    return "\n".join(description).strip(), params


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def _from_function(
    func: Callable[..., Any], name: str | None, description: str | None, **settings: Any
) -> Tool:
    doc, param_docs = _docstring(func)
    hints = get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    context_param = None
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is param.empty else param.default
        doc_text = param_docs.get(param.name)
        fields[param.name] = (annotation, Field(default, description=doc_text) if doc_text else default)
    tool_name = name or func.__name__
    model = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return Tool(
        name=tool_name,
        description=description or doc or tool_name,
        input_schema=_schema(model),
        handler=func,
        arguments_model=model,
        context_param=context_param,
        **settings,
    )


def _from_claude_schema(
    name: str, description: str, schema: Any
) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """The Claude form's input schema: ``{"a": float}``, a full JSON schema, or a pydantic model."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return _schema(schema), schema
    if isinstance(schema, dict) and schema.get("type") == "object":
        return schema, None
    if isinstance(schema, dict):
        fields = {key: (annotation, ...) for key, annotation in schema.items()}
        model = create_model(f"{name}_arguments", **fields)  # type: ignore[call-overload]
        return _schema(model), cast(type[BaseModel], model)
    raise TypeError(f"tool {name!r}: input schema must be a dict or a pydantic model, not {type(schema)}")


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    name: str | None = None,
    description: str | None = None,
    input_schema: Any = None,
    /,
    *,
    timeout: float | None = None,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    is_read_only: bool = False,
    requires_permission: bool = False,
    paths: Mapping[str, Access] | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func_or_name: Callable[..., Any] | str | None = None,
    description: str | None = None,
    input_schema: Any = None,
    /,
    *,
    timeout: float | None = None,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    is_read_only: bool = False,
    requires_permission: bool = False,
    paths: Mapping[str, Access] | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a tool from a function.

    Use bare (``@tool``), with settings (``@tool(timeout=5)``), or in the Claude Agent SDK form
    ``@tool("add", "Add two numbers", {"a": float, "b": float})`` over ``async def handler(args)``.

    Args:
        func_or_name: The function (bare use) or the tool's name.
        description: What the tool does, for the model; defaults to the docstring.
        input_schema: Claude form only: ``{"param": type}``, a JSON schema, or a pydantic model.
        timeout: Seconds before the call is abandoned with an error result.
        max_result_chars: Longer results are truncated with a notice.
        is_read_only: The tool changes nothing.
        requires_permission: Deny it unless a rule, a mode or ``can_use_tool`` allows it.
        paths: Which arguments are paths it reads, writes or edits (see `Tool.paths`).
    """
    settings: dict[str, Any] = {
        "timeout": timeout,
        "max_result_chars": max_result_chars,
        "is_read_only": is_read_only,
        "requires_permission": requires_permission,
        "paths": paths,
    }
    if callable(func_or_name):
        return _from_function(func_or_name, None, None, **settings)
    name = func_or_name

    def decorate(func: Callable[..., Any]) -> Tool:
        if input_schema is None:
            return _from_function(func, name, description, **settings)
        assert name is not None, "the Claude form needs a name"
        schema, model = _from_claude_schema(name, description or "", input_schema)
        return Tool(
            name=name,
            description=description or _docstring(func)[0] or name,
            input_schema=schema,
            handler=func,
            arguments_model=model,
            style="args",
            **settings,
        )

    return decorate


def coerce_tool(item: Any) -> Tool:
    """A `Tool` from a tool, a function or a bare schema (names of installed tools are the registry's)."""
    if isinstance(item, Tool):
        return item
    if isinstance(item, Mapping):
        schema = item.get("input_schema") or item.get("parameters") or {"type": "object", "properties": {}}
        return Tool(name=item["name"], description=item.get("description", ""), input_schema=dict(schema))
    if callable(item) and not isinstance(item, str):
        made: Tool = tool(item)
        return made
    raise ConfigError(
        f"cannot use {item!r} as a tool: give a @tool function, a Tool, a name or a schema dict"
    )


@dataclass
class SdkMcpServer:
    """An in-process MCP server: a name, a version and its tools, whose handlers run in this process."""

    name: str
    version: str = "1.0.0"
    tools: list[Tool] = field(default_factory=list)


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: Sequence[Tool | Callable[..., Any]] | None = None
) -> dict[str, Any]:
    """An in-process MCP server config for ``AgentOptions.mcp_servers`` (the Claude Agent SDK's call).

    Its tools appear to the model as ``mcp__<key>__<tool>``, ``key`` being its key in ``mcp_servers``;
    their handlers are called directly, in the conversation's own event loop (needs ``openagent[mcp]``).

    Args:
        name: The server's name.
        version: The server's version (informational).
        tools: ``@tool``-decorated functions (either form) or plain functions.

    Returns:
        ``{"type": "sdk", "name": name, "instance": SdkMcpServer(...)}``.
    """
    made = [item if isinstance(item, Tool) else coerce_tool(item) for item in tools or ()]
    return {"type": "sdk", "name": name, "instance": SdkMcpServer(name, version, made)}
