"""Scenario (g): a typical ported program, end to end (process start to exit), on openagent and on Claude.

The program is written for the Claude Agent SDK (a one-shot ``query`` whose model reads a file with the Read
tool, then answers); only its import line differs between the two runs. Both talk to the same scripted
server over the Anthropic messages wire: openagent through its anthropic plugin, claude-agent-sdk through its
bundled Claude Code CLI (``ANTHROPIC_BASE_URL`` pointing at the server). Each is timed with its bytecode
cached (a warm ``PYTHONPYCACHEPREFIX``) and without (an empty one); the median of ``runs`` is kept.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROGRAM = """
import anyio

from {sdk} import AssistantMessage, ClaudeAgentOptions, ResultMessage, TextBlock, query


async def main():
    options = ClaudeAgentOptions(model="claude-sonnet-4-5", max_turns=3, cwd={cwd!r})
    async for message in query(prompt="Read notes.txt and tell me what it says.", options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(f"Claude: {{block.text}}")
        elif isinstance(message, ResultMessage):
            print(f"Done: {{message.subtype}} in {{message.num_turns}} turns")


anyio.run(main)
"""
SDKS = {"openagent": "openagent.compat.claude", "claude-agent-sdk": "claude_agent_sdk"}


def _turns(notes: Path) -> list[dict[str, Any]]:
    """The model's turns, in order; registered again for every run (which drops what a run left), with the
    answer twice: claude-agent-sdk's CLI sometimes asks once more after answering.
    """
    read = {"name": "Read", "arguments": {"file_path": str(notes)}, "id": "toolu_read_1"}
    answer = {"text": ["It says: ship ", "on Friday."]}
    return [{"tool_calls": [read]}, answer, answer]


def _run_once(server: Any, sdk: str, work: Path, env: dict[str, str]) -> tuple[float, str]:
    server.add_script("claude-sonnet-4-5", _turns(work / "notes.txt"))
    program = work / f"ported_{sdk.replace('-', '_')}.py"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=300
    )
    wall = time.perf_counter() - started
    if done.returncode != 0 or "Done: success" not in done.stdout:
        raise RuntimeError(f"{sdk} failed ({done.returncode}): {done.stdout[-500:]} {done.stderr[-1500:]}")
    return wall, done.stdout


def scenario_ported(server: Any, runs: int = 5) -> dict[str, Any]:
    """Median wall time per SDK and bytecode state, and openagent's share of claude-agent-sdk's time."""
    out: dict[str, Any] = {"runs": runs}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "notes.txt").write_text("ship on Friday\n")
        (work / "home").mkdir()
        base = {
            **os.environ, "HOME": str(work / "home"), "ANTHROPIC_BASE_URL": server.root,
            "ANTHROPIC_API_KEY": "sk-bench", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "OPENAGENT_PLUGINS": "anthropic,tools", "XDG_DATA_HOME": str(work / "data"),
        }  # fmt: skip
        base.pop("OPENAGENT_MODEL", None)
        for sdk, module in SDKS.items():
            if importlib.util.find_spec(module.split(".")[0]) is None:
                out[sdk] = {"skipped": f"{module} is not installed"}
                continue
            (work / f"ported_{sdk.replace('-', '_')}.py").write_text(
                PROGRAM.format(sdk=module, cwd=str(work))
            )
            row: dict[str, Any] = {}
            for state in ("cached", "uncached"):
                cache = work / f"pycache-{sdk}-{state}"
                env = {**base, "PYTHONPYCACHEPREFIX": str(cache)}
                if state == "cached":  # one run that writes the bytecode, not timed
                    _run_once(server, sdk, work, {**env, "PYTHONDONTWRITEBYTECODE": ""})
                else:
                    env["PYTHONDONTWRITEBYTECODE"] = "1"
                walls = [_run_once(server, sdk, work, env)[0] for _ in range(runs)]
                row[f"{state}_s"] = statistics.median(walls)
                row[f"{state}_runs_s"] = walls
            out[sdk] = row
            cached, uncached = row["cached_s"] * 1000, row["uncached_s"] * 1000
            print(f"  {sdk:18} cached {cached:7.0f} ms  uncached {uncached:7.0f} ms")
    ours, theirs = out.get("openagent", {}), out.get("claude-agent-sdk", {})
    if "cached_s" in ours and "cached_s" in theirs:
        for state in ("cached", "uncached"):
            out[f"share_{state}"] = ours[f"{state}_s"] / theirs[f"{state}_s"]
        print(f"  openagent takes {out['share_cached']:.1%} of claude-agent-sdk's time (cached), "
              f"{out['share_uncached']:.1%} (uncached)")  # fmt: skip
    return out
