"""``openagent sessions serve`` as a command: found through the plugin hook, clear errors, a clean stop."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import httpx
from viewer_support import Project


def _openagent(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openagent_cli", *args],
        cwd=project.cwd,
        env=project.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_viewer_plugin_adds_serve_to_the_sessions_group(project: Project) -> None:
    listed = _openagent(project, "sessions", "--help")
    assert listed.returncode == 0 and "serve" in listed.stdout
    helped = _openagent(project, "sessions", "serve", "--help")
    assert helped.returncode == 0
    for option in ("--store", "--host", "--port", "--open", "--token", "--project"):
        assert option in helped.stdout


def test_without_the_plugin_there_is_no_serve(project: Project) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openagent_cli", "sessions", "serve"],
        cwd=project.cwd,
        env={**project.env(), "OPENAGENT_PLUGINS": "cli"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "No such command 'serve'" in done.stderr


def test_an_unknown_store_is_a_usage_error(project: Project) -> None:
    done = _openagent(project, "sessions", "serve", "--store", "nosuch://x", "--port", "0")
    assert done.returncode == 2
    assert done.stderr.startswith("openagent: error:") and "nosuch" in done.stderr


def test_a_port_in_use_is_a_clear_error(project: Project) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _openagent(project, "sessions", "serve", "--port", str(port))
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_ctrl_c_stops_the_server_cleanly_even_with_a_page_following(project: Project) -> None:
    session_id = project.agent("demo")
    url = project.serve()
    proc = project.servers[-1]
    from openagent.plugin import project_key_for

    events = f"{url.rstrip('/')}/s/{project_key_for(project.cwd)}/{session_id}/events?after=0"
    with httpx.stream("GET", events, timeout=10) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        written = (
            project.data / "openagent" / "sessions" / project_key_for(project.cwd) / f"{session_id}.jsonl"
        )
        count = len(written.read_text().splitlines())
        assert [next(lines), next(lines)] == [f"id: {count}", "event: ops"]  # every entry, as one change
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
