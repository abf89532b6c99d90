"""Helpers the CLI tests share: where the command is, and a pseudo-terminal to drive ``openagent chat``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pexpect

__all__ = ["OPENAGENT", "PLUGIN_DIR", "Terminal"]

PLUGIN_DIR = Path(__file__).parent / "plugin"
OPENAGENT = str(Path(sys.executable).parent / "openagent")
"""The console script installed beside this interpreter."""

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]|[\r\x08]")


class Terminal:
    """A CLI process on a pty; `expect` waits for text in the output with the escape codes removed."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        env = {**env, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
        self.child = pexpect.spawn(
            OPENAGENT, args, cwd=str(cwd), env=env, dimensions=(50, 140), encoding="utf-8"
        )
        self.raw = ""
        self.pos = 0

    @property
    def text(self) -> str:
        """Everything printed so far, without escape codes."""
        return ANSI.sub("", self.raw)

    def expect(self, wanted: str, timeout: float = 30) -> None:
        """Wait until ``wanted`` appears after the previous match."""
        while (index := self.text.find(wanted, self.pos)) < 0:
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=timeout)
            except (pexpect.TIMEOUT, pexpect.EOF):
                raise AssertionError(f"{wanted!r} never appeared after:\n{self.text[self.pos :]}") from None
        self.pos = index + len(wanted)

    def prompt(self) -> None:
        """Wait for the input prompt."""
        self.expect("›")

    def type(self, line: str) -> None:
        """Type a line and press Enter."""
        self.child.send(line + "\r")

    def finish(self) -> int:
        """Wait for the process to end; its exit status."""
        try:
            self.raw += self.child.read()
        except pexpect.EOF:
            pass
        self.child.wait()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)
