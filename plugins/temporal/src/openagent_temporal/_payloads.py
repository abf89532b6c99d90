"""Large tool results stay out of the workflow history: kept in the session store, referenced by the call.

A result whose content is larger than the agent's ``inline_limit`` is written to the run's session store
under the subkey ``openagent-results/<tool_use_id>`` (the store protocol's ``subpath``, as subagent
transcripts are), and the result the workflow holds says only where it is. The activities that hand the
history on — the model turn, the session write, compaction — put the content back first, so the model and
the transcript see exactly what `query()` would have sent and written.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from openagent.plugin import SessionStore, ToolCallResult

__all__ = ["expand_messages", "stash"]

KIND = "openagent_stored_result"
"""The content block that stands for a stored result: ``{"type": KIND, "subpath": …, "bytes": …}``."""


def _key(session_key: Mapping[str, str], subpath: str) -> dict[str, str]:
    return {
        "project_key": session_key["project_key"],
        "session_id": session_key["session_id"],
        "subpath": subpath,
    }


async def stash(
    store: SessionStore | None, session_key: Mapping[str, str] | None, done: ToolCallResult, limit: int
) -> ToolCallResult:
    """``done`` with its content in the store when it is larger than ``limit`` bytes of JSON."""
    block = done.result
    payload = {"content": block.content, "structured_content": block.structured_content}
    size = len(json.dumps(payload, default=str))
    if size <= limit or store is None or session_key is None:
        return done
    subpath = f"{_PREFIX}{block.tool_use_id}"
    entry = {"type": "tool_result_content", "uuid": f"result-{block.tool_use_id}", **payload}
    await store.append(_key(session_key, subpath), [entry])  # type: ignore[arg-type]
    stored = [{"type": KIND, "subpath": subpath, "bytes": size}]
    return dataclasses.replace(
        done, result=block.model_copy(update={"content": stored, "structured_content": None})
    )


_PREFIX = "openagent-results/"


def _reference(block: Any) -> str | None:
    """The subkey a tool result block stands for (``""`` for a reference that is not one of ours)."""
    if not isinstance(block, dict) or block.get("type") != "tool_result":
        return None
    content = block.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        if content[0].get("type") == KIND:
            subpath = content[0].get("subpath")
            valid = isinstance(subpath, str) and subpath == f"{_PREFIX}{block.get('tool_use_id')}"
            return subpath if valid else ""  # type: ignore[return-value]
    return None


async def expand_messages(
    store: SessionStore | None, session_key: Mapping[str, str] | None, messages: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Messages (JSON data) with every stored result put back (a missing one is said to be missing)."""
    if store is None or session_key is None:
        return messages
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(_reference(block) is not None for block in content):
            blocks = []
            for block in content:
                subpath = _reference(block)
                if subpath:
                    block = {**block, **await _load(store, session_key, subpath)}
                elif subpath == "":  # a reference this run did not make (a hand-edited history): not followed
                    block = {**block, "content": "Error: not a stored result of this call", "is_error": True}
                blocks.append(block)
            message = {**message, "content": blocks}
        out.append(message)
    return out


async def _load(store: SessionStore, session_key: Mapping[str, str], subpath: str) -> dict[str, Any]:
    entries = await store.load(_key(session_key, subpath))  # type: ignore[arg-type]
    for entry in entries or []:
        if entry.get("type") == "tool_result_content":
            return {"content": entry.get("content"), "structured_content": entry.get("structured_content")}
    return {
        "content": f"Error: the stored tool result {subpath!r} is missing from the session store",
        "is_error": True,
    }
