"""Helpers of the viewer tests: a project whose sessions real runs write and the viewer serves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHROMIUM_ARGS = [  # no sandbox (tests run as root), no GPU, and no calls home: the machine has no network
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PLUGINS = "cli,viewer,openai,sqlite,redis,postgres"
SECRET = "viewer-test-secret-9f8e7d6c5b4a"  # in the served process's environment: it must never be shown


def launch_chromium(playwright: Any) -> Any:
    """Debian's Chromium (``OPENAGENT_CHROMIUM`` names another), launched headless by Playwright."""
    import shutil

    chromium = os.environ.get("OPENAGENT_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("chromium not found: install Debian's package (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)


@dataclass
class Project:
    """A working directory whose sessions the tests write (real runs) and serve."""

    cwd: Path
    data: Path
    store: str | None = None
    servers: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self, **more: str) -> dict[str, str]:
        return {
            **os.environ,
            "XDG_DATA_HOME": str(self.data),
            "OPENAGENT_PLUGINS": PLUGINS,
            "VIEWER_TEST_SECRET_TOKEN": SECRET,
            **more,
        }

    def agent(self, scenario: str, *, control: Path | None = None, session_id: str | None = None) -> str:
        """Run a scenario of agents.py to its end; its session id."""
        done = subprocess.run(
            self._agent_args(scenario, control, session_id),
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    def agents(self, *scenarios: str) -> dict[str, str]:
        """Run finished scenarios side by side (each in its own process); their session ids by name."""
        procs = {
            name: subprocess.Popen(
                self._agent_args(name, None, None),
                env=self.env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in scenarios
        }
        ids = {}
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            ids[name] = out.strip().splitlines()[-1]
        return ids

    def start_agent(self, scenario: str, control: Path) -> tuple[subprocess.Popen[str], str]:
        """Start a scenario that waits for the test; the process and the session id it writes to."""
        session_id = str(uuid.uuid4())
        proc = subprocess.Popen(
            self._agent_args(scenario, control, session_id), env=self.env(), stdout=subprocess.PIPE, text=True
        )
        self.servers.append(proc)
        return proc, session_id

    def _agent_args(self, scenario: str, control: Path | None, session_id: str | None) -> list[str]:
        args = [sys.executable, str(HERE / "agents.py"), scenario, str(self.cwd)]
        args += ["--store", self.store] if self.store else []
        args += ["--control", str(control)] if control else []
        return args + (["--session-id", session_id] if session_id else [])

    def serve(self, *args: str, **env: str) -> str:
        """Start ``openagent sessions serve`` here; the URL it prints."""
        command = [sys.executable, "-m", "openagent_cli", "sessions", "serve", "--port", "0", *args]
        command += ["--store", self.store] if self.store else []
        proc = subprocess.Popen(
            command,
            cwd=self.cwd,
            env=self.env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.servers.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the server prints its URL once it is bound
        if "serving" not in line:
            proc.kill()
            raise AssertionError(
                f"the viewer did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
            )
        return line.split("serving ", 1)[1].split()[0]

    def close(self) -> None:
        for proc in self.servers:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


def wait_until(check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def run_async(func: Callable[..., Any], *args: Any, backend: str = "asyncio") -> Any:
    """``anyio.run(func, *args)`` in a thread of its own (Playwright's sync API holds this thread's loop)."""
    import threading

    import anyio

    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(("ok", anyio.run(func, *args, backend=backend)))
        except BaseException as exc:  # handed back to the caller
            outcome.append(("error", exc))

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value
