"""The search tools: Glob (files by name) and Grep (file contents by regex), confined to the project."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from openagent import Tool, ToolContext, ToolError, tool

from ._paths import display, resolve, roots, within

__all__ = ["glob", "glob_regex", "grep", "walk_files"]

SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
MAX_GLOB_RESULTS = 100
MAX_OUTPUT_CHARS = 50_000
MAX_FILE_BYTES = 10 * 1024 * 1024
FILE_TYPES = {
    "py": (".py", ".pyi"), "js": (".js", ".mjs", ".cjs", ".jsx"), "ts": (".ts", ".tsx", ".mts", ".cts"),
    "rust": (".rs",), "go": (".go",), "java": (".java",), "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h"), "md": (".md", ".markdown"), "json": (".json",),
    "yaml": (".yaml", ".yml"), "toml": (".toml",), "html": (".html", ".htm"), "css": (".css", ".scss"),
    "sh": (".sh", ".bash", ".zsh"), "rb": (".rb",), "php": (".php",), "txt": (".txt",), "sql": (".sql",),
}  # fmt: skip


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob: ``**`` crosses directories, ``*``/``?`` stay in one; ``{a,b}``, ``[abc]`` work."""
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
        return re.compile("".join(out) + ")" * depth)
    except re.error as exc:
        raise ToolError(f"invalid glob pattern {pattern!r}: {exc}") from None


def walk_files(base: Path, allowed: list[Path]) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every file under ``base`` as (path relative to base, entry); symlinked directories are not entered
    and symlinked files count only when their target stays inside ``allowed``. VCS folders are skipped.
    """  # noqa: D205
    stack = [(base, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    target = Path(entry.path).resolve()
                    if target.is_file() and within(target, allowed):
                        yield rel, entry
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        stack.append((Path(entry.path), rel + "/"))
                elif entry.is_file(follow_symlinks=False):
                    yield rel, entry
            except OSError:
                continue


def _base(path: str | None, context: ToolContext) -> Path:
    base = resolve(path or ".", context, what="path")
    if not base.exists():
        raise ToolError(f"{path} does not exist")
    return base


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


GLOB_DESCRIPTION = f"""Find files by name with a glob pattern.

- Patterns: "**/*.py" (any depth), "src/**/*.ts", "*.md" (top level only), "**/*.{{js,jsx}}", "test_?.py".
- path is the directory to search (default: the working directory).
- Returns matching file paths, most recently modified first, at most {MAX_GLOB_RESULTS}.
- Version-control folders (.git, .hg, .svn) are skipped. Use Grep to search inside files."""


@tool("Glob", GLOB_DESCRIPTION, is_read_only=True, max_result_chars=MAX_OUTPUT_CHARS)
def glob(pattern: str, context: ToolContext, path: str | None = None) -> str:
    """Find files by glob pattern.

    Args:
        pattern: The glob pattern to match file paths against (relative to path).
        context: Injected by the loop.
        path: The directory to search in (default: the working directory).
    """
    base = _base(path, context)
    if not base.is_dir():
        raise ToolError(f"{path} is not a directory")
    regex = glob_regex(pattern.removeprefix("./"))
    found = [(rel, entry) for rel, entry in walk_files(base, roots(context)) if regex.fullmatch(rel)]
    if not found:
        return f"No files found matching {pattern!r} in {display(base, context)}"
    found.sort(key=lambda item: (-_mtime(item[1]), item[0]))
    lines = [display(Path(entry.path), context) for _, entry in found[:MAX_GLOB_RESULTS]]
    if len(found) > MAX_GLOB_RESULTS:
        lines.append(f"[{len(found) - MAX_GLOB_RESULTS} more files not shown: narrow the pattern or path]")
    return "\n".join(lines)


# --- Grep ---------------------------------------------------------------------------------------------------


class GrepArguments(BaseModel):
    """Grep's arguments, named as in Claude Code (``-i``, ``-n``, ``-A``, ``-B``, ``-C``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="The regular expression to search for (Python `re` syntax).")
    path: str | None = Field(None, description="File or directory to search (default: working directory).")
    glob: str | None = Field(
        None, description='Only files matching this glob, e.g. "*.py", "src/**/*.{ts,tsx}".'
    )
    type: str | None = Field(None, description=f"Only files of this type: {', '.join(sorted(FILE_TYPES))}.")
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        "files_with_matches",
        description='"content": matching lines; "files_with_matches": file paths; "count": matches per file.',
    )
    case_insensitive: bool = Field(False, alias="-i", description="Case-insensitive search.")
    line_numbers: bool = Field(True, alias="-n", description="Show line numbers (content mode).")
    after: Annotated[int, Field(ge=0)] | None = Field(None, alias="-A", description="Lines after each match.")
    before: Annotated[int, Field(ge=0)] | None = Field(
        None, alias="-B", description="Lines before each match."
    )
    around: Annotated[int, Field(ge=0)] | None = Field(
        None, alias="-C", description="Lines around each match."
    )
    multiline: bool = Field(False, description="Let . match newlines and patterns span lines.")
    head_limit: Annotated[int, Field(ge=1)] | None = Field(None, description="Show only the first N entries.")


