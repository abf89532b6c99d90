"""What bash makes of words: quote removal, ``$'…'``, line continuations, and the wrappers' options.

The word-level half of `openagent._shell`: values are computed here from the source text itself, not
from tree-sitter's reading of it, so that a word the grammar splits or joins differently from bash is
caught rather than trusted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = [
    "ANY_SUFFIX", "EVALUATING_OPTION", "FIND_EXEC", "SHELLS", "TRANSPARENT", "WRAPPERS", "Words",
    "command_base", "inner_starts", "join_continuations", "skip_options", "source_text", "stripped",
    "word_value",
]  # fmt: skip

Words = tuple[str | None, ...]
"""A simple command's words after quote removal; ``None`` for a word known only at run time."""

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash"})
EVALUATING_OPTION = {"mapfile": "-C", "readarray": "-C", "compgen": "-C", "complete": "-C", "bind": "-x"}
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
ANY_SUFFIX = frozenset(
    "busybox bwrap catchsegv chroot chrt coproc dbus-run-session fakeroot firejail flock ionice ltrace "
    "nsenter parallel pkexec proot runuser schroot script sg ssh strace su systemd-run taskset unbuffer "
    "unshare valgrind watch".split()
)
"""Wrappers whose inner command is found by trying every suffix of their arguments."""


def _opts(with_arg: str, without: str, positional: int = 0) -> tuple[frozenset[str], frozenset[str], int]:
    return frozenset(with_arg.split()), frozenset(without.split()), positional


WRAPPERS = {
    "command": _opts("", "-p -v -V"),
    "builtin": _opts("", ""),
    "exec": _opts("-a", "-c -l"),
    "nohup": _opts("", ""),
    "setsid": _opts("", "-c -f -w --ctty --fork --wait"),
    "time": _opts("-f -o --format --output", "-a -p -v -q --append --portability --verbose --quiet"),
    "nice": _opts("-n --adjustment", ""),
    "timeout": _opts("-s -k --signal --kill-after", "-f -p -v --foreground --preserve-status --verbose", 1),
    "stdbuf": _opts("-i -o -e --input --output --error", ""),
    "env": _opts("-u -C -S --unset --chdir --split-string", "-i -0 -v --ignore-environment --null --debug"),
    "xargs": _opts(
        "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines --max-args --max-procs "
        "--max-chars --process-slot-var",
        "-0 -o -p -r -t -x -e -i -l --null --open-tty --interactive --no-run-if-empty --verbose --exit",
    ),
    "sudo": _opts(
        "-C -D -g -h -p -R -r -T -t -U -u --close-from --chdir --group --host --prompt --chroot --role "
        "--command-timeout --type --other-user --user",
        "-A -B -b -E -H -i -K -k -l -N -n -P -S -s -V -v --askpass --bell --background --preserve-env "
        "--set-home --login --remove-timestamp --reset-timestamp --list --no-update --non-interactive "
        "--preserve-groups --stdin --shell --version --validate",
    ),
    "doas": _opts("-C -u", "-L -n -s"),
}
"""Wrappers whose options are known: (options taking an argument, options without, positional arguments
before the command). An option not listed here makes every suffix a candidate instead."""
TRANSPARENT = frozenset({"time", "nice", "nohup", "timeout", "stdbuf"})
"""Wrappers an allow rule looks through: they change how, not what or as whom, a command runs."""


def source_text(node: Node, src: bytes) -> str:
    """The source text of a node."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


def _unquoted(text: str) -> tuple[str, bool] | None:
    """An unquoted word's value, and whether it is literal (no glob or brace characters)."""
    out: list[str] = []
    literal, i = True, 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 == len(text):
                return None
            out.append("" if text[i + 1] == "\n" else text[i + 1])
            i += 2
            continue
        if char in "'\"$`\\ \t\n\r;&|<>()":
            return None
        literal = literal and char not in "*?[]{}"
        out.append(char)
        i += 1
    return "".join(out), literal


def _double_quoted(inner: str) -> str | None:
    """The value of the text between double quotes, when it holds no expansion."""
    out, i = [], 0
    while i < len(inner):
        char = inner[i]
        if char == "\\" and i + 1 < len(inner):
            follower = inner[i + 1]
            out.append("" if follower == "\n" else follower if follower in '\\"$`' else "\\" + follower)
            i += 2
            continue
        if char in '\\"$`':
            return None
        out.append(char)
        i += 1
    return "".join(out)


