"""The path policy's vocabulary: which arguments of a tool are paths, how path rules match, protected places.

Every tool that reads or writes files declares its path arguments (`Tool.paths`: ``{"file_path": "read"}``);
a tool that declares nothing (a user's function, an MCP filesystem server's tool) has the usual names
(``path``, ``file_path``, ``paths`` …) taken as paths, read by a read-only tool and edited by any other. The
permission layer applies ``Read(...)`` rules to every read and ``Edit(...)`` / ``Write(...)`` rules to every
write, whatever the tool; `openagent.permissions.PathPolicy` answers the same questions for a tool at the
moment it opens a file. Path specifiers follow gitignore: ``//abs``, ``~/home``, ``./anchored`` or
``dir/anchored`` (relative to the run's cwd), and a bare name (``.env``) at any depth.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

__all__ = [
    "PROTECTED_DIRS",
    "PROTECTED_FILES",
    "Access",
    "glob_regex",
    "path_arguments",
    "path_forms",
    "path_matches",
    "protected_part",
    "split_rule",
]

Access: TypeAlias = Literal["read", "write", "edit"]
"""How a tool uses a path: reads it, writes it, or both (``edit``: Edit reads the text it replaces)."""

READ_RULES = frozenset({"Read"})
"""Rule names that govern reading a path, whichever tool reads it (Read, Grep, Glob, an MCP tool …)."""
WRITE_RULES = frozenset({"Edit", "Write"})
"""Rule names that govern writing a path (Claude's ``Edit`` rules cover every editing tool)."""

PROTECTED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".openagent", ".claude", ".vscode", ".idea", ".devcontainer", ".ssh", ".gnupg"}
)
"""Folders whose files configure tools that run code (git hooks and ``core.fsmonitor``, editor tasks, agent
settings) or hold credentials: writing inside needs a rule naming them or an approval, in every mode but
``bypassPermissions``."""
PROTECTED_FILES = frozenset(
    {
        ".mcp.json", ".envrc", ".gitmodules", ".gitconfig", ".npmrc", ".pypirc", ".netrc",
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
        ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".login",
    }
)  # fmt: skip
"""Files that start processes or change where credentials go: MCP server lists, direnv files, shell start-up
files, package-manager and git configuration."""

GUESSED_PATH_KEYS = (
    "file_path", "path", "paths", "notebook_path", "filepath", "filename", "file", "directory", "dir",
    "source", "destination",
)  # fmt: skip
"""Argument names taken as paths for a tool that declares none (MCP filesystem servers use these)."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob: ``**`` crosses directories, ``*``/``?`` stay in one; ``{a,b}``, ``[abc]`` work.

    Raises:
        ValueError: The pattern does not compile (an unbalanced class, say).
    """
    out: list[str] = []
    i, depth = 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and (end := pattern.find("]", i + 1)) > i:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        elif ch == "{":
            out.append("(?:")
            depth += 1
        elif ch == "}" and depth:
            out.append(")")
            depth -= 1
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    try:
        return re.compile("".join(out) + ")" * depth, re.DOTALL)
    except re.error as exc:
        raise ValueError(f"invalid glob pattern {pattern!r}: {exc}") from None


def split_rule(rule: str) -> tuple[str, str | None]:
    """``"Read(src/**)"`` → ``("Read", "src/**")``; ``"Read"`` → ``("Read", None)``; malformed → no match."""
    rule = rule.strip()
    name, paren, rest = rule.partition("(")
    if not paren:
        return rule, None
    if not rest.endswith(")"):
        return "", None  # "Bash(git status:*" names nothing: it must never match
    return name, rest[:-1]


def path_arguments(
    declared: Mapping[str, Access] | None, is_read_only: bool, arguments: Mapping[str, Any]
) -> list[tuple[Access, str]]:
    """The paths a call reads or writes: its declared path arguments, or the usual names when undeclared."""
    if declared is None:
        access: Access = "read" if is_read_only else "edit"
        declared = {key: access for key in GUESSED_PATH_KEYS}
    found: list[tuple[Access, str]] = []
    for key, how in declared.items():
        value = arguments.get(key)
        values = value if isinstance(value, list) else [value]
        found += [(how, v) for v in values if isinstance(v, str) and v]
    return found


def _real(path: Path) -> Path:
    """The path with symlinks resolved as far as they exist; loops and bad names leave it as given."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path


def path_forms(path: str | os.PathLike[str], cwd: Path) -> tuple[list[str], list[str]]:
    """How a path can be written for matching: ``(real, every)``.

    ``real`` holds the path with symlinks resolved, absolute and (inside cwd) relative; ``every`` adds the
    path as given, normalised. Allow rules must match a real form; deny rules catch any form.
    """
    given = Path(os.path.expanduser(os.fspath(path)))
    absolute = given if given.is_absolute() else cwd / given
    base = _real(cwd)
    real: list[str] = []
    every: list[str] = []
    for index, form in enumerate((_real(absolute), Path(os.path.normpath(absolute)))):
        forms = real if index == 0 else every
        forms.append(form.as_posix())
        for root in (base, cwd):
            if form == root or form.is_relative_to(root):
                forms.append(form.relative_to(root).as_posix())
    return real, real + every


def _specifier_regex(specifier: str) -> re.Pattern[str]:
    if specifier.startswith("//"):  # Claude syntax: an absolute path
        pattern = specifier[1:]
    elif specifier.startswith("~/"):
        pattern = os.path.expanduser(specifier)
    elif specifier.startswith(("/", "./")):  # anchored at the cwd
        pattern = specifier.removeprefix(".").lstrip("/")
    elif "/" not in specifier.rstrip("/"):  # gitignore: a bare name matches at any depth
        pattern = "**/" + specifier
    else:
        pattern = specifier
    if pattern.endswith("/"):  # a folder: everything under it
        pattern += "**"
    try:
        return glob_regex(pattern)
    except ValueError:
        return re.compile(re.escape(pattern))


def path_matches(specifier: str, forms: list[str]) -> bool:
    """Whether a path specifier covers a path written in any of ``forms`` (see `path_forms`)."""
    regex = _specifier_regex(specifier)
    return any(regex.fullmatch(f) or regex.fullmatch(f.rstrip("/") + "/") for f in forms)


def _parts(path: str | os.PathLike[str], cwd: Path) -> Iterator[str]:
    """The components of a path below the cwd (all of them for a path elsewhere), real and as given."""
    given = Path(os.path.expanduser(os.fspath(path)))
    absolute = given if given.is_absolute() else cwd / given
    base = _real(cwd)
    for form in (_real(absolute), Path(os.path.normpath(absolute))):
        for root in (base, cwd):
            if form.is_relative_to(root):
                yield from form.relative_to(root).parts
                break
        else:
            yield from form.parts[1:]


def protected_part(path: str | os.PathLike[str], cwd: Path) -> str | None:
    """The protected folder or file a path lies in or is (``".git"``, ``".bashrc"``), if any."""
    for part in _parts(path, cwd):
        lowered = part.lower()  # case-insensitive file systems (macOS) reach .git as .GIT
        if lowered in PROTECTED_DIRS or lowered in PROTECTED_FILES:
            return part
    return None
