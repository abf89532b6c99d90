"""The Bash sandbox: each command inside bubblewrap (``bwrap``), on Linux.

With ``AgentOptions.sandbox`` enabled, a command sees the whole filesystem read-only except the working
directory and ``add_dirs`` (and a private ``/tmp``). Inside those, what other programs later run or trust
stays read-only (``.git``, ``.openagent``, ``.claude``, ``.mcp.json``, editor folders, shell start-up
files), and credential folders of the home directory and paths named by ``Read(…)`` deny rules are hidden.
It has no network unless ``network.allowedDomains`` holds ``"*"``, a PID namespace of its own with
``--die-with-parent`` (every process it starts, ``setsid`` ones included, dies when the command ends or is
killed), no capabilities, and a new session.

Where bwrap is missing or cannot create namespaces, `probe` says why (a warning once, the init message, a
note on every Bash result) and Bash runs under the permission rules alone: never silently, and never
auto-allowed. A command planned for the sandbox never runs outside it.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openagent import ConfigError
from openagent.plugin import (
    PROTECTED_DIRS,
    PROTECTED_FILES,
    SandboxNetworkConfig,
    SandboxSettings,
    rule_matches,
)

__all__ = [
    "Plan",
    "absent_protected",
    "auto_allowed",
    "command_line",
    "created_note",
    "plan",
    "probe",
    "sandbox_toolset",
    "settings_of",
    "without_secrets",
]

logger = logging.getLogger("openagent.tools.sandbox")

PROTECTED = tuple(sorted(PROTECTED_DIRS | PROTECTED_FILES))
"""Names kept read-only at the top of every writable folder: the permission rules' protected places, what
git, openagent, editors and shells read and act on later, outside the sandbox (a hook in ``.git/hooks``, a
``core.fsmonitor`` in ``.git/config``)."""
HIDDEN = (
    ".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc",
    ".pypirc", ".password-store", ".config/gcloud", ".config/gh", ".config/openagent",
)  # fmt: skip
"""Credential files and folders of the home directory, hidden from sandboxed commands."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How one Bash call runs."""

    sandboxed: bool
    auto_allow: bool = False
    """The sandbox runs it and ``autoAllowBashIfSandboxed`` is on: no rule or question is needed."""
    note: str | None = None
    """Said at the end of the tool result (the sandbox was not used, and why)."""


def settings_of(options: Any) -> dict[str, Any] | None:
    """The enabled sandbox settings of ``options`` (``True`` means the defaults), or ``None``.

    Raises:
        ConfigError: ``sandbox`` is not a bool or a mapping with the Claude Agent SDK's keys.
    """
    raw = getattr(options, "sandbox", None)
    if raw is None or raw is False:
        return None
    if raw is True:
        return {"enabled": True}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"sandbox must be True, False or a dict of SandboxSettings, not {raw!r}")
    _check_keys(raw, SandboxSettings.__annotations__, "sandbox")
    network = raw.get("network", {})
    if not isinstance(network, Mapping):
        raise ConfigError(f"sandbox.network must be a dict, not {network!r}")
    _check_keys(network, SandboxNetworkConfig.__annotations__, "sandbox.network")
    excluded = raw.get("excludedCommands", [])
    if not isinstance(excluded, list | tuple) or not all(isinstance(v, str) for v in excluded):
        raise ConfigError(f"sandbox.excludedCommands must be a list of strings, not {excluded!r}")
    return dict(raw) if raw.get("enabled") else None


