"""MCP content → tool-result blocks (Anthropic-shaped, as the core carries them), within size limits.

Text stays text, a text blob resource is decoded to text, an image becomes an image block when its type is
one every provider takes (PNG, JPEG, GIF, WebP) and it is within the size limit; anything else (a bigger
image, audio, another binary blob) becomes a one-line notice saying what it was and why it is not shown.
A ``resource_link`` keeps its URI, name, title, description, type and size, and says how to read it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

from ._config import DEFAULT_MAX_BINARY_BYTES

__all__ = ["to_block", "to_blocks"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml")
_TEXT_SUFFIXES = ("+json", "+xml", "+yaml")


def _as_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json", by_alias=True, exclude_none=True))
    return {"type": "text", "text": str(item)}


def _size(data: str) -> int:
    """The decoded size of base64 ``data`` (without decoding it)."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def _human(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


def _is_text(mime: str) -> bool:
    mime = mime.split(";")[0].strip().lower()
    return mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(_TEXT_SUFFIXES)


def _decoded_text(blob: str, mime: str | None) -> str | None:
    """A blob's text when it is text: a text type, or no type and valid UTF-8 without NUL bytes."""
    if mime and not _is_text(mime):
        return None
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace") if mime else None
    return None if not mime and "\x00" in text else text


def _binary(kind: str, data: str, mime: str, limit: int, where: str = "") -> dict[str, Any]:
    """An image block, or a notice when the data cannot or may not be passed on."""
    size = _size(data)
    label = f"[{kind}{where} ({mime or 'unknown type'}, {_human(size)})"
    if kind == "image" and mime in IMAGE_TYPES and size <= limit:
        return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
    if kind == "image" and mime in IMAGE_TYPES:
        why = f"over the {_human(limit)} limit (max_binary_bytes)"
    elif kind == "image":
        why = "a type providers do not accept"
    else:
        why = "binary content cannot be shown to the model"
    return {"type": "text", "text": f"{label} not shown: {why}]"}


def _resource(resource: dict[str, Any], limit: int) -> dict[str, Any]:
    uri = str(resource.get("uri", ""))
    mime = resource.get("mimeType") or resource.get("mime_type")
    if "text" in resource:
        return {"type": "text", "text": f"[resource {uri}]\n{resource['text']}"}
    blob = str(resource.get("blob", ""))
    text = _decoded_text(blob, mime)
    if text is not None:
        return {"type": "text", "text": f"[resource {uri}]\n{text}"}
    kind = "image" if mime and mime.startswith("image/") else "binary resource"
    return _binary(kind, blob, mime or "", limit, f" {uri}")


def _link(block: dict[str, Any], server: str | None) -> dict[str, Any]:
    lines = [f"[resource link {block.get('uri', '')}]"]
    for key in ("name", "title", "description", "mimeType", "size"):
        if block.get(key) not in (None, ""):
            lines.append(f"{key}: {block[key]}")
    if server:
        uri = json.dumps(str(block.get("uri", "")))
        lines.append(f'Read it with ReadMcpResourceTool(server="{server}", uri={uri}).')
    return {"type": "text", "text": "\n".join(lines)}


def to_block(
    item: Any, *, limit: int = DEFAULT_MAX_BINARY_BYTES, server: str | None = None
) -> dict[str, Any]:
    """One MCP content item (a model or its dict, MCP or Anthropic shaped) as a tool-result block."""
    block = _as_dict(item)
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image" and isinstance(block.get("source"), dict):  # already Anthropic-shaped
        source = block["source"]
        return _binary("image", str(source.get("data", "")), str(source.get("media_type", "")), limit)
    if kind in ("image", "audio"):
        mime = str(block.get("mimeType") or block.get("mime_type") or "")
        return _binary(kind, str(block.get("data", "")), mime, limit)
    if kind == "resource":
        return _resource(_as_dict(block.get("resource", {})), limit)
    if kind == "resource_link":
        return _link(block, server)
    return {"type": "text", "text": json.dumps(block, ensure_ascii=False, default=str)}


def to_blocks(
    content: Iterable[Any],
    structured: Any = None,
    *,
    limit: int = DEFAULT_MAX_BINARY_BYTES,
    server: str | None = None,
) -> list[dict[str, Any]]:
    """Every content item as a block; structured content becomes JSON text when there is nothing else."""
    blocks = [to_block(item, limit=limit, server=server) for item in content]
    if not blocks and structured is not None:
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False, default=str)})
    return blocks
