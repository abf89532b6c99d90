"""The differential fuzz of the Bash analyzer: what it allows, real bash runs only as allowed.

Hypothesis builds commands from bash's grammar — quoting of every kind, comments, expansions,
substitutions, redirections, separators, line continuations, nesting (subshells, groups, functions,
``bash -c``, ``eval``), wrappers — over a small vocabulary: ``ls``, ``echo``, ``printf``, ``true`` are
allowed (``Bash(ls:*)``, ``Bash(echo:*)``, ``Bash(printf:*)``, ``Bash(true)``), ``touch`` and ``id`` are
denied (``Bash(touch:*)``, ``Bash(id:*)``), ``mkdir`` is neither. Each command the analyzer allows, or
does not deny, runs under real bash in a throwaway directory with ``strace -ff`` recording every
``execve`` and every call that writes a path:

- allowed: only allowed programs (and the transparent wrappers the rules look through) were executed, and
  nothing at all was written (not even inside the directory: allowed commands may redirect only to
  ``/dev/null``);
- not denied: ``touch`` and ``id`` were never executed.

``OPENAGENT_FUZZ_EXAMPLES`` sets the count (``nox -s fuzz``: 100,000; the security session: a few hundred).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from openagent._shell import allows, may_match

EXAMPLES = int(os.environ.get("OPENAGENT_FUZZ_EXAMPLES", "300"))
pytestmark = [
    pytest.mark.fuzz,
    pytest.mark.skipif(
        shutil.which("strace") is None or shutil.which("bwrap") is None,
        reason="needs strace and bwrap (the security session installs them)",
    ),
]

ALLOW = ["ls:*", "echo:*", "printf:*", "true"]
DENY = ["touch:*", "id:*"]
ALLOWED_PROGRAMS = {"ls", "echo", "printf", "true", "timeout", "nice", "nohup", "stdbuf", "time"}
DENIED_PROGRAMS = {"touch", "id"}
SINKS = ("/dev/null", "/dev/tty", "/dev/fd/", "/proc/self/fd/")
TRACED = "execve,open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,link,linkat,symlink,symlinkat,truncate"
# A write counts whether or not it succeeded: outside the work folder the file system is read-only (the
# command runs confined, below), so an escape shows as a refused write.
WRITES = re.compile(
    r'^(?:open|openat|creat|mkdir|mkdirat|rename|renameat|renameat2|unlink|unlinkat|link|linkat|symlink|symlinkat|truncate)\((?:[^"]*?)"([^"]*)"(.*)\)\s+= -?\d+'
)
EXECS = re.compile(r'^execve\("([^"]*)", (\[.*?\]), .*\)\s+= 0')


# --- the grammar -----------------------------------------------------------------------------------------


def _name_forms(name: str) -> list[str]:
    head, tail = name[0], name[1:]
    return [
        name, name, name, f"'{name}'", f'"{name}"', f"\\{name}", f"{head}\\{tail}", f"{head}''{tail}",
        f"$'{name}'", f"$'\\x{ord(head):02x}{tail}'", f"/usr/bin/{name}", f"{head}\\\n{tail}",
        f"command {name}", f"env {name}", f"nice -n 1 {name}", f"timeout 5 {name}", f"nohup {name}",
        f"FOO=1 {name}", f"x={name}; $x", f"${{x:-{name}}}", f"$(echo {name})", f"{{{name},}}", f"{name}#x",
    ]  # fmt: skip


NAMES = st.sampled_from(["ls", "echo", "printf", "true", "touch", "id", "mkdir"]).flatmap(
    lambda name: st.sampled_from(_name_forms(name))
)
ATOMS = st.sampled_from(
    [
        "-la", "x", "a b", "'a b'", '"a b"', "$'a\\tb'", "$'\\''", "a#b", "#c", "\\;", "';'", "x\\ y", "*",
        "{a,b}", "~", "$x", "${x}", "${x=1}", "${x:-y}", "${#x}", "$((1+2))", "${x@P}", "$'\\n'", "\\\n",
        "'$(id)'", '"\\$(id)"', "a[$(id)]", "'a[$(id)]'", "--", "-", "\"$(echo x)\"", "$\"x\"", "!x", "%s",
    ]
)  # fmt: skip
REDIRECTIONS = st.sampled_from(
    [
        "", "", "", ">/dev/null", "2>&1", "2>/dev/null", "&>/dev/null", ">&2", "> out", ">> out", "2> err",
        "> {OUT}/f", ">& {OUT}/g", "<<< x", "</dev/null", ">|/dev/null", "> /dev/null > out", "1>&-",
    ]
)  # fmt: skip
SEPARATORS = st.sampled_from([" ; ", " && ", " || ", " | ", " & ", "\n", ";", " |& ", " # c\n", "\n\n"])


def _simple(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    argument = st.one_of(ATOMS, ATOMS, inner.map(lambda c: f"$({c})"), inner.map(lambda c: f"`{c}`"))
    argument |= (
        inner.map(lambda c: f"<({c})")
        | inner.map(lambda c: f'"$({c})"')
        | inner.map(lambda c: f"${{x=$({c})}}")
    )
    return st.builds(
        lambda name, args, redirect: " ".join([name, *args, redirect]).strip(),
        NAMES,
        st.lists(argument, max_size=3),
        REDIRECTIONS,
    )


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    joined = st.builds(lambda a, sep, b: f"{a}{sep}{b}", inner, SEPARATORS, inner)
    wrapped = st.sampled_from(
        ["( {} )", "{{ {}; }}", "bash -c {q}", "sh -c {q}", "eval {q}", "f() {{ {}; }}; f", "if true; then {}; fi",
         "{} # trailing comment", "# comment\n{}", "ls $(\n{}\n)", "ls <<EOF\n$({})\nEOF", "true <<'EOF'\n{}\nEOF"]
    )  # fmt: skip
    nested = st.builds(lambda form, c: form.format(c, q=shlex.quote(c)), wrapped, inner)
    return st.one_of(joined, nested, _simple(inner))


COMMANDS = st.recursive(_simple(st.just("true")), _compound, max_leaves=6)

# Commands built to be allowed, or nearly: allowed names in every spelling, arguments that name the denied
# programs, separators and quotes placed so that a misreading would run them.
PLAIN_NAMES = st.sampled_from(
    ["ls", "echo", "printf", "true", "'ls'", '"echo"', "l\\s", "e''cho", "$'ls'", "$'\\x6cs'", "timeout 5 ls",
     "nice -n 1 echo", "nohup true", "FOO=1 ls", "A=1 B='x y' echo", "time -p ls", "stdbuf -oL ls", "ls\\\n"]
)  # fmt: skip
PLAIN_ARGS = st.sampled_from(
    ["touch", "id", "-la", "'touch x'", '"id"', "$'\\nid'", "$'a\\x27b'", "a#b", "'#'", "\\#", "x#;id",
     "'\\'", '"a\\"b"', "\\\nid", "$'\\''", "\\'", "'a\nb'", '"x\ny"', "%s\\n", "--", "*", "{a,b}",
     "~", "x=1", "';id'", "\\;id", "\\|id", "\\&id", "$'\\x3b'id", "'$(id)'", "\\$(id)", '"\\`id\\`"']
)  # fmt: skip
PLAIN_TAILS = st.sampled_from(
    ["", "", " 2>&1", " >/dev/null", " 2>/dev/null", " &>/dev/null", " >&2", " </dev/null", " # id", " #id\n",
     " ;", " &", " | ls", " && echo", " || true", "\n# c\ntrue", " 1>&-", " >/dev/null 2>&1"]
)  # fmt: skip
PLAINISH = st.builds(
    lambda name, args, tail: " ".join([name, *args]) + tail,
    PLAIN_NAMES,
    st.lists(PLAIN_ARGS, max_size=4),
    PLAIN_TAILS,
)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A grammar command, sometimes with a character that bash reads specially dropped in anywhere."""
    command = draw(st.one_of(COMMANDS, PLAINISH, st.lists(PLAINISH, min_size=2, max_size=3).map("; ".join)))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(command)))
        command = command[:at] + draw(st.sampled_from(list("'\"\\$`#;&|<>(){}*~ \n\t="))) + command[at:]
    return command


