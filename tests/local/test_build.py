from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openagent_local import LLAMA_CPP_VERSION, BuildError, build_server, find_server
from openagent_local._build import CMAKE_FLAGS, _download, _run


def test_a_complete_build_is_found(root: Path):
    found = find_server(root=root)
    assert found is not None
    assert found.binary == root / "llama-server" / LLAMA_CPP_VERSION / "llama-server"
    assert found.template("tool_use.jinja").is_file()
    assert build_server(root=root) == found  # nothing to do


def test_an_interrupted_build_is_not_found(root: Path):
    (root / "llama-server" / LLAMA_CPP_VERSION / "BUILD-INFO.json").unlink()
    assert find_server(root=root) is None


def test_another_version_is_not_found(root: Path):
    assert find_server("1.0.0", root=root) is None


def test_the_build_is_portable_and_offline():
    assert "-DGGML_NATIVE=OFF" in CMAKE_FLAGS  # native builds crash in the AMX path on some CPUs
    assert "-DLLAMA_USE_PREBUILT_UI=OFF" in CMAKE_FLAGS  # the default downloads a web UI
    assert "-DBUILD_SHARED_LIBS=OFF" in CMAKE_FLAGS  # the binary is copied out of the build tree alone


def test_progress_follows_the_percentages_of_the_build_output():
    seen: list[tuple[int, str]] = []
    lines = "print('-- configuring'); print('[  7%] Building a.o'); print('note'); print('[ 42%] Linking')"
    _run([sys.executable, "-c", lines], step="demo", progress=lambda p, line: seen.append((p, line)))
    assert seen == [(0, "-- configuring"), (7, "[  7%] Building a.o"), (7, "note"), (42, "[ 42%] Linking")]


def test_a_failing_step_is_a_build_error_with_the_tail_of_its_output():
    script = "import sys; [print('line', i) for i in range(100)]; sys.exit(3)"
    with pytest.raises(BuildError) as info:
        _run([sys.executable, "-c", script], step="cmake build")
    message = str(info.value)
    assert message.startswith("cmake build failed (exit status 3)")
    assert "line 99" in message
    assert "line 50" not in message


def test_missing_compilers_are_named_with_the_packages_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BuildError, match="apt-get install cmake build-essential"):
        build_server(root=tmp_path / "cache")


def test_without_pip_the_download_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")  # an interpreter without pip
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BuildError, match="pip is needed .* uv pip install pip"):
        _download(tmp_path, LLAMA_CPP_VERSION)
