"""Hosted tools of the Responses API: tools OpenAI's servers run themselves, never this process.

Each function returns the tool's request entry; pass them in ``extra_body={"tools": [...]}`` (they are added
after the request's own function tools)::

    AgentOptions(model="openai:gpt-5", extra_body={"tools": [web_search(), file_search(["vs_123"])]})

Their calls and results come back as `RawBlock` blocks (``provider="openai-responses"``) in the assistant
message, in the order the server produced them, and are sent back verbatim on the next turn. The agent loop
never executes them and never asks permission for them: the server has already run them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from openagent.errors import ConfigError

__all__ = ["code_interpreter", "file_search", "mcp", "web_search"]


def web_search(
    *,
    context_size: Literal["low", "medium", "high"] | None = None,
    allowed_domains: Sequence[str] = (),
    user_location: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """OpenAI's web search (``{"type": "web_search"}``): the model searches and cites what it read.

    Args:
        context_size: How much of the results the model sees (``search_context_size``).
        allowed_domains: Only search these domains (at most 100).
        user_location: ``{"type": "approximate", "country": "GB", "city": "London", …}``.
    """
    tool: dict[str, Any] = {"type": "web_search"}
    if context_size is not None:
        tool["search_context_size"] = context_size
    if allowed_domains:
        tool["filters"] = {"allowed_domains": [str(d) for d in allowed_domains]}
    if user_location is not None:
        tool["user_location"] = {"type": "approximate", **dict(user_location)}
    return tool


def file_search(
    vector_store_ids: Sequence[str], *, max_num_results: int | None = None, filters: Any = None
) -> dict[str, Any]:
    """Search the files of OpenAI vector stores (``{"type": "file_search"}``).

    Args:
        vector_store_ids: The vector stores to search (at least one).
        max_num_results: At most this many results (1 to 50).
        filters: An attribute filter, as the API takes it.

    Raises:
        ConfigError: no vector store id was given.
    """
    ids = [vector_store_ids] if isinstance(vector_store_ids, str) else list(vector_store_ids)
    if not ids or not all(isinstance(i, str) and i for i in ids):
        raise ConfigError("file_search needs the ids of one or more vector stores")
    tool: dict[str, Any] = {"type": "file_search", "vector_store_ids": ids}
    if max_num_results is not None:
        tool["max_num_results"] = max_num_results
    if filters is not None:
        tool["filters"] = filters
    return tool


def code_interpreter(*, container: str | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Python run in an OpenAI-hosted container (``{"type": "code_interpreter"}``).

    Args:
        container: A container id, or ``{"type": "auto", "file_ids": [...]}``; default: a new container.
    """
    spec = {"type": "auto"} if container is None else container
    return {"type": "code_interpreter", "container": spec if isinstance(spec, str) else dict(spec)}


def mcp(
    server_label: str,
    server_url: str,
    *,
    allowed_tools: Sequence[str] = (),
    headers: Mapping[str, str] | None = None,
    require_approval: Literal["never", "always"] = "never",
    description: str | None = None,
) -> dict[str, Any]:
    """A remote MCP server that OpenAI's servers call (``{"type": "mcp"}``), unlike the local MCP servers of
    ``AgentOptions.mcp_servers``, which this process connects to.

    Args:
        server_label: A name for the server, unique within the request.
        server_url: The server's URL, reachable from OpenAI's side.
        allowed_tools: Only these of its tools (default: all).
        headers: Sent to the server with every call (``Authorization`` …); they are part of the request
            body: keep them out of logs.
        require_approval: ``never`` (the default). With ``always`` the turn ends with an
            ``mcp_approval_request`` block, which this SDK does not answer.
        description: What the server is for, shown to the model.
    """  # noqa: D205
    if not server_label or not server_url:
        raise ConfigError("an MCP tool needs a server_label and a server_url")
    tool: dict[str, Any] = {
        "type": "mcp",
        "server_label": server_label,
        "server_url": server_url,
        "require_approval": require_approval,
    }
    if allowed_tools:
        tool["allowed_tools"] = [str(t) for t in allowed_tools]
    if headers:
        tool["headers"] = dict(headers)
    if description:
        tool["server_description"] = description
    return tool