# --- running it --------------------------------------------------------------------------------------------


def _events(trace: Path) -> Iterator[str]:
    """Every traced call in the order it returned, less the first (strace starting bash).

    One file for every process (``strace -f``): a call another process interrupted comes back as
    ``<unfinished ...>`` and ``<... resumed>``, joined here.
    """
    pending: dict[str, str] = {}
    first = True
    for line in trace.read_text(errors="replace").splitlines():
        pid, _, call = line.partition(" ")
        call = call.lstrip()  # strace pads the pid to five columns (pids are small in bwrap's namespace)
        if call.endswith("<unfinished ...>"):
            pending[pid] = call.removesuffix("<unfinished ...>")
            continue
        if call.startswith("<... ") and pid in pending:
            call = pending.pop(pid) + call.split("resumed>", 1)[-1]
        if first:
            first = False
            continue
        yield call


def _run(command: str, base: Path) -> tuple[list[str], list[str]]:
    """Run ``command`` under strace in ``base/work``: the programs it executed, the paths it wrote."""
    work, out, trace = base / "work", base / "out", base / "trace" / "t"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(out), "LC_ALL": "C"}
    strace = ["strace", "-f", "-qq", "--seccomp-bpf", "-e", "signal=none", "-e", f"trace={TRACED}"]
    try:
        subprocess.run(
            [*_confined(base), *strace, "-s", "4096", "-o", str(trace), "bash", "-c", command],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pass  # whatever ran until then is in the trace
    programs, written = [], []
    for line in _events(trace):
        if match := EXECS.match(line):
            programs.append(f"{Path(match.group(1)).name} {match.group(2)}")
        elif (match := WRITES.match(line)) and (not line.startswith("open") or _writes(match.group(2))):
            if not match.group(1).startswith(SINKS):
                written.append(match.group(1))
    return programs, written


def _confined(base: Path) -> list[str]:
    """bubblewrap around each generated command: the generated commands are hostile by construction (a
    redirection to ``/bin/ls`` is a valid word of the grammar), so the machine is read-only to them but for
    ``base``, with no network and every process killed with the run.
    """
    return [
        "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(base), str(base), "--unshare-all", "--die-with-parent", "--new-session",
    ]  # fmt: skip


def _program(executed: str) -> str:
    """The program an ``execve`` ran; glibc's ``execvp`` retries a file the kernel refused (ENOEXEC, seen
    here under load) as ``/bin/sh FILE ARGS``: that is still FILE.
    """
    name, _, argv = executed.partition(" ")
    fallback = re.match(r'\["/bin/sh", "(/[^"]+)"', argv)
    return Path(fallback.group(1)).name if name == "sh" and fallback else name


def _writes(flags: str) -> bool:
    return any(flag in flags for flag in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(mutated())
def test_bash_runs_only_what_the_analyzer_allows(command: str) -> None:
    with tempfile.TemporaryDirectory(prefix="oa-fuzz-") as folder:
        base = Path(folder)
        for name in ("work", "out", "trace"):
            (base / name).mkdir()
        command = command.replace("{OUT}", str(base / "out"))  # a folder outside the working directory
        allowed = allows(command, ALLOW)
        denied = any(may_match(rule, command) for rule in DENY)
        event("allowed" if allowed else "denied" if denied else "asked (runs under bypassPermissions)")
        if not allowed and denied:
            return  # neither oracle applies: the command would not run unasked
        programs, written = _run(command, base)
    names = {_program(line) for line in programs}
    if allowed:
        assert names <= ALLOWED_PROGRAMS, f"{command!r} was allowed and executed {programs}"
        assert written == [], f"{command!r} was allowed and wrote {written}"
    assert not names & DENIED_PROGRAMS, f"{command!r} was not denied and executed {programs}"


def test_the_oracle_sees_programs_and_refused_writes_of_a_confined_command(tmp_path: Path) -> None:
    """The control: the oracle reports what bash ran and every write it tried, refused ones included."""
    for name in ("work", "out", "trace"):
        (tmp_path / name).mkdir()
    target = "/usr/bin/openagent-fuzz-sentinel"
    programs, written = _run(f"echo hi > {target}; ls; touch {tmp_path}/out/x", tmp_path)
    assert [_program(p) for p in programs] == ["ls", "touch"]
    assert written == [target, f"{tmp_path}/out/x"]
    assert not Path(target).exists() and (tmp_path / "out" / "x").exists()  # confined: only base is writable
