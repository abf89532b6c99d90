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

from openagent._errors import ProviderConnectionError
from openagent_local import ServerSpec, ensure_server, running_servers, stop_server
from openagent_local._server import _pid_running, ensure_server_sync, server_alive


def _health(server) -> int:
    return httpx.get(f"http://127.0.0.1:{server.port}/health").status_code


def _args(server) -> list[str]:
    return httpx.get(f"http://127.0.0.1:{server.port}/args").json()["args"]


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
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_command_line_carries_model_alias_template_and_context(model: Path, tmp_path: Path):
    spec = ServerSpec(model=model, alias="tiny", chat_template=tmp_path / "t.jinja", ctx_size=2048)
    cmd = spec.command(Path("/bin/llama-server"), 8123)
    assert cmd[:3] == ["/bin/llama-server", "-m", str(model)]
    assert cmd[cmd.index("--port") + 1] == "8123"
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--chat-template-file") + 1] == str(tmp_path / "t.jinja")
    assert cmd[cmd.index("-c") + 1] == "2048"
    assert "--jinja" in cmd
    assert int(cmd[cmd.index("--threads") + 1]) >= 1


def test_threads_given_in_extra_args_replace_the_default(model: Path):
    cmd = ServerSpec(model=model, alias="tiny", extra_args=("-t", "3")).command(Path("/bin/llama-server"), 1)
    assert "--threads" not in cmd
    assert cmd[-2:] == ["-t", "3"]


def test_different_templates_get_different_servers(model: Path, tmp_path: Path):
    plain = ServerSpec(model=model, alias="tiny")
    templated = ServerSpec(model=model, alias="tiny", chat_template=tmp_path / "t.jinja")
    assert plain.key != templated.key
    assert plain.key == ServerSpec(model=model, alias="tiny").key


def test_start_reuse_and_stop(root: Path, model: Path):
    spec = ServerSpec(model=model, alias="tiny", extra_args=("--seed", "7"))
    server = ensure_server_sync(spec, root=root)
    try:
        assert _health(server) == 200
        assert _args(server)[-2:] == ["--seed", "7"]
        assert ensure_server_sync(spec, root=root) == server
        state = json.loads((root / "llama-server" / "running" / f"{spec.key}.json").read_text())
        assert (state["pid"], state["port"], state["model"]) == (server.pid, server.port, str(model))
        assert running_servers(root) == [server]
    finally:
        assert stop_server(server, root=root)
    assert not server_alive(server)
    assert running_servers(root) == []
    assert not stop_server(server, root=root)


@pytest.mark.anyio
async def test_async_start_reuses_the_same_server(root: Path, model: Path):
    spec = ServerSpec(model=model, alias="tiny")
    first = await ensure_server(spec, root=root)
    try:
        assert await ensure_server(spec, root=root) == first
    finally:
        stop_server(first, root=root)


def test_another_process_reuses_a_running_server(root: Path, model: Path):
    pid = _child(
        """
        from openagent_local._server import ServerSpec, ensure_server_sync
        print(ensure_server_sync(ServerSpec(model=model, alias="tiny"), root=root, detach=True).pid)
        """,
        root,
        model,
    )
    server = ensure_server_sync(ServerSpec(model=model, alias="tiny"), root=root)
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
        print(ensure_server_sync(ServerSpec(model=model, alias="tiny"), root=root).pid)
        """,
        root,
        model,
    )
    assert _wait_gone(int(pid))
    assert running_servers(root) == []
    assert list((root / "llama-server" / "running").glob("*.json")) == []


def test_a_dead_server_is_replaced(root: Path, model: Path):
    spec = ServerSpec(model=model, alias="tiny")
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
    spec = ServerSpec(model=model, alias="tiny")
    folder = root / "llama-server" / "running"
    folder.mkdir(parents=True)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        fake = {
            "key": spec.key,
            "pid": bystander.pid,
            "port": 1,
            "model": str(model),
            "alias": "tiny",
            "binary": str(root / "llama-server" / "11434.0.0" / "llama-server"),
        }
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


def test_a_corrupt_state_file_is_replaced(root: Path, model: Path):
    spec = ServerSpec(model=model, alias="tiny")
    folder = root / "llama-server" / "running"
    folder.mkdir(parents=True)
    (folder / f"{spec.key}.json").write_text("{not json")
    server = ensure_server_sync(spec, root=root)
    try:
        assert _health(server) == 200
    finally:
        stop_server(server, root=root)


def test_a_server_that_cannot_start_is_a_connection_error_quoting_its_log(root: Path, tmp_path: Path):
    broken = tmp_path / "broken.gguf"
    broken.write_text("FAIL")
    with pytest.raises(ProviderConnectionError, match="error loading model: not a gguf file") as info:
        ensure_server_sync(ServerSpec(model=broken, alias="broken"), root=root)
    assert info.value.provider == "local"
    assert running_servers(root) == []


def test_a_server_that_cannot_bind_its_port_is_reported(root: Path, tmp_path: Path):
    taken = tmp_path / "taken.gguf"
    taken.write_text("BIND")
    with pytest.raises(ProviderConnectionError, match="couldn't bind"):
        ensure_server_sync(ServerSpec(model=taken, alias="taken"), root=root)
    log = (root / "llama-server" / "running").glob("*.log")
    assert len(list(log)) == 1