GREP_DESCRIPTION = """Search file contents with a regular expression (Python `re` syntax).

- output_mode "files_with_matches" (default) lists files, "content" shows matching lines (with -n line
  numbers and -A/-B/-C context lines), "count" shows the number of matching lines per file.
- Filter files with glob ("*.py", "**/*.{ts,tsx}") or type ("py", "js", "rust" …); -i ignores case;
  multiline lets a pattern span lines. head_limit keeps the first N entries.
- Binary files, files over 10 MB and version-control folders are skipped."""


def _wanted(args: GrepArguments) -> Any:
    name_glob = glob_regex(args.glob) if args.glob else None
    by_path = bool(args.glob and "/" in args.glob)
    suffixes: tuple[str, ...] | None = None
    if args.type:
        if args.type not in FILE_TYPES:
            raise ToolError(f"unknown type {args.type!r}; known types: {', '.join(sorted(FILE_TYPES))}")
        suffixes = FILE_TYPES[args.type]

    def wanted(rel: str, name: str) -> bool:
        if suffixes is not None and not name.endswith(suffixes):
            return False
        return name_glob is None or name_glob.fullmatch(rel if by_path else name) is not None

    return wanted


def _text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                return None
            raw = handle.read()
    except OSError:
        return None
    if b"\x00" in raw[:8192]:
        return None
    return raw.decode("utf-8", errors="replace")


def _content_lines(shown: str, text: str, regex: re.Pattern[str], args: GrepArguments) -> list[str]:
    lines = text.splitlines()
    if args.multiline:  # a match marks every line it spans
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        hits: set[int] = set()
        for match in regex.finditer(text):
            first = _line_of(starts, match.start())
            hits.update(range(first, _line_of(starts, max(match.end() - 1, match.start())) + 1))
    else:
        hits = {i for i, line in enumerate(lines) if regex.search(line)}
    before = args.before if args.before is not None else (args.around or 0)
    after = args.after if args.after is not None else (args.around or 0)
    out: list[str] = []
    last = -2
    for i in sorted(hits):
        low, high = max(0, i - before), min(len(lines) - 1, i + after)
        if out and low > last + 1:
            out.append("--")
        for j in range(max(low, last + 1), high + 1):
            mark = ":" if j in hits else "-"
            number = f"{j + 1}{mark}" if args.line_numbers else ""
            out.append(f"{shown}{mark}{number}{lines[j]}")
        last = max(last, high)
    return out


def _line_of(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if starts[mid] <= offset:
            low = mid
        else:
            high = mid - 1
    return low


def _grep(args: GrepArguments, context: ToolContext) -> str:
    flags = (
        re.MULTILINE | (re.IGNORECASE if args.case_insensitive else 0) | (re.DOTALL if args.multiline else 0)
    )
    try:
        regex = re.compile(args.pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {args.pattern!r}: {exc}") from None
    base = _base(args.path, context)
    wanted = _wanted(args)
    if base.is_file():
        files = [(base.name, base.name, str(base))]
    else:
        files = [(rel, entry.name, entry.path) for rel, entry in walk_files(base, roots(context))]
    files.sort()
    out: list[str] = []
    size = 0
    limit = args.head_limit
    for rel, name, path in files:
        if not wanted(rel, name) or (text := _text(path)) is None or not regex.search(text):
            continue
        shown = display(Path(path), context)
        if args.output_mode == "files_with_matches":
            entries = [shown]
        elif args.output_mode == "count":
            count = (
                len(list(regex.finditer(text)))
                if args.multiline
                else sum(1 for ln in text.splitlines() if regex.search(ln))
            )
            entries = [f"{shown}:{count}"]
        else:
            entries = _content_lines(shown, text, regex, args)
        for entry in entries:
            if limit is not None and len(out) >= limit:
                return "\n".join([*out, f"[stopped at head_limit={limit}]"])
            out.append(entry)
            size += len(entry) + 1
            if size > MAX_OUTPUT_CHARS:
                return "\n".join(
                    [*out, "[output truncated: narrow the search with path, glob or head_limit]"]
                )
    return "\n".join(out) if out else f"No matches for {args.pattern!r}"


def _grep_handler(context: ToolContext, **arguments: Any) -> str:
    return _grep(GrepArguments(**arguments), context)


def _schema() -> dict[str, Any]:
    schema = GrepArguments.model_json_schema(by_alias=True)
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    return schema


grep = Tool(
    name="Grep",
    description=GREP_DESCRIPTION,
    input_schema=_schema(),
    handler=_grep_handler,
    arguments_model=GrepArguments,
    is_read_only=True,
    max_result_chars=MAX_OUTPUT_CHARS + 200,
    context_param="context",
)
