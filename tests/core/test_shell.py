"""The Bash analyzer (`openagent._shell`): plain commands for allow rules, every command for deny rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from openagent._shell import MAX_LENGTH, allows, analyze, may_match

READ_ONLY = ["git status:*", "ls:*"]


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("git status", [("git", "status")]),
        ("'git' \"status\"", [("git", "status")]),
        ("g\\it st''at\"\"us", [("git", "status")]),
        ("echo $'a\\tb' $'\\x41\\101\\u00e9' $'it\\'s'", [("echo", "a\tb", "AAé", "it's")]),
        ('echo "a\\"b" "\\$x" "c\\d" \'$x\'', [("echo", 'a"b', "$x", "c\\d", "$x")]),
        ("echo a#b 'x#y'", [("echo", "a#b", "x#y")]),
        ("ls # a comment; rm -rf /", [("ls",)]),
        ("git \\\n  status", [("git", "status")]),
        ("echo 'a\\\nb'", [("echo", "a\\\nb")]),
        ("FOO=1 BAR='x y' git status", [("git", "status")]),
        ("git status 2>&1 >/dev/null </dev/null 1>&-", [("git", "status")]),
        ("ls; ls && ls || ls | ls |& ls & ls\nls", [("ls",)] * 8),
    ],
)
def test_plain_commands_and_their_words(command: str, words: list[tuple[str, ...]]) -> None:
    plain = analyze(command).plain
    assert plain is not None and [alternatives[0] for alternatives in plain] == words


def test_glob_and_brace_words_never_equal_a_rule_word() -> None:
    plain = analyze("ls *.py {a,b} ~").plain
    assert plain is not None
    assert plain[0][0][0] == "ls" and all(w.startswith("\0") for w in plain[0][0][1:3])
    assert plain[0][0][3] == "~"  # tilde expansion only changes an argument's value
    assert not allows("git {status,push}", ["git status:*"])
    assert allows("ls *.py", ["ls *"])


def test_transparent_wrappers_are_looked_through() -> None:
    assert allows("timeout -s KILL 10 nice -n 5 git status", READ_ONLY)
    assert allows("time -p nohup stdbuf -oL ls", READ_ONLY)
    assert not allows("timeout --unknown 10 git status", READ_ONLY)
    for wrapper in ("command", "exec", "env", "sudo", "xargs", "builtin"):
        assert not allows(f"{wrapper} ls", READ_ONLY), wrapper
    assert allows("sudo ls", ["sudo ls:*"])


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls $(id)", "it contains a command substitution"),
        ("ls `id`", "it contains a command substitution"),
        ("ls <(id)", "it contains a process substitution"),
        ("ls $x", "it contains a parameter expansion"),
        ("ls ${x=1}", "it contains a parameter expansion"),
        ("ls $((1+1))", "it contains an arithmetic expansion"),
        ("ls > out", "redirects input or output to something other than /dev/null"),
        ("ls >& out", "redirects input or output to something other than /dev/null"),
        ("ls 2>/dev/null -la", "redirects input or output to something other than /dev/null"),
        ("ls <<< x", "it has a here-string"),
        ("f() { ls; }", "it defines a function"),
        ("(ls)", "it runs a subshell"),
        ("{ ls; }", "it has a { … } group"),
        ("PATH=/tmp ls", "it sets PATH"),
        ("GIT_DIR=x git status", "it sets GIT_DIR"),
        ("LD_PRELOAD=x.so ls", "it sets LD_PRELOAD"),
        ("x=1", "an assignment without a command"),
        ("ls 'unclosed", "it does not parse as bash"),
        ("a#b", "it does not parse as bash"),
        ("~/bin/ls", "is not a plain word"),
        ("l* -la", "a command name is known only when it runs"),
        ("if true; then ls; fi", "it uses if statement"),
    ],
)
def test_what_is_not_plain_says_why(command: str, reason: str) -> None:
    analysis = analyze(command)
    assert analysis.plain is None and analysis.not_plain is not None
    assert reason in analysis.not_plain
    assert not allows(command, READ_ONLY)


@pytest.mark.parametrize(
    ("rule", "command", "matches"),
    [
        ("rm:*", "rm -rf x", True),
        ("rm:*", "'rm' x", True),
        ("rm:*", "/bin/rm x", True),
        ("rm:*", "./rm x", True),
        ("/usr/bin/rm:*", "rm x", True),
        ("rm:*", "echo rm", False),
        ("rm:*", "rmdir x", False),
        ("rm:*", "ls && sudo -u root -- rm x", True),
        ("rm:*", "env -i -u B A=1 rm x", True),
        ("rm:*", "xargs -0 -n 2 rm", True),
        ("rm:*", "find . -name '*.pyc' -exec rm {} +", True),
        ("rm:*", "find . -name x -print", False),
        ("rm:*", "command -v rm", False),
        ("rm:*", "watch 'rm x'", True),
        ("rm:*", "timeout 5 rm x", True),
        ("rm:*", "git commit -m 'rm old files'", False),
        ("git push:*", "git push origin", True),
        ("git push:*", "git $x origin", True),
        ("git push:*", "git status", False),
        ("git push:*", "git", False),
        ("rm -rf *", "rm -rf /", True),
        ("rm -rf *", "rm -r /", False),
        ("rm -rf *", "rm $flags /", True),
        ("rm -rf /", "rm -rf /", True),
        ("rm -rf /", "rm -rf /tmp", False),
        ("touch:*", "echo 'Fix `touch` handling'", True),
        ("touch:*", "echo 'Fix `ls` handling'", False),
    ],
)
def test_deny_rules_match_any_command_anywhere(rule: str, command: str, matches: bool) -> None:
    assert may_match(rule, command) is matches


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("$cmd x", "a command name is known only when it runs"),
        ('eval "$x"', "eval runs text known only when it runs"),
        ('bash -c "$x"', "a shell gets arguments known only when it runs"),
        ("echo x | sh", "a shell reads its commands from standard input"),
        ("bash -s", "a shell reads its commands from standard input"),
        ('source "$f"', "source reads a file known only when it runs"),
        ("alias ls=rm", "alias can change what a command name runs"),
        ("hash -p /bin/rm ls", "hash can change what a command name runs"),
        ("echo ${x@P}", "expands a prompt string"),
        ("ls # c\n\\rm x", "could end its commands at different lines"),
        ("ls `ls` `rm`", "could pair its backquotes differently"),
        ("ls <<EOF\n$(r\\\nm x)\nEOF", "could end its commands at different lines"),
        ("ls\\\n-la", "could end its commands at different lines"),
        ("ls 'x", "it does not parse as bash"),
        ("ls\x00rm", "holds a NUL byte"),
        ("ls \ud800", "it is not valid text"),
        ("x" * (MAX_LENGTH + 1), "it is too long"),
        ("eval " * 10 + "rm", "nests commands too deeply"),
        ("nice " * 40 + "rm", "wrappers nest too deeply"),
    ],
)
def test_what_cannot_be_understood_matches_every_deny_rule(command: str, reason: str) -> None:
    analysis = analyze(command)
    assert analysis.unknown is not None and reason in analysis.unknown
    assert may_match("anything-at-all:*", command) and analysis.plain is None


def test_deep_nesting_fails_closed_without_recursion_errors() -> None:
    deep = "$(" * 3000 + "rm" + ")" * 3000
    assert may_match("rm:*", deep) and not allows(deep, ["rm:*"])
    chain = " && ".join(["ls"] * 150)
    assert allows(chain, READ_ONLY) and not may_match("rm:*", chain)
    longer = " && ".join(["ls"] * 3000)  # deeper than the plain check goes: asked about, not allowed
    assert not allows(longer, READ_ONLY) and may_match("ls:*", longer) and not may_match("rm:*", longer)


def test_rule_words_are_read_like_a_command() -> None:
    assert allows('git commit -m "fix it"', ['git commit -m "fix it":*'])
    assert allows("git commit -m 'fix it' --amend", ["git commit -m 'fix it':*"])
    assert not allows("git commit -m fixit", ['git commit -m "fix it":*'])


def test_import_openagent_does_not_load_tree_sitter() -> None:
    code = "import openagent, openagent._permissions, sys; print('tree_sitter' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "False"
