"""Bash commands read the way bash reads them, for the Bash permission rules (on tree-sitter-bash).

`analyze` parses a command once and answers the two questions `openagent.permissions` asks:

- *Could an allow rule cover it?* Only when the parse is complete and the command is plain: simple commands
  of literal words (quoted, escaped, ``$'…'`` decoded), joined by ``;`` ``&&`` ``||`` ``|`` ``&`` or
  newlines, with ``NAME=value`` prefixes, comments, and redirections only to ``/dev/null`` or fd duplicates
  (``2>&1``). `Analysis.plain` holds each simple command's words, with the transparent wrappers
  (``timeout``, ``nice``, ``nohup``, ``time``, ``stdbuf``) also stripped off. Anything else is not plain.
- *Could a deny rule apply?* `Analysis.commands` holds every command anywhere in the tree (substitutions,
  subshells, function bodies, heredocs), each wrapper's inner command (``sudo``, ``env``, ``xargs``,
  ``find -exec`` …), the commands inside ``bash -c``/``eval``/``trap`` strings, and inside quoted text
  that bash could evaluate later (``'$(…)'`` in an array subscript or a prompt string). A word known only
  at run time is ``None``. When part of the command cannot be understood (a parse error, a command name
  computed at run time, a shell reading commands from stdin, ``${x@P}``, ``alias``…), `Analysis.unknown`
  says why, and every Bash deny rule applies (fail closed).

tree-sitter-bash is a maintained grammar, not bash: where the two could disagree, the checks here re-read
the source (each word is lexed again, the gaps between tokens must be blanks, line continuations are
joined first), and tests/security runs what this module allows under real bash and strace.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _shell_words as _w
from ._shell_words import Words

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Analysis", "allows", "analyze", "may_match"]

MAX_DEPTH = 6
"""How deep ``bash -c``/``eval`` strings may nest before the command counts as not understood."""
MAX_LENGTH = 100_000

_GLOB = "\0"
"""Marks a word bash expands (globs, braces): it never equals a rule's word; ``*`` patterns still match."""
_BLANKS = frozenset(b" \t")
_SPACE = frozenset(b" \t\n")
_RESERVED = frozenset(
    "! [[ ]] { } case coproc do done elif else esac fi for function if in select then until while".split()
)
_RISKY_ENV = re.compile(
    r"PATH|IFS|ENV|BASH_ENV|BASHOPTS|SHELLOPTS|PS4|PROMPT_COMMAND|CDPATH|GLOBIGNORE|HOME|SHELL|TMPDIR|"
    r"EDITOR|VISUAL|BROWSER|TERMINFO\w*|LD_\w*|DYLD_\w*|GIT_\w*|PYTHON\w*|PERL\w*|RUBY\w*|NODE_OPTIONS|"
    r"\w*PAGER|LESS\w*|\w*_(?:COMMAND|OPTIONS|OPTS|PATH|HOME|CONFIG|PRELOAD|ASKPASS|EDITOR|SHELL)"
)
"""Variables that programs read as code, options or search paths: ``NAME=value cmd`` with these asks."""


@dataclass(frozen=True, slots=True)
class Analysis:
    """What one command line holds, as far as permission rules are concerned."""

    plain: tuple[tuple[tuple[str, ...], ...], ...] | None
    """Per simple command, its words as written and with transparent wrappers stripped; ``None`` when the
    command is not plain (then no allow rule covers it)."""
    commands: tuple[Words, ...]
    """Every command anywhere, for deny rules; the name is reduced to its last path component."""
    unknown: str | None = None
    """Why part of the command cannot be understood (then every Bash deny rule applies)."""
    not_plain: str | None = None
    """Why no allow rule can cover the command."""


# --- parsing and word values ------------------------------------------------------------------------------


@functools.cache
def _language() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Language(tree_sitter_bash.language())


def _parse(source: bytes) -> Node:
    import tree_sitter

    return tree_sitter.Parser(_language()).parse(source).root_node