_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ANSI |= {"v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_NUMBER = re.compile(r"([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})")


def _ansi_c(inner: str) -> str | None:
    """The value of ``$'…'``; ``None`` for escapes whose result is not plain text (NUL, raw bytes)."""
    out, i = [], 0
    while i < len(inner):
        char = inner[i]
        if char == "'" or (char == "\\" and i + 1 == len(inner)):
            return None
        if char != "\\":
            out.append(char)
            i += 1
        elif inner[i + 1] in _ANSI:
            out.append(_ANSI[inner[i + 1]])
            i += 2
        elif match := _ANSI_NUMBER.match(inner, i + 1):
            octal, hex_byte, *wide = match.groups()
            code = int(octal, 8) if octal else int(hex_byte, 16) if hex_byte else int(wide[0] or wide[1], 16)
            if code == 0 or (code > 0x7F and not wide[0] and not wide[1]) or code > 0x10FFFF:
                return None  # bash cuts the word at NUL; \xHH above 0x7f is a raw byte
            out.append(chr(code))
            i = match.end()
        else:
            return None
    return "".join(out)


def word_value(node: Node, src: bytes) -> tuple[str, bool] | None:
    """A word node's value after quote removal, and whether it is literal; ``None`` if known only when run."""
    kind, text = node.type, source_text(node, src)
    if kind in ("word", "number"):
        return None if text.startswith("#") else _unquoted(text)
    if kind == "raw_string":
        inner = text[1:-1]
        return (inner, True) if len(text) >= 2 and text[0] == text[-1] == "'" and "'" not in inner else None
    if kind == "string":
        if len(text) < 2 or text[0] != '"' or text[-1] != '"':
            return None
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        unquoted = _double_quoted(text[1:-1])
        return None if unquoted is None else (unquoted, True)
    if kind == "ansi_c_string":
        ok = text.startswith("$'") and text.endswith("'") and len(text) > 2
        decoded = _ansi_c(text[2:-1]) if ok else None
        return None if decoded is None else (decoded, True)
    if kind == "concatenation":
        parts, end = [], node.start_byte
        for child in node.children:
            part = word_value(child, src) if child.start_byte == end else None
            if part is None:
                return None
            parts.append(part)
            end = child.end_byte
        return "".join(p[0] for p in parts), all(p[1] for p in parts) and end == node.end_byte
    return None


def join_continuations(source: bytes, root: Node) -> bytes:
    """The source with line continuations removed where bash removes them (not in quotes or comments)."""
    if b"\\\n" not in source:
        return source
    kept: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("raw_string", "ansi_c_string", "comment") or _quoted_heredoc_body(node, source):
            kept.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    protected = dict(sorted(kept))
    out, i = bytearray(), 0
    while i < len(source):
        if i in protected and protected[i] > i:
            out += source[i : protected[i]]
            i = protected[i]
        elif source[i] == 0x5C and source[i + 1 : i + 2] == b"\n":
            i += 2
        else:
            step = 2 if source[i] == 0x5C else 1
            out += source[i : i + step]
            i += step
    return bytes(out)


def _quoted_heredoc_body(node: Node, source: bytes) -> bool:
    r"""The body of ``<<'EOF'`` (or ``<<"EOF"``, ``<<\EOF``) is literal; an unquoted one is not."""
    if node.type != "heredoc_body" or node.parent is None:
        return False
    starts = [c for c in node.parent.children if c.type == "heredoc_start"]
    return any(re.search(rb"['\"\\]", source[s.start_byte : s.end_byte]) for s in starts)


def skip_options(words: Words, spec: tuple[frozenset[str], frozenset[str], int]) -> int | None:
    """Where a wrapper's inner command starts, when every option before it is known; ``None`` otherwise."""
    with_arg, without, positional = spec
    i = 1
    while i < len(words):
        word = words[i]
        if word is None:
            return None
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name not in with_arg and name not in without:
                return None
            i += 2 if name in with_arg and "=" not in word else 1
            continue
        for at, letter in enumerate(word[1:], 1):
            if f"-{letter}" in with_arg:
                i += 1 if at < len(word) - 1 else 2
                break
            if f"-{letter}" not in without and not (words[0] == "nice" and letter.isdigit()):
                return None
        else:
            i += 1
    while i < len(words) and words[0] == "env" and re.match(r"[A-Za-z_]\w*=", words[i] or ""):
        i += 1
    return i + positional if i + positional <= len(words) else None


def stripped(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``timeout 5 nice git status`` → the inner commands an allow rule may cover instead."""
    found: list[tuple[str, ...]] = []
    while words and words[0] in TRANSPARENT:
        start = skip_options(words, WRAPPERS[words[0]])
        if start is None or start >= len(words):
            break
        words = words[start:]
        found.append(words)
    return found


def inner_starts(name: str, words: Words) -> Iterable[int]:
    """Where the commands a wrapper runs may start (exactly, or every position when unsure)."""
    if name == "find":
        return [i + 1 for i, word in enumerate(words) if word in FIND_EXEC]
    if name == "command" and len(words) > 1 and words[1] in ("-v", "-V"):
        return []
    if name in WRAPPERS:
        start = skip_options((name, *words[1:]), WRAPPERS[name])
        return [start] if start is not None else range(1, len(words))
    return range(1, len(words)) if name in ANY_SUFFIX else []


def command_base(name: str) -> str:
    """A command name as a deny rule compares it: its last path component (``/bin/rm`` → ``rm``)."""
    return name.rstrip("/").rsplit("/", 1)[-1] or name
