"""The file tools: Read (text with line numbers, images as image blocks), Write and Edit."""

from __future__ import annotations

import base64
import io
import os
from itertools import islice
from typing import Annotated, Any

from pydantic import Field

from openagent import ToolContext, ToolError, tool

from ._paths import display, open_read, read_bytes, resolve, write_bytes

__all__ = ["edit", "read", "write"]

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}  # fmt: skip
_SNIFF = 8192


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head


READ_DESCRIPTION = f"""Read a file from the project.

- file_path is absolute or relative to the working directory; only files under it (and the extra
  directories the user granted) can be read.
- Text comes back with line numbers (`cat -n` style, starting at 1). By default up to {MAX_LINES} lines
  from the start; for longer files pass offset (first line to show, 1-based) and limit (how many lines).
- Lines longer than {MAX_LINE_CHARS} characters are cut.
- PNG, JPEG, GIF and WebP images come back as images. Other binary files are refused.
- Use Glob to find files and Grep to search their contents instead of reading many files."""


@tool(
    "Read",
    READ_DESCRIPTION,
    is_read_only=True,
    max_result_chars=MAX_OUTPUT_CHARS,
    paths={"file_path": "read"},
)
def read(
    file_path: str,
    context: ToolContext,
    offset: Annotated[int, Field(ge=1)] | None = None,
    limit: Annotated[int, Field(ge=1)] | None = None,
) -> Any:
    """Read a file.

    Args:
        file_path: The file to read (absolute, or relative to the working directory).
        context: Injected by the loop.
        offset: The 1-based line number to start reading from.
        limit: How many lines to read (default 2000).
    """
    path = resolve(file_path, context, what="file_path")
    if path.is_dir():
        raise ToolError(f"{file_path} is a directory, not a file; use Glob to list its files")
    if not path.exists():
        raise ToolError(f"{file_path} does not exist")
    if (media_type := IMAGE_TYPES.get(path.suffix.lower())) is not None:
        return _image(read_bytes(path, context, "Read", limit=MAX_IMAGE_BYTES + 1), path, media_type)
    with open_read(path, context, "Read") as handle:
        if _is_binary(handle.read(_SNIFF)):
            size = os.fstat(handle.fileno()).st_size
            raise ToolError(
                f"{file_path} is a binary file ({size} bytes); Read shows text files and images only"
            )
        handle.seek(0)
        text = io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline=None)
        return _numbered(text, file_path, offset or 1, limit or MAX_LINES)


def _image(data: bytes, path: Any, media_type: str) -> dict[str, Any]:
    if len(data) > MAX_IMAGE_BYTES:
        size = path.stat().st_size
        raise ToolError(f"{path.name} is {size} bytes; images over {MAX_IMAGE_BYTES} bytes cannot be read")
    encoded = base64.b64encode(data).decode("ascii")
    block = {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}
    return {"content": [block]}


def _numbered(text: io.TextIOWrapper, shown: str, offset: int, limit: int) -> str:
    out: list[str] = []
    lines = islice(text, offset - 1, None)
    for number, line in enumerate(islice(lines, limit), start=offset):
        line = line.rstrip("\n")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [line cut at {MAX_LINE_CHARS} characters]"
        out.append(f"{number:>6}\t{line}")
    more = next(lines, None) is not None
    if not out:
        if offset == 1:
            return f"({shown} is empty)"
        raise ToolError(f"offset {offset} is past the end of {shown}; it has fewer lines")
    if more:
        out.append(f"[more lines follow: call Read with offset={offset + len(out)} to continue]")
    return "\n".join(out)


WRITE_DESCRIPTION = """Write a file in the project, replacing it if it exists.

- file_path is absolute or relative to the working directory; parent directories are created.
- Prefer Edit for changing part of an existing file; use Write for new files or full rewrites.
- Only paths under the working directory (and the extra directories the user granted) can be written."""


@tool("Write", WRITE_DESCRIPTION, requires_permission=True, paths={"file_path": "write"})
def write(file_path: str, content: str, context: ToolContext) -> str:
    """Write a file.

    Args:
        file_path: The file to write (absolute, or relative to the working directory).
        content: The complete new content of the file.
        context: Injected by the loop.
    """
    path = resolve(file_path, context, what="file_path")
    if path.is_dir():
        raise ToolError(f"{file_path} is a directory; give the path of a file")
    data = content.encode("utf-8", errors="strict")
    verb = write_bytes(path, data, context, "Write")
    return f"{verb} {display(path, context)} ({len(data)} bytes)"


EDIT_DESCRIPTION = """Replace an exact string in a file.

- old_string must match the file's text exactly, whitespace and indentation included (copy it from Read's
  output without the line-number prefix).
- old_string must occur exactly once, unless replace_all is true; add surrounding lines to make it unique.
- With an empty old_string and a file that does not exist yet, the file is created with new_string.
- Only files under the working directory (and the extra directories the user granted) can be edited."""


@tool("Edit", EDIT_DESCRIPTION, requires_permission=True, paths={"file_path": "edit"})
def edit(
    file_path: str,
    old_string: str,
    new_string: str,
    context: ToolContext,
    replace_all: bool = False,
) -> str:
    """Edit a file by exact string replacement.

    Args:
        file_path: The file to change (absolute, or relative to the working directory).
        old_string: The exact text to replace.
        new_string: The text to put in its place (must differ from old_string).
        context: Injected by the loop.
        replace_all: Replace every occurrence instead of requiring exactly one.
    """
    path = resolve(file_path, context, what="file_path")
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same; there is nothing to change")
    if not path.exists():
        if old_string:
            raise ToolError(
                f"{file_path} does not exist (to create a file, use Write or an empty old_string)"
            )
        write_bytes(path, new_string.encode("utf-8", errors="strict"), context, "Edit")
        return f"Created {display(path, context)}"
    if path.is_dir():
        raise ToolError(f"{file_path} is a directory, not a file")
    raw = read_bytes(path, context, "Edit")
    if _is_binary(raw[:_SNIFF]):
        raise ToolError(f"{file_path} is a binary file; Edit changes text files only")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{file_path} is not UTF-8 text ({exc}); Edit changes UTF-8 text files only"
        ) from None
    if not old_string:
        raise ToolError(f"{file_path} already exists; an empty old_string only creates new files")
    count = text.count(old_string)
    if count == 0:
        raise ToolError(f"old_string was not found in {file_path}; Read the file and copy the text exactly")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {file_path}; add surrounding context to make it unique, "
            "or pass replace_all=true to replace every occurrence"
        )
    updated = text.replace(old_string, new_string) if replace_all else text.replace(old_string, new_string, 1)
    verb = write_bytes(path, updated.encode("utf-8", errors="strict"), context, "Edit")
    replaced = f"{count} occurrences" if replace_all and count > 1 else "1 occurrence"
    linked = verb.partition(" ")[2]
    return f"Edited {display(path, context)}: replaced {replaced}" + (f" {linked}" if linked else "")
