"""Starting, reusing and stopping the real engine process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from openagent.errors import ProviderConnectionError
from openagent_local import ServerSpec, ensure_server, running_servers, stop_server
from openagent_local._server import ENGINE, _pid_running, ensure_server_sync, server_alive

SMALL = {"alias": "smollm2", "ctx_size": 512, "threads": 1}


def _props(server) -> dict:
    return httpx.get(f"http://127.0.0.1:{server.port}/props", timeout=10).json()


def _health(server) -> int:
    return httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=10).status_code


def _wait_gone(pid: int) -> bool:
    """Whether ``pid`` ends (or is a zombie: ended, waiting to be reaped) within ten seconds."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not _pid_running(pid):
            return True
        time.sleep(0.05)
    return False


def _child(code: str, root: Path, model: Path) -> str:
    prelude = f"from pathlib import Path\nroot, model = Path({str(root)!r}), Path({str(model)!r})\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_the_command_runs_the_engine_with_the_spec(model: Path, tmp_path: Path):
    spec = ServerSpec(model=model, alias="tiny", chat_template=tmp_path / "t.jinja", ctx_size=2048, threads=3)
    cmd = spec.command()
    assert cmd[:3] == [sys.executable, "-P", ENGINE]
    assert ENGINE.endswith("openagent_local/_engine.py")
    assert cmd[cmd.index("--model") + 1] == str(model)
    assert cmd[cmd.index("--alias") + 1] == "tiny"
    assert cmd[cmd.index("--chat-template") + 1] == str(tmp_path / "t.jinja")
    assert cmd[cmd.index("--ctx-size") + 1] == "2048"
    assert cmd[cmd.index("--threads") + 1] == "3"
    assert int(ServerSpec(model=model, alias="t").command()[-1]) >= 1  # default threads


def test_different_settings_get_different_servers(model: Path, tmp_path: Path):
    plain = ServerSpec(model=model, alias="tiny")
    assert plain.key != ServerSpec(model=model, alias="tiny", chat_template=tmp_path / "t.jinja").key
    assert plain.key != ServerSpec(model=model, alias="tiny", threads=2).key
    assert plain.key == ServerSpec(model=model, alias="tiny").key


def test_start_reuse_and_stop(root: Path, model: Path):
    spec = ServerSpec(model=model, **SMALL)
    server = ensure_server_sync(spec, root=root)
    try:
        assert _health(server) == 200
        assert _props(server)["model_alias"] == "smollm2"
        assert ensure_server_sync(spec, root=root) == server
        state = json.loads((root / "local" / "running" / f"{spec.key}.json").read_text())
        assert (state["pid"], state["port"], state["model"]) == (server.pid, server.port, str(model))
        assert running_servers(root) == [server]
    finally:
        assert stop_server(server, root=root)
    assert not server_alive(server)
    assert running_servers(root) == []
    assert not stop_server(server, root=root)
    assert "main loop exited" in Path(server.log or "").read_text()  # shut down, not killed


@pytest.mark.anyio
async def test_async_start_reuses_the_same_server(root: Path, model: Path):
    spec = ServerSpec(model=model, **SMALL)
    first = await ensure_server(spec, root=root)
    try:
        assert await ensure_server(spec, root=root) == first
    finally:
        stop_server(first, root=root)


def test_another_process_reuses_a_running_server(root: Path, model: Path):
    pid = _child(
        """
        from openagent_local._server import ServerSpec, ensure_server_sync
        spec = ServerSpec(model=model, alias="smollm2", ctx_size=512, threads=1)
        print(ensure_server_sync(spec, root=root, detach=True).pid)
        """,
        root,
        model,
    )
    server = ensure_server_sync(ServerSpec(model=model, **SMALL), root=root)
    try:
        assert server.pid == int(pid)
        assert server.owner_pid is None
    finally:
        assert stop_server(server, root=root)  # not ours: stopped by signal
    assert _wait_gone(server.pid)


def test_a_server_is_stopped_when_the_process_that_started_it_exits(root: Path, model: Path):
    pid = _child(
        """
        from openagent_local._server import ServerSpec, ensure_server_sync
        print(ensure_server_sync(ServerSpec(model=model, alias="smollm2", ctx_size=512, threads=1), root=root).pid)
        """,
        root,
        model,
    )
    assert _wait_gone(int(pid))
    assert running_servers(root) == []
    assert list((root / "local" / "running").glob("*.json")) == []


def test_a_dead_server_is_replaced(root: Path, model: Path):
    spec = ServerSpec(model=model, **SMALL)
    first = ensure_server_sync(spec, root=root)
    os.kill(first.pid, signal.SIGKILL)
    assert _wait_gone(first.pid)
    assert not server_alive(first)
    second = ensure_server_sync(spec, root=root)
    try:
        assert second.pid != first.pid
        assert _health(second) == 200
    finally:
        stop_server(second, root=root)


def test_state_naming_an_unrelated_process_is_replaced_without_touching_it(root: Path, model: Path):
    spec = ServerSpec(model=model, **SMALL)
    folder = root / "local" / "running"
    folder.mkdir(parents=True)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        fake = {"key": spec.key, "pid": bystander.pid, "port": 1, "model": str(model), "alias": "smollm2"}
        (folder / f"{spec.key}.json").write_text(json.dumps(fake))
        server = ensure_server_sync(spec, root=root)
        try:
            assert server.pid != bystander.pid
            assert bystander.poll() is None
        finally:
            stop_server(server, root=root)
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.parametrize(
    "content", ["{not json", '{"key": "k", "pid": "x"}', "[]"], ids=["torn", "typed", "list"]
)
def test_a_corrupt_state_file_is_replaced(root: Path, model: Path, content: str):
    spec = ServerSpec(model=model, **SMALL)
    folder = root / "local" / "running"
    folder.mkdir(parents=True)
    (folder / f"{spec.key}.json").write_text(content)
    server = ensure_server_sync(spec, root=root)
    try:
        assert _health(server) == 200
    finally:
        stop_server(server, root=root)


def test_a_model_the_engine_cannot_load_is_a_connection_error_quoting_its_log(root: Path, not_a_model: Path):
    with pytest.raises(ProviderConnectionError, match="did not become ready") as info:
        ensure_server_sync(ServerSpec(model=not_a_model, alias="broken"), root=root)
    assert info.value.provider == "local"
    # llama.cpp's own words from the log (it may exit from C++ before Python can add its line).
    assert "failed to load model" in str(info.value) or "could not serve" in str(info.value)
    assert running_servers(root) == []


def test_a_kept_alive_server_outlives_its_starter_and_exits_when_idle(root: Path, model: Path):
    pid = _child(
        """
        from openagent_local._server import ServerSpec, ensure_server_sync
        spec = ServerSpec(model=model, alias="smollm2", ctx_size=512, threads=1, keep_alive=3)
        print(ensure_server_sync(spec, root=root).pid)
        """,
        root,
        model,
    )
    [server] = running_servers(root)  # the starter has exited; the server has not
    assert server.pid == int(pid) and server.owner_pid is None
    assert ensure_server_sync(ServerSpec(model=model, **SMALL, keep_alive=3), root=root).pid == server.pid
    httpx.post(
        f"{server.base_url}/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
        timeout=30,
    )
    assert _wait_gone(server.pid), "idle for its keep-alive: it shuts itself down"
    assert "main loop exited" in Path(server.log or "").read_text()
    assert running_servers(root) == []