# --- plain commands (for allow rules) ---------------------------------------------------------------------


class _NotPlain(Exception):
    """Raised inside `_Plain` with the reason the command is not plain."""


def _gaps(node: Node, src: bytes) -> Iterable[bytes]:
    """The source between a node's children (and before the first / after the last)."""
    at = node.start_byte
    for child in node.children:
        yield src[at : child.start_byte]
        at = child.end_byte
    yield src[at : node.end_byte]


class _Plain:
    """Checks that a parse is plain and collects each simple command's words."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.commands: list[tuple[tuple[str, ...], ...]] = []

    def statements(self, node: Node, depth: int = 0) -> None:
        if depth > 200:
            raise _NotPlain("it nests too deeply")
        kind = node.type
        if kind == "command":
            return self.command(node, [])
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is None or body.type != "command" or any(set(g) - _BLANKS for g in _gaps(node, self.src)):
                raise _NotPlain("it redirects a compound command")
            return self.command(body, [c for c in node.children if c != body])
        if kind not in _JOINERS:
            raise _NotPlain(_DESCRIBE.get(kind, f"it uses {kind.replace('_', ' ')}"))
        gaps = list(_gaps(node, self.src))
        if any(set(gap) - _SPACE for gap in gaps):
            raise _NotPlain("tree-sitter and bash could split it differently")
        separated = True
        for child, gap in zip(node.children, gaps, strict=False):
            separated = separated or (kind == "program" and b"\n" in gap)
            if child.type in _JOINERS[kind]:
                separated = True
            elif child.type == "comment":
                self.comment(child)
            elif child.is_named and separated:
                self.statements(child, depth + 1)
                separated = False
            else:
                raise _NotPlain(f"it uses {child.type!r} where bash may read it differently")
        return None

    def comment(self, node: Node) -> None:
        if not _starts_comment(node, self.src) or b"\n" in self.src[node.start_byte : node.end_byte]:
            raise _NotPlain("a '#' that bash may not read as a comment")

    def command(self, node: Node, redirects: list[Node]) -> None:
        gaps = list(_gaps(node, self.src))
        if gaps[0] or gaps[-1] or any(not gap or set(gap) - _BLANKS for gap in gaps[1:-1]):
            raise _NotPlain("tree-sitter and bash could split its words differently")
        words: list[str] = []
        for i, child in enumerate(node.children):
            if child.type == "variable_assignment":
                self.assignment(child, bool(words))
            elif child.type == "file_redirect":
                self.redirect(child)
            elif child.type == "command_name" and child.named_child_count == 1 and not words:
                words.append(self.word(child.named_children[0], name=True))
            elif node.field_name_for_child(i) == "argument" and words:
                words.append(self.word(child))
            else:
                raise _NotPlain(_DESCRIBE.get(child.type, f"it uses {child.type.replace('_', ' ')}"))
        for redirect in redirects:
            self.redirect(redirect)
        if not words:
            raise _NotPlain("an assignment without a command changes the shell")
        self.commands.append((tuple(words), *_w.stripped(tuple(words))))

    def word(self, node: Node, *, name: bool = False) -> str:
        value = _w.word_value(node, self.src)
        if value is None:
            raise _NotPlain(_DESCRIBE.get(node.type, "a word whose value is known only when it runs"))
        if name and (not value[1] or value[0] in _RESERVED or value[0].startswith("~")):
            raise _NotPlain(f"its command name {value[0]!r} is not a plain word")
        return value[0] if value[1] else _GLOB + value[0]

    def assignment(self, node: Node, late: bool) -> None:
        name = node.child_by_field_name("name")
        kids = node.children
        if late or name is None or name.type != "variable_name" or len(kids) > 3:
            raise _NotPlain("it assigns in a way bash may not read as an environment prefix")
        if _RISKY_ENV.fullmatch(_w.source_text(name, self.src)):
            raise _NotPlain(f"it sets {_w.source_text(name, self.src)}, which changes what programs run")
        if any(a.end_byte != b.start_byte for a, b in zip(kids, kids[1:], strict=False)):
            raise _NotPlain("it assigns in a way bash may not read as an environment prefix")
        if len(kids) == 3 and _w.word_value(kids[2], self.src) is None:
            raise _NotPlain("it assigns a value known only when it runs")

    def redirect(self, node: Node) -> None:
        kids = [c for c in node.children if c.type != "file_descriptor"]
        if node.type != "file_redirect":
            raise _NotPlain(_DESCRIBE.get(node.type, "it redirects in a way bash may read differently"))
        if len(kids) == 1 and kids[0].type in (">&-", "<&-"):
            return  # closing a descriptor
        if len(kids) != 2 or kids[0].is_named:
            raise _NotPlain("it redirects input or output to something other than /dev/null")
        if node.children[0].type == "file_descriptor" and node.children[0].end_byte != kids[0].start_byte:
            raise _NotPlain("tree-sitter and bash could read its redirection differently")
        if set(self.src[kids[0].end_byte : kids[1].start_byte]) - _BLANKS:
            raise _NotPlain("tree-sitter and bash could read its redirection differently")
        operator, target = kids[0].type, _w.word_value(kids[1], self.src)
        if operator in (">&", "<&") and target and re.fullmatch(r"\d+|-", target[0]):
            return
        if operator in (">", ">>", ">|", "&>", "&>>", "<", ">&") and target and target[0] == "/dev/null":
            return
        raise _NotPlain("it redirects input or output to something other than /dev/null")


_JOINERS = {"program": (";", "&"), "list": ("&&", "||"), "pipeline": ("|", "|&")}
_DESCRIBE = {
    "variable_assignment": "an assignment without a command changes the shell",
    "command_substitution": "it contains a command substitution",
    "process_substitution": "it contains a process substitution",
    "expansion": "it contains a parameter expansion",
    "simple_expansion": "it contains a parameter expansion",
    "arithmetic_expansion": "it contains an arithmetic expansion",
    "function_definition": "it defines a function",
    "heredoc_redirect": "it has a here-document",
    "herestring_redirect": "it has a here-string",
    "subshell": "it runs a subshell",
    "compound_statement": "it has a { … } group",
}


# --- every command (for deny rules) -----------------------------------------------------------------------


@dataclass
class _Found:
    """Commands collected for deny rules, and the first reason something could not be understood."""

    commands: list[Words] = field(default_factory=list)
    unknown: str | None = None
    seen: set[Words] = field(default_factory=set)

    def fail(self, reason: str) -> None:
        self.unknown = self.unknown or reason

    def text(self, text: str | None, depth: int, what: str) -> None:
        """Commands inside a string bash will run (``bash -c``, ``eval``, quoted text with ``$(…)``)."""
        if text is None:
            return self.fail(f"{what} runs text known only when it runs")
        if depth >= MAX_DEPTH:
            return self.fail(f"{what} nests commands too deeply to check")
        _collect(text.encode("utf-8", "surrogateescape"), self, depth + 1)
        return None

    def add(self, words: Words, depth: int, chain: int = 0) -> None:
        if not words or words in self.seen:
            return
        self.seen.add(words)
        name = words[0]
        if name is None:
            return self.fail("a command name is known only when it runs")
        if chain > 32:
            return self.fail("wrappers nest too deeply to check")
        base = _w.command_base(name)
        self.commands.append((base, *words[1:]))
        self.special(base, words[1:], depth)
        for start in _w.inner_starts(base, words):
            self.add(words[start:], depth, chain + 1)
        if base in _w.WRAPPERS or base in _w.ANY_SUFFIX or base in _w.SHELLS:
            for word in words[1:]:
                if word and re.search(r"[\s;&|<>()$`]", word):
                    self.text(word, depth, f"{base}'s argument")
        return None

    def special(self, base: str, args: Words, depth: int) -> None:
        """Builtins that run text, or change what a name runs."""
        if base in _w.SHELLS:
            self.shell(args, depth)
        elif base == "eval":
            self.text(None if None in args else " ".join(a or "" for a in args), depth, "eval")
        elif base == "trap" and args and not (args[0] or "").startswith("-"):
            self.text(args[0], depth, "trap")
        elif base in ("source", ".") and (not args or args[0] is None):
            self.fail(f"{base} reads a file known only when it runs")
        elif base in ("alias", "enable") and args or base == "hash" and "-p" in args:
            self.fail(f"{base} can change what a command name runs")
        elif base in _w.EVALUATING_OPTION and _w.EVALUATING_OPTION[base] in args:
            at = args.index(_w.EVALUATING_OPTION[base]) + 1
            self.text(args[at] if at < len(args) else None, depth, base)
        elif base in ("sudo", "doas") and any(a in ("-s", "-i", "--shell", "--login") for a in args):
            start = _w.skip_options((base, *args), _w.WRAPPERS[base])
            rest = args[start - 1 :] if start else ()
            self.text(" ".join(a or "" for a in rest) if rest and None not in rest else None, depth, base)
        elif base == "env":
            for flag in ("-S", "--split-string"):
                if flag in args:
                    self.text(args[args.index(flag) + 1] if args[-1] != flag else None, depth, "env -S")

    def shell(self, args: Words, depth: int) -> None:
        """``bash -c 'text'`` runs the text; a shell with no script reads commands from stdin."""
        wants_text, i = False, 0
        while i < len(args):
            word = args[i]
            if word is None:
                return self.fail("a shell gets arguments known only when it runs")
            if word == "--":
                i += 1
                break
            if not word.startswith(("-", "+")) or word in ("-", "+"):
                break
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                wants_text = True
            if word.startswith(("-s", "+s")) or (not word.startswith("--") and "s" in word[1:]):
                return self.fail("a shell reads its commands from standard input")
            i += 2 if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
        if i >= len(args):
            return self.fail("a shell reads its commands from standard input")
        if wants_text:
            return self.text(args[i], depth, "a shell's -c")
        return None


def _words(node: Node, src: bytes) -> Words:
    """A command node's words in order, including those tree-sitter hangs on a redirection's target."""
    nodes: list[Node] = []
    redirects = [c for c in node.children if c.type.endswith("redirect")]
    if node.parent is not None and node.parent.type == "redirected_statement":
        redirects += [c for c in node.parent.children if c.type.endswith("redirect")]
    for i, child in enumerate(node.children):
        if child.type == "command_name":
            nodes += child.named_children
        elif node.field_name_for_child(i) == "argument":
            nodes.append(child)
    for redirect in redirects:
        targets = [
            c for i, c in enumerate(redirect.children) if redirect.field_name_for_child(i) == "destination"
        ]
        nodes += targets[1:]
    values = [_w.word_value(n, src) for n in sorted(nodes, key=lambda n: n.start_byte)]
    return tuple(v[0] if v and v[1] else None for v in values)


_SUBSTITUTION = re.compile(r"\$\(|`|[<>]\(")
_BARE_NEWLINE = re.compile(rb"(?<!\\)\n")
_GLUED = re.compile(rb"(?:\\\n)+")
"""Only continuations between two words: bash joins them into one."""


def _may_hide_code(node: Node, src: bytes) -> bool:
    """A cheap test before decoding a word: a ``$(``, backquote or ``<(`` needs one of these in the source."""
    raw = src[node.start_byte : node.end_byte]
    return b"(" in raw or b"`" in raw or b"\\" in raw


def _starts_comment(node: Node, src: bytes) -> bool:
    r"""Whether bash, too, starts a comment at this ``#``: at the start of a word, after an unescaped
    separator (``a\ #b`` is one word, ``a #b`` a word and a comment).
    """  # noqa: D205
    at = node.start_byte
    if at == 0:
        return True
    if src[at - 1 : at] not in (b" ", b"\t", b"\n", b";", b"&", b"|", b"(", b")"):
        return False
    backslashes = len(src[: at - 1]) - len(src[: at - 1].rstrip(b"\\"))
    return backslashes % 2 == 0


def _misread_backticks(text: str) -> bool:
    """A backquoted substitution holding another unescaped backquote: bash would have ended it there."""
    if not text.startswith("`"):
        return False
    return len(text) < 2 or not text.endswith("`") or re.search(r"(?<!\\)`", text[1:-1]) is not None


def _spans_lines(node: Node, src: bytes) -> bool:
    """Whether tree-sitter ran a command or a word on past an unescaped newline (after a comment, say)."""
    if node.type in ("word", "number"):
        return _BARE_NEWLINE.search(src[node.start_byte : node.end_byte]) is not None
    if node.type not in ("command", "file_redirect", "herestring_redirect"):
        return False
    if any(k.type == "comment" for k in node.children[:-1]):
        return True
    gaps = list(_gaps(node, src))[1:-1]  # between children: a continuation right after a word joins it
    return any(_BARE_NEWLINE.search(gap) or _GLUED.fullmatch(gap) for gap in gaps)


def _collect(source: bytes, found: _Found, depth: int = 0) -> tuple[bytes, Node]:
    """Add every command in ``source`` to ``found``, in both readings when it has line continuations.

    Returns the reading with the continuations joined (bash's), and its tree.
    """
    root = _parse(source)
    joined = _w.join_continuations(source, root)
    readings = [(source, root)] if joined == source else [(source, root), (joined, _parse(joined))]
    for src, tree in readings:
        if tree.has_error:
            found.fail(f"it does not parse as bash near {_error_at(tree, src)!r}")
        _walk(src, tree, found, depth)
    return readings[-1]


def _walk(src: bytes, tree: Node, found: _Found, depth: int) -> None:
    stack = [tree]
    while stack:
        node = stack.pop()
        kind = node.type
        if _spans_lines(node, src):
            found.fail("tree-sitter and bash could end its commands at different lines")
        if kind == "comment" and not _starts_comment(node, src):
            found.fail("tree-sitter reads a comment where bash reads a word")
        if kind == "``" or kind == "command_substitution" and _misread_backticks(_w.source_text(node, src)):
            found.fail("tree-sitter and bash could pair its backquotes differently")
        if kind == "command":
            found.add(_words(node, src), depth)
        elif kind == "redirected_statement" and node.child_by_field_name("body") is None:
            # ``>a>b cmd 1>&-``: tree-sitter hangs the command's words on a redirection's target
            found.fail("tree-sitter reads its command words as a redirection's target")
        elif kind in ("declaration_command", "unset_command"):
            words = [_w.word_value(c, src) for c in node.children]
            found.add(tuple(w[0] if w and w[1] else None for w in words), depth)
        elif kind == "expansion" and _w.source_text(node, src).endswith("@P}"):
            found.fail("${…@P} expands a prompt string, which runs the commands in it")
        elif kind != "comment" and _may_hide_code(node, src):
            _hidden_code(node, src, found, depth)
        stack.extend(node.children)


def _hidden_code(node: Node, src: bytes, found: _Found, depth: int) -> None:
    """Substitutions inside text: quoted text bash may evaluate later is read as commands; a leaf tree-sitter
    did not look into (``${x#`…`}``'s pattern, ``${x=$$(…)}``'s word) where bash runs them is not understood.
    """  # noqa: D205
    if node.type in ("raw_string", "string", "ansi_c_string", "word"):
        value = _w.word_value(node, src)
        if value and _SUBSTITUTION.search(value[0]):
            found.text(value[0], depth, "quoted text with a command substitution")
            return
        if value is not None or node.child_count:  # decoded, or its parts are walked on their own
            return
    elif not node.is_named or node.child_count:
        return
    if _SUBSTITUTION.search(_w.source_text(node, src)):
        found.fail("a word tree-sitter reads as text holds a substitution bash would run")


def _error_at(tree: Node, src: bytes) -> str:
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return src[node.start_byte : node.start_byte + 20].decode("utf-8", "replace") or "the end"
        stack.extend(reversed(node.children))
    return "?"


# --- the analysis and rule matching -----------------------------------------------------------------------


@functools.lru_cache(maxsize=64)  # one permission check analyses a command up to four times
def analyze(command: str) -> Analysis:
    """Parse ``command`` and say which allow and deny rules could cover it."""
    try:
        source = command.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return Analysis(None, (), "it is not valid text", "it is not valid text")
    if len(source) > MAX_LENGTH or b"\0" in source:
        return Analysis(None, (), "it is too long or holds a NUL byte", "it is too long or holds a NUL byte")
    found = _Found()
    joined, root = _collect(source, found)
    reason = found.unknown
    plain = _Plain(joined)
    if not reason:
        try:
            plain.statements(root)
        except _NotPlain as exc:
            reason = str(exc)
    commands = tuple(found.commands)
    return Analysis(None if reason else tuple(plain.commands), commands, found.unknown, reason)


@functools.lru_cache(maxsize=512)
def _rule_words(prefix: str) -> tuple[str, ...]:
    """A rule's command words, read like a command (``git commit -m "x"`` → 4 words)."""
    found = analyze(prefix).plain
    return found[0][0] if found is not None and len(found) == 1 else tuple(prefix.split())


def _pattern(specifier: str) -> re.Pattern[str]:
    return re.compile(".*".join(map(re.escape, specifier.split("*"))), re.DOTALL)


def _allow_matches(specifier: str, words: tuple[str, ...]) -> bool:
    if specifier in ("", "*"):
        return True
    if specifier.endswith(":*"):
        wanted = _rule_words(specifier[:-2])
        return bool(wanted) and words[: len(wanted)] == wanted
    if "*" in specifier:
        return _pattern(specifier).fullmatch(" ".join(words)) is not None
    return words == _rule_words(specifier)


def allows(command: str, specifiers: Sequence[str]) -> bool:
    """Whether every simple command of ``command`` is plain and covered by one of the Bash rule specifiers."""
    plain = analyze(command).plain
    return plain is not None and all(
        any(_allow_matches(spec, words) for spec in specifiers for words in alternatives)
        for alternatives in plain
    )


def _deny_words(prefix: str) -> tuple[str, ...]:
    words = _rule_words(prefix)
    return (_w.command_base(words[0]), *words[1:]) if words else words


def _may_match_words(specifier: str, words: Words) -> bool:
    """Whether the rule covers the command for some value of the words known only at run time."""
    complete = None not in words
    known = tuple(w for w in words[: words.index(None)] if w is not None) if not complete else words
    text = " ".join(known)  # type: ignore[arg-type]
    if specifier.endswith(":*") or "*" not in specifier:
        wanted = _deny_words(specifier.removesuffix(":*"))
        if not wanted:
            return False
        if not specifier.endswith(":*"):
            return known == wanted if complete else known == wanted[: len(known)]
        if complete or len(known) >= len(wanted):
            return known[: len(wanted)] == wanted
        return known == wanted[: len(known)]
    if complete:
        return _pattern(specifier).fullmatch(text) is not None
    head, _, _ = specifier.partition("*")
    text = text + " " if known else ""
    return head.startswith(text) or text.startswith(head)


def may_match(specifier: str, command: str) -> bool:
    """Whether a Bash deny (or ask) rule specifier could apply to any command in ``command``."""
    found = analyze(command)
    if specifier in ("", "*") or found.unknown:
        return True
    return any(_may_match_words(specifier, words) for words in found.commands)
