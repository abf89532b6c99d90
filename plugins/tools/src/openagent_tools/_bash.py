"""The Bash tool: one shell command in its own process group, with a timeout and an output cap.

The command runs in a new session (``start_new_session``), so the whole group, background jobs included,
can be killed: when the command times out, when the run is cancelled or interrupted, and when the shell
exits while jobs it started in the background still hold its output open. POSIX only. With
``AgentOptions.sandbox`` enabled it runs inside bubblewrap (`openagent_tools._sandbox`), whose PID namespace
also takes down what ``setsid`` detached.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from typing import Annotated, Any

import anyio
from anyio.abc import ByteReceiveStream
from pydantic import Field

from openagent import ConfigError, ToolContext, ToolError, tool

from . import _sandbox

__all__ = ["bash"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000


class _Capture:
    """Keeps the first ``limit`` bytes of a stream and counts the rest (it keeps draining the pipe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    async def drain(self, stream: ByteReceiveStream | None) -> None:
        if stream is None:
            return
        try:
            async for chunk in stream:
                room = self.limit - len(self.kept)
                self.kept += chunk[:room] if room > 0 else b""
                self.dropped += max(0, len(chunk) - max(room, 0))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    def text(self) -> str:
        out = self.kept.decode("utf-8", errors="replace").rstrip("\n")
        if self.dropped:
            out += f"\n[output truncated: {self.dropped} more bytes not shown]"
        return out


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


BASH_DESCRIPTION = f"""Run a shell command (bash) in the working directory and return its output.

- timeout is in milliseconds (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); on timeout the command
  and everything it started are killed.
- stdout and stderr are returned (each cut after {MAX_OUTPUT_CHARS} characters); a non-zero exit code is an
  error result that shows the code.
- Each call is a fresh shell: `cd` and variables do not carry over. Processes left running in the background
  are killed when the command ends.
- Prefer Read, Glob and Grep over cat, find and grep; prefer Edit and Write over sed and echo redirection.
- When the sandbox is on, commands cannot write outside the working directory (nor to .git) or use the
  network. Set dangerouslyDisableSandbox only when a command truly needs that: it then needs approval."""


@tool("Bash", BASH_DESCRIPTION, requires_permission=True)
async def bash(
    command: str,
    context: ToolContext,
    timeout: Annotated[int, Field(ge=1, le=MAX_TIMEOUT_MS)] | None = None,  # noqa: ASYNC109 - Claude's name
    description: str | None = None,
    dangerouslyDisableSandbox: bool = False,
) -> Any:
    """Run a shell command.

    Args:
        command: The command line to run.
        context: Injected by the loop.
        timeout: Milliseconds before the command is killed (default 120000).
        description: A few words saying what the command does (shown to the user).
        dangerouslyDisableSandbox: Run outside the sandbox (needs approval); only when the sandbox is on.
    """
    if not command.strip():
        raise ToolError("command is empty")
    argv, env, how = _launch(command, context, dangerouslyDisableSandbox)
    absent = _sandbox.absent_protected(context.cwd, context.options) if how.sandboxed else []
    seconds = (timeout or DEFAULT_TIMEOUT_MS) / 1000
    out, err = _Capture(MAX_OUTPUT_CHARS), _Capture(MAX_OUTPUT_CHARS)
    try:
        with anyio.CancelScope(shield=True):  # a cancel while spawning would leak the started process
            process = await anyio.open_process(
                argv,
                cwd=context.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
    except OSError as exc:
        raise ToolError(f"could not start the shell in {context.cwd}: {exc}") from None
    try:
        with anyio.move_on_after(seconds) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(out.drain, process.stdout)
                group.start_soon(err.drain, process.stderr)
                await process.wait()
                _kill_group(process.pid)  # background jobs would keep the pipes open
    finally:
        _kill_group(process.pid)
        with anyio.CancelScope(shield=True):
            await process.aclose()
    notes = [n for n in (how.note, _sandbox.created_note(absent)) if n]
    return _report(out, err, process.returncode, seconds if scope.cancelled_caught else None, notes)


def _launch(command: str, context: ToolContext, disable: bool) -> tuple[list[str], dict[str, str], Any]:
    """The command line (wrapped in bwrap when sandboxed), its environment, and the sandbox's plan."""
    try:
        how = _sandbox.plan(command, context.options, disable)
    except ConfigError as exc:
        raise ToolError(str(exc)) from None
    argv = [_shell(), "-c", command]
    if how.sandboxed:
        argv = _sandbox.command_line(argv, context.cwd, context.options)
    inherited = _sandbox.without_secrets(os.environ) if how.sandboxed else os.environ
    return argv, {**inherited, **dict(getattr(context.options, "env", None) or {})}, how


bash.sandboxed = _sandbox.auto_allowed


def _report(
    out: _Capture, err: _Capture, code: int | None, timed_out: float | None, notes: list[str] | None = None
) -> dict[str, Any]:
    parts = [p for p in (out.text(), err.text(), *(f"[sandbox: {n}]" for n in notes or ())) if p]
    body = "\n".join(parts)
    if timed_out is not None:
        said = f"Command timed out after {timed_out:g} s and was killed"
        return {"content": f"{body}\n{said}" if body else said, "is_error": True}
    if code:
        said = f"Exit code {code}"
        return {"content": f"{body}\n{said}" if body else said, "is_error": True}
    return {"content": body or "(no output)"}