def _check_keys(raw: Mapping[str, Any], known: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")


def _network(settings: Mapping[str, Any]) -> tuple[bool, str | None]:
    """Whether commands get the network, and a note when a network setting cannot take effect."""
    domains = list(settings.get("network", {}).get("allowedDomains", []))
    if "*" in domains:
        return True, None
    if domains:
        return False, "the network stays off: per-domain filtering (allowedDomains) is not supported"
    return False, None


def _base_flags(*, weaker: bool, network: bool) -> list[str]:
    flags = ["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    flags += ["--ro-bind", "/", "/"]
    # Weaker (containers that refuse a new /proc): the host's /proc, read-only; never the host's /dev.
    flags += ["--dev", "/dev", *(["--ro-bind", "/proc", "/proc"] if weaker else ["--proc", "/proc"])]
    flags += ["--tmpfs", "/tmp"]
    return [*flags, "--share-net"] if network else flags


@functools.cache
def probe(weaker: bool = False) -> str | None:
    """``None`` when bwrap can build the sandbox on this machine, else why not (logged once)."""
    reason = _probe(weaker)
    if reason:
        logger.warning("the Bash sandbox is not available: %s; Bash runs without it", reason)
    return reason


def _probe(weaker: bool) -> str | None:
    if not sys.platform.startswith("linux"):
        return f"it needs Linux and bubblewrap; this is {sys.platform}"
    bwrap, true = shutil.which("bwrap"), shutil.which("true") or "/bin/true"
    if bwrap is None:
        return "bubblewrap is not installed (apt-get install bubblewrap / dnf install bubblewrap)"
    try:
        done = subprocess.run(
            [bwrap, *_base_flags(weaker=weaker, network=False), "--", true], capture_output=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode:
        error = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        return f"bwrap cannot create its namespaces here ({error})"
    return None


def _excluded(command: str, settings: Mapping[str, Any]) -> bool:
    """``excludedCommands`` (``["docker"]``) covers the command when it covers every command in it."""
    entries = settings.get("excludedCommands") or []
    specifiers = [e if e.endswith(":*") or "*" in e else f"{e}:*" for e in entries]
    return any(rule_matches(f"Bash({s})", "Bash", {"command": command}) for s in specifiers)


def plan(command: str, options: Any, disable: bool = False) -> Plan:
    """How ``command`` runs under ``options`` (``disable``: the call asked for ``dangerouslyDisableSandbox``).

    Raises:
        ConfigError: The sandbox settings are malformed.
    """
    settings = settings_of(options)
    if settings is None:
        return Plan(False)
    if disable and settings.get("allowUnsandboxedCommands", True) is not False:
        return Plan(False, note="it ran outside the sandbox (dangerouslyDisableSandbox)")
    if _excluded(command, settings):
        return Plan(False, note="it ran outside the sandbox: sandbox.excludedCommands lists it")
    reason = probe(bool(settings.get("enableWeakerNestedSandbox")))
    if reason:
        return Plan(False, note=f"the sandbox is not available ({reason}); it ran without it")
    note = _network(settings)[1]
    if disable:
        note = "dangerouslyDisableSandbox is ignored: sandbox.allowUnsandboxedCommands is false"
    return Plan(True, auto_allow=settings.get("autoAllowBashIfSandboxed", True) is not False, note=note)


def auto_allowed(arguments: Mapping[str, Any], options: Any) -> bool:
    """The Bash tool's ``sandboxed`` hook: whether this call runs sandboxed and may run without asking."""
    command = arguments.get("command")
    if not isinstance(command, str):
        return False
    try:
        return plan(command, options, bool(arguments.get("dangerouslyDisableSandbox"))).auto_allow
    except ConfigError:
        return False  # the call itself reports the malformed settings


_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """The process environment less what looks like a credential (``*_API_KEY``, ``*_TOKEN`` …): a
    sandboxed command has no network to use them with, only the model's channel to leak them through.
    ``AgentOptions.env`` is passed whole: what it sets was meant for the command.
    """  # noqa: D205
    return {name: value for name, value in environ.items() if not _SECRET.search(name)}


def _roots(cwd: str, options: Any) -> list[Path]:
    roots = [Path(cwd), *(Path(cwd, d) for d in getattr(options, "add_dirs", None) or ())]
    return [r.resolve() for r in roots if r.is_dir()]


def _read_denied(options: Any, cwd: str) -> list[Path]:
    """Paths named by ``Read(…)`` deny rules without wildcards (``Read(.env)``, ``Read(//etc/secret/**)``)."""
    found = []
    for rule in getattr(options, "disallowed_tools", None) or ():
        match = re.fullmatch(r"Read\((.+?)(/\*\*?)?\)", rule.strip())
        if not match or re.search(r"[*?\[]", match.group(1)):
            continue
        spec = match.group(1)
        path = Path(spec[1:]) if spec.startswith("//") else Path(spec).expanduser()
        found.append(path if spec.startswith(("//", "~")) else Path(cwd, spec.removeprefix("./").lstrip("/")))
    return found


def absent_protected(cwd: str, options: Any) -> list[Path]:
    """The protected names missing from the writable folders: the sandbox cannot keep a command from
    creating them (a mount needs something to cover), so `created_note` reports the ones that appear.
    """  # noqa: D205
    return [p for p in (r / n for r in _roots(cwd, options) for n in PROTECTED) if not os.path.lexists(p)]


def created_note(absent: list[Path]) -> str | None:
    """Say (and log) which protected names a sandboxed command created: they act outside the sandbox."""
    created = [str(p) for p in absent if os.path.lexists(p)]
    if not created:
        return None
    logger.warning("a sandboxed Bash command created %s: review before git or openagent use it", created)
    return f"it created {', '.join(created)}, which other programs act on outside the sandbox: review it"


def command_line(argv: list[str], cwd: str, options: Any) -> list[str]:
    """``argv`` wrapped in bwrap: writable roots, protected names, hidden credentials, network, chdir."""
    settings = settings_of(options) or {}
    network = _network(settings)[0]
    line = [shutil.which("bwrap") or "bwrap"]
    line += _base_flags(weaker=bool(settings.get("enableWeakerNestedSandbox")), network=network)
    roots = _roots(cwd, options)
    for root in roots:
        line += ["--bind", str(root), str(root)]
    for protected in (root / name for root in roots for name in PROTECTED):
        if os.path.lexists(protected):
            line += ["--ro-bind", str(protected), str(protected)]
    home = Path.home()
    for path in [home / h for h in HIDDEN] + _read_denied(options, cwd):
        if not os.path.lexists(path) or any(r.is_relative_to(path) for r in roots):
            continue
        real = str(path.resolve())
        line += ["--tmpfs", real, "--remount-ro", real] if path.is_dir() else ["--ro-bind", "/dev/null", real]
    for socket in settings.get("network", {}).get("allowUnixSockets", []):
        line += ["--bind-try", socket, socket]
    return [*line, "--chdir", str(Path(cwd).resolve()), "--", *argv]


class _SandboxReport:
    """A toolset with no tools: it puts the sandbox's state in the init message."""

    def __init__(self, options: Any) -> None:
        self.options = options

    async def open(self) -> list[Any]:
        import anyio.to_thread

        settings = settings_of(self.options) or {}
        await anyio.to_thread.run_sync(probe, bool(settings.get("enableWeakerNestedSandbox")))
        return []

    async def aclose(self) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        settings = settings_of(self.options) or {}
        reason = probe(bool(settings.get("enableWeakerNestedSandbox")))
        network, note = _network(settings)
        state = {"enabled": True, "active": reason is None, "network": network}
        state |= {"reason": reason} if reason else {}
        state |= {"note": note} if note else {}
        return {"sandbox": state}


def sandbox_toolset(options: Any) -> _SandboxReport | None:
    """The ``register_toolsets`` factory: a report when the options enable the sandbox."""
    return _SandboxReport(options) if settings_of(options) is not None else None
