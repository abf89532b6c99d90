"""The search tools: Glob (files by name) and Grep (file contents by regex), confined to the project."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from openagent import Tool, ToolContext, ToolError, tool
from openagent.permissions import PathPolicy
from openagent.permissions import glob_regex as _glob_regex

from ._paths import DIR_FLAGS, READ_FLAGS, display, open_dir, open_read, resolve, roots, within

__all__ = ["Found", "glob", "glob_regex", "grep", "walk_files"]

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
    try:
        return _glob_regex(pattern)
    except ValueError as exc:
        raise ToolError(str(exc)) from None


@dataclass(slots=True)
class Found:
    """A file met by `walk_files`: its path relative to the search base, the real path, and a way to open it.

    ``parent`` is a descriptor of the directory holding it, open while the walk is paused on this file;
    ``linked`` is set for a symlink whose (checked) target is opened through its real path instead.
    """

    rel: str
    name: str
    shown: Path
    real: Path
    parent: int
    linked: bool
    mtime: float


def walk_files(base: Path, context: ToolContext) -> Iterator[Found]:
    """Every file under the real directory ``base``, in the order of their relative paths.

    Directories are opened from their parent's descriptor without following links, so nothing swapped in
    during the walk leads outside. Symlinked directories are not entered; a symlinked file counts only
    when its target is a file inside the allowed directories (a link loop is skipped, never an error).
    VCS folders are skipped.
    """
    allowed = roots(context)
    with open_dir(base, context) as top:
        yield from _walk(os.dup(top), base, "", allowed)


def _walk(fd: int, folder: Path, prefix: str, allowed: list[Path]) -> Iterator[Found]:
    try:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name + ("/" if _is_dir(e) else ""))
        for entry in entries:
            rel, path = prefix + entry.name, folder / entry.name
            if _is_dir(entry):
                if entry.name in SKIP_DIRS:
                    continue
                try:
                    inner = os.open(entry.name, DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                yield from _walk(inner, path, rel + "/", allowed)
            elif found := _file(entry, fd, rel, path, allowed):
                yield found
    except OSError:
        return
    finally:
        os.close(fd)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _file(entry: os.DirEntry[str], fd: int, rel: str, path: Path, allowed: list[Path]) -> Found | None:
    try:
        if entry.is_symlink():
            target = Path(os.path.realpath(path))  # a loop leaves a path that is no file: skipped
            if not (target.is_file() and within(target, allowed)):
                return None
            return Found(rel, entry.name, path, target, fd, True, target.stat().st_mtime)
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return Found(rel, entry.name, path, path, fd, False, info.st_mtime)


def _base(path: str | None, context: ToolContext) -> Path:
    base = resolve(path or ".", context, what="path")
    if not base.exists():
        raise ToolError(f"{path} does not exist")
    return base


def _shown(tool: str, context: ToolContext) -> Callable[[Path], bool]:
    """Whether a search may show a file: no deny or ask rule on reading covers it (a denied file's name
    and contents never come back through Glob or Grep).
    """  # noqa: D205
    policy = PathPolicy.of(context)
    if not (policy.disallowed or policy.ask):
        return lambda path: True
    return lambda path: policy.readable(tool, path)


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
    shown = _shown("Glob", context)
    found = [f for f in walk_files(base, context) if regex.fullmatch(f.rel) and shown(f.real)]
    if not found:
        return f"No files found matching {pattern!r} in {display(base, context)}"
    found.sort(key=lambda f: (-f.mtime, f.rel))
    lines = [display(f.shown, context) for f in found[:MAX_GLOB_RESULTS]]
    if len(found) > MAX_GLOB_RESULTS:
        lines.append(f"[{len(found) - MAX_GLOB_RESULTS} more files not shown: narrow the pattern or path]")
    return "\n".join(lines)


# --- Grep ---------------------------------------------------------------------------------------------------


class GrepArguments(BaseModel):
    """Grep's arguments, named as in Claude Code (``-i``, ``-n``, ``-A``, ``-B``, ``-C``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="The regular expression to search for (RE2 syntax, as ripgrep's).")
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


GREP_DESCRIPTION = """Search file contents with a regular expression (RE2 syntax, as ripgrep's: no look-around
or backreferences).

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


def _text(found: Found, context: ToolContext) -> str | None:
    """The file's text, or None for binaries, files over the size limit and files that cannot be opened."""
    try:
        if found.linked:
            handle = open_read(found.real, context, "Grep")
        else:
            handle = os.fdopen(os.open(found.name, READ_FLAGS, dir_fd=found.parent), "rb")
    except (OSError, ToolError):
        return None
    with handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        raw = handle.read(MAX_FILE_BYTES + 1)
    if b"\x00" in raw[:8192] or len(raw) > MAX_FILE_BYTES:
        return None
    return raw.decode("utf-8", errors="replace")


def _content_lines(shown: str, text: str, regex: Any, args: GrepArguments) -> list[str]:
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


def _compile(args: GrepArguments) -> Any:
    """The pattern on RE2: linear time whatever the pattern, so no search can stall the run."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not args.case_insensitive
    options.dot_nl = args.multiline
    try:
        return re2.compile("(?m)" + args.pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolError(
            f"invalid regular expression {args.pattern!r}: {reason} (RE2 syntax, as ripgrep's: no "
            "look-around or backreferences)"
        ) from None


def _files(base: Path, context: ToolContext) -> Iterator[Found]:
    if base.is_file():
        yield Found(base.name, base.name, base, base, -1, True, 0.0)
    else:
        yield from walk_files(base, context)


def _entries(found: Found, text: str, regex: Any, args: GrepArguments, context: ToolContext) -> list[str]:
    shown = display(found.shown, context)
    if args.output_mode == "files_with_matches":
        return [shown]
    if args.output_mode == "count":
        count = (
            sum(1 for _ in regex.finditer(text))
            if args.multiline
            else sum(1 for ln in text.splitlines() if regex.search(ln))
        )
        return [f"{shown}:{count}"]
    return _content_lines(shown, text, regex, args)


def _grep(args: GrepArguments, context: ToolContext) -> str:
    regex = _compile(args)
    base = _base(args.path, context)
    wanted, readable = _wanted(args), _shown("Grep", context)
    out: list[str] = []
    size = 0
    limit = args.head_limit
    with closing(_files(base, context)) as files:
        for found in files:
            if not (wanted(found.rel, found.name) and readable(found.real)):
                continue
            if (text := _text(found, context)) is None or not regex.search(text):
                continue
            for entry in _entries(found, text, regex, args, context):
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
