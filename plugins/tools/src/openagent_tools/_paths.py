"""Confinement: file tools reach only the run's cwd and ``add_dirs``, and open what they checked.

`resolve` turns what the model wrote into the real path (``..`` and symlinks resolved) and refuses one
outside the allowed directories. The file is then opened from the allowed directory's descriptor, one
component at a time with ``O_NOFOLLOW``: a symlink swapped in after the check makes the open fail instead of
leading elsewhere. Writes go to a new file renamed over the old one, so a file hard-linked to another place
is never changed through the link. The run's deny rules are asked again for the path actually opened.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from openagent import ToolContext, ToolError
from openagent.permissions import PathPolicy

__all__ = [
    "DIR_FLAGS", "READ_FLAGS", "check", "display", "open_dir", "open_read", "read_bytes", "resolve", "roots",
    "within", "write_bytes",
]  # fmt: skip

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW
)  # a FIFO swapped in must not block the open


def roots(context: ToolContext) -> list[Path]:
    """The directories the run may touch: its cwd and the options' ``add_dirs``, fully resolved."""
    cwd = Path(os.path.realpath(context.cwd))
    extra = getattr(context.options, "add_dirs", ()) or ()
    return [cwd, *(Path(os.path.realpath(cwd / Path(d).expanduser())) for d in extra)]


def within(path: Path, allowed: list[Path]) -> bool:
    """Whether the resolved ``path`` lies under one of ``allowed``."""
    return any(path == root or path.is_relative_to(root) for root in allowed)


def resolve(raw: str, context: ToolContext, *, what: str = "path") -> Path:
    """The real path ``raw`` names (relative to the cwd), refused when it leaves the allowed directories.

    Symlinks are followed before the check, so a link inside the project that points outside is refused
    like the path it points to; a symlink loop resolves to a path that then fails to open.

    Raises:
        ToolError: When the path is empty or outside the cwd and ``add_dirs``.
    """
    if not raw or "\x00" in raw:
        raise ToolError(f"{what} is empty or contains a NUL character")
    allowed = roots(context)
    given = Path(raw).expanduser()
    target = Path(os.path.realpath(given if given.is_absolute() else allowed[0] / given))
    if not within(target, allowed):
        places = ", ".join(str(r) for r in allowed)
        raise ToolError(
            f"Error: {raw!r} resolves to {target}, which is outside the directories this agent may use "
            f"({places}). Use a path inside them; add_dirs=[...] grants more."
        )
    return target


def display(path: Path, context: ToolContext) -> str:
    """``path`` relative to the cwd when it is inside it, else absolute (shorter for the model to read)."""
    cwd = Path(os.path.realpath(context.cwd))
    return path.relative_to(cwd).as_posix() if path.is_relative_to(cwd) else str(path)


def check(context: ToolContext, tool: str, path: Path, access: Any) -> None:
    """Refuse the path a tool is about to open when a deny rule covers it (after symlinks were resolved)."""
    if rule := PathPolicy.of(context).denied(tool, path, access):
        raise ToolError(f"{tool} may not use {display(path, context)}: the rule {rule!r} denies it")


def _failed(path: Path, exc: OSError) -> ToolError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return ToolError(
            f"{path} changed while it was being opened (a part of it is now a symbolic link, or a symlink "
            "loop); nothing was read or written"
        )
    return ToolError(f"cannot open {path}: {exc.strerror or exc}")


@contextmanager
def open_dir(path: Path, context: ToolContext, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the real directory ``path``, reached from its allowed root without following any
    link (``create`` makes missing folders on the way).
    """  # noqa: D205
    holding = [r for r in roots(context) if path == r or path.is_relative_to(r)]
    if not holding:
        raise ToolError(f"{path} is outside the directories this agent may use")
    root = max(holding, key=lambda r: len(r.parts))
    fd = os.open(root, DIR_FLAGS)
    try:
        for part in path.relative_to(root).parts:
            if create:
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                inner = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _failed(path, exc) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def open_read(path: Path, context: ToolContext, tool: str) -> BinaryIO:
    """The regular file at the real ``path``, opened for reading from its root without following links."""
    check(context, tool, path, "read")
    with open_dir(path.parent, context) as parent:
        try:
            fd = os.open(path.name, READ_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise _failed(path, exc) from None
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise ToolError(f"{path} is not a regular file")
    return handle


def read_bytes(path: Path, context: ToolContext, tool: str, *, limit: int = -1) -> bytes:
    """The bytes of the regular file at the real ``path`` (at most ``limit`` of them), opened safely."""
    with open_read(path, context, tool) as handle:
        return handle.read(limit)


def write_bytes(path: Path, data: bytes, context: ToolContext, tool: str) -> str:
    """Replace the file at the real ``path`` with ``data``: a new file renamed over it (keeping its mode).

    Returns what happened in words: created, overwritten, or overwritten as a new file because the old
    one had other hard links (which keep the old content: nothing outside changes through them).
    """
    check(context, tool, path, "write")
    with open_dir(path.parent, context, create=True) as parent:
        try:
            old: os.stat_result | None = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            kind = "a symbolic link that changed after it was checked" if stat.S_ISLNK(old.st_mode) else ""
            raise ToolError(f"{path} is {kind or 'not a regular file'}; nothing was written")
        temp = f".{path.name}.{os.getpid()}.{id(data):x}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if old is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
            os.replace(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            os.unlink(temp, dir_fd=parent)
            raise
    if old is None:
        return "Created"
    if old.st_nlink > 1:
        links = old.st_nlink - 1
        return f"Overwrote (as a new file: the old one has {links} other hard link(s), left unchanged)"
    return "Overwrote"
