"""MCP tool results → openagent tool-result content (Anthropic-shaped blocks, as the core carries them)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["to_block", "to_blocks"]


def _as_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json", by_alias=True, exclude_none=True))
    return {"type": "text", "text": str(item)}


def _resource(resource: dict[str, Any]) -> dict[str, Any]:
    uri = resource.get("uri", "")
    mime = resource.get("mimeType") or resource.get("mime_type")
    if "text" in resource:
        return {"type": "text", "text": f"[resource {uri}]\n{resource['text']}"}
    blob = resource.get("blob", "")
    if mime and mime.startswith("image/"):
        return _image(blob, mime)
    # Binary resources other than images have no tool-result block every provider accepts: describe them.
    return {
        "type": "text",
        "text": f"[binary resource {uri} ({mime or 'unknown type'}, {len(blob)} base64 chars)]",
    }


def _image(data: str, mime: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def to_block(item: Any) -> dict[str, Any]:
    """One MCP content item (a model or its dict, MCP or Anthropic shaped) as a tool-result block."""
    block = _as_dict(item)
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image" and "source" not in block:
        return _image(
            str(block.get("data", "")), str(block.get("mimeType") or block.get("mime_type") or "image/png")
        )
    if kind == "image":
        return block
    if kind == "resource":
        return _resource(_as_dict(block.get("resource", {})))
    if kind == "resource_link":
        return {"type": "text", "text": f"[resource link {block.get('uri', '')}: {block.get('name', '')}]"}
    if kind == "audio":
        mime = block.get("mimeType", "audio")
        return {"type": "text", "text": f"[audio ({mime}), {len(str(block.get('data', '')))} base64 chars]"}
    return {"type": "text", "text": json.dumps(block, ensure_ascii=False, default=str)}


def to_blocks(content: Iterable[Any], structured: Any = None) -> list[dict[str, Any]]:
    """Every content item as a block; structured content becomes JSON text when there is nothing else."""
    blocks = [to_block(item) for item in content]
    if not blocks and structured is not None:
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False, default=str)})
    return blocks
