"""Confinement: file tools reach only the run's cwd and ``add_dirs``, after resolving ``..`` and symlinks."""

from __future__ import annotations

from pathlib import Path

from openagent import ToolContext, ToolError

__all__ = ["display", "resolve", "roots", "within"]


def roots(context: ToolContext) -> list[Path]:
    """The directories the run may touch: its cwd and the options' ``add_dirs``, fully resolved."""
    cwd = Path(context.cwd).resolve()
    extra = getattr(context.options, "add_dirs", ()) or ()
    return [cwd, *((cwd / Path(d).expanduser()).resolve() for d in extra)]


def within(path: Path, allowed: list[Path]) -> bool:
    """Whether the resolved ``path`` lies under one of ``allowed``."""
    return any(path == root or path.is_relative_to(root) for root in allowed)


def resolve(raw: str, context: ToolContext, *, what: str = "path") -> Path:
    """The real path ``raw`` names (relative to the cwd), refused when it leaves the allowed directories.

    Symlinks are followed before the check, so a link inside the project that points outside is refused
    like the path it points to.

    Raises:
        ToolError: When the path is empty or outside the cwd and ``add_dirs``.
    """
    if not raw or "\x00" in raw:
        raise ToolError(f"{what} is empty or contains a NUL character")
    allowed = roots(context)
    given = Path(raw).expanduser()
    target = (given if given.is_absolute() else allowed[0] / given).resolve()
    if not within(target, allowed):
        places = ", ".join(str(r) for r in allowed)
        raise ToolError(
            f"Error: {raw!r} resolves to {target}, which is outside the directories this agent may use "
            f"({places}). Use a path inside them; add_dirs=[...] grants more."
        )
    return target


def display(path: Path, context: ToolContext) -> str:
    """``path`` relative to the cwd when it is inside it, else absolute (shorter for the model to read)."""
    cwd = Path(context.cwd).resolve()
    return path.relative_to(cwd).as_posix() if path.is_relative_to(cwd) else str(path)
