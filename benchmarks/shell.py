"""The cost of deciding Bash rules on a real parse, and of running a command in the sandbox.

``python benchmarks/shell.py`` (from a venv with core and the tools plugin) prints, in one run:

- per command, the analyzer's uncached cost (`openagent._shell.analyze`, tree-sitter parse + checks) beside
  the shlex split it replaced (the floor: the cheapest thing that splits a command, wrongly);
- one permission check with allow and deny rules (`check_permission`, analysis cached as in a run);
- the first use: importing tree-sitter and its bash grammar, in a fresh interpreter, with and without
  cached bytecode;
- one Bash call's process start: ``bash -c true`` alone and inside the bwrap sandbox.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from openagent._permissions import check_permission
from openagent._shell import analyze

COMMANDS = {
    "short": "git status",
    "typical": "git diff --stat HEAD~1 -- src/ | tail -n 5 && ls -la 2>/dev/null",
    "quoted": 'git commit -m \'Fix the parser: handle "quotes" and $HOME\' --author="A <a@b.c>"',
    "hostile": "ls $'\\'' ; x='a[$(touch /tmp/p)]'; echo ${y@P} $((x)) # \\\n rm -rf ~",
    "long (2 kB)": " && ".join(f"echo line{i} >/dev/null" for i in range(80)),
}


def _shlex_split(command: str) -> list[str] | None:
    """The splitter the analyzer replaced (permissions.py before issue #15), as the floor."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def _per_call_us(func: Callable[[], object], calls: int = 200) -> float:
    """Microseconds of CPU per call, the best of 15 batches (CPU time: the machine is shared)."""
    best = float("inf")
    for _ in range(15):
        start = time.process_time()
        for _ in range(calls):
            func()
        best = min(best, (time.process_time() - start) / calls * 1e6)
    return best


def _first_use(cached: bool) -> float:
    """Milliseconds to import tree-sitter and parse one command, after ``import openagent``, fresh each time.

    Bytecode goes to a private cache folder: filled first when ``cached``, never written when not.
    """
    code = (
        "import time, openagent, openagent.permissions; t=time.perf_counter(); "
        "from openagent._shell import analyze; analyze('git status'); print((time.perf_counter()-t)*1000)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        if cached:
            subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
        argv = [sys.executable, *([] if cached else ["-B"]), "-c", code]
        runs = [
            float(subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout)
            for _ in range(5)
        ]
    return statistics.median(runs)


def _process_ms(argv: list[str], cwd: str) -> float:
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def main() -> None:
    results: dict[str, object] = {}
    print(f"{'command':<14}{'analyze µs':>12}{'shlex µs':>10}{'ratio':>8}   (CPU per call, uncached)")
    for name, command in COMMANDS.items():
        ours = _per_call_us(lambda c=command: analyze.__wrapped__(c))
        floor = _per_call_us(lambda c=command: _shlex_split(c))
        results[name] = {"analyze_us": round(ours, 1), "shlex_us": round(floor, 1)}
        print(f"{name:<14}{ours:>12.1f}{floor:>10.1f}{ours / floor:>7.1f}×")

    async def decide() -> None:
        await check_permission(
            "Bash",
            {"command": COMMANDS["typical"]},
            requires_permission=True,
            allowed=["Bash(git diff:*)", "Bash(tail:*)", "Bash(ls:*)"],
            disallowed=["Bash(rm:*)", "Bash(curl:*)"],
        )

    check = _per_call_us(lambda: anyio.run(decide), 50) - _per_call_us(lambda: anyio.run(anyio.sleep, 0), 50)
    results["check_permission_cached_us"] = round(check, 1)
    print(f"check_permission, analysis cached: {check:.1f} µs")
    for cached in (True, False):
        label = "first use (cached bytecode)" if cached else "first use (no bytecode)"
        results[label] = round(_first_use(cached), 1)
        print(f"{label}: {results[label]:.1f} ms")
    with tempfile.TemporaryDirectory() as cwd:
        bare = _process_ms(["bash", "-c", "true"], cwd)
        results["bash_ms"] = round(bare, 2)
        print(f"bash -c true: {bare:.2f} ms")
        if shutil.which("bwrap"):
            from openagent import AgentOptions
            from openagent_tools._sandbox import command_line, probe

            if probe() is None:
                line = command_line(["bash", "-c", "true"], cwd, AgentOptions(sandbox=True))
                boxed = _process_ms(line, cwd)
                results["sandboxed_bash_ms"] = round(boxed, 2)
                print(f"bash -c true in the sandbox: {boxed:.2f} ms ({boxed / bare:.1f}×)")
    out = Path(__file__).parent / "results" / "shell.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
