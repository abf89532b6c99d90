"""Workspace trust for the command line: a folder's powerful settings apply only once the user trusts it.

A cloned repository's ``.openagent/settings.toml``, ``.claude/settings*.json`` and ``.mcp.json`` can point
requests (and the user's key) at another endpoint, let tools run without asking, or start programs. Those
settings apply when the folder is trusted: by ``--trust``, by ``OPENAGENT_TRUST=1``, by the user file's
``trusted_folders``, or by an answer to the question ``run`` and ``chat`` ask on a terminal, remembered per
folder (its real path) together with a hash of its settings files, so a changed file asks again.
Otherwise the folder's safe settings still apply, and stderr says what was ignored.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

__all__ = ["TRUST_ENV", "Trust", "decide", "forget", "remember", "trust_file"]

TRUST_ENV = "OPENAGENT_TRUST"
"""``1``/``yes``/``true`` trusts the folder of this run, ``0``/``no``/``false`` refuses without asking."""
_YES, _NO = ("1", "yes", "true", "on"), ("0", "no", "false", "off")


@dataclass
class Trust:
    """Whether this run trusts its folder, what that decides, and why."""

    trusted: bool
    items: list[str] = field(default_factory=list)
    """The settings that take effect only when trusted, as ``"file: key = value"`` lines."""
    digest: str = ""
    """`openagent.settings.project_digest` of the folder when it was decided."""
    how: str = "nothing to trust"
    """What decided: ``--trust``, ``OPENAGENT_TRUST=1``, ``trusted_folders``, ``remembered``, ``answered``."""
    folder: str = ""

    def option(self) -> bool | str:
        """``AgentOptions.trust_project``: the approved digest (trusted while unchanged), else False."""
        return self.digest if self.trusted and self.digest else False

    def notice(self, user_file: Path) -> str | None:
        """The stderr line for a run that ignores the folder's powerful settings, or None."""
        if self.trusted or not self.items:
            return None
        lines = "\n".join(f"  {item}" for item in self.items)
        return (
            f"openagent: warning: {self.folder} is not trusted, so these settings of it are ignored (they "
            "can send your requests and keys elsewhere, let tools run without asking, or start programs):\n"
            f"{lines}\nopenagent: trust it with --trust, {TRUST_ENV}=1, `openagent trust`, or "
            f"trusted_folders in {user_file}"
        )


def trust_file() -> Path:
    """Where answers are remembered: ``trusted-folders.json`` in the user's config directory."""
    import platformdirs

    return Path(platformdirs.user_config_dir("openagent", appauthor=False)) / "trusted-folders.json"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    return folders if isinstance(folders, dict) else {}


def _save(folders: Mapping[str, Any]) -> None:
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"folders": folders}, handle, indent=1, sort_keys=True)
    os.replace(temp, path)


def remember(folder: str, digest: str, trusted: bool) -> None:
    """Record the answer for ``folder`` as its settings are now (``digest``)."""
    folders = _load()
    folders[folder] = {"digest": digest, "trusted": trusted, "at": datetime.now(UTC).isoformat()}
    _save(folders)


def forget(folder: str) -> bool:
    """Drop what was remembered for ``folder``; whether there was anything."""
    folders = _load()
    found = folders.pop(folder, None) is not None
    if found:
        _save(folders)
    return found


def _listed(folder: str, trusted_folders: Sequence[str]) -> bool:
    """Whether ``folder`` is one of the user's trusted folders or lies under one."""
    here = Path(folder)
    for entry in trusted_folders:
        root = Path(os.path.realpath(Path(entry).expanduser()))
        if here == root or here.is_relative_to(root):
            return True
    return False


def _ask(folder: str, items: list[str]) -> str:
    click.echo(f"openagent: {folder} has settings that apply only if you trust this folder:", err=True)
    for item in items:
        click.echo(f"  {item}", err=True)
    click.echo(
        "They can send your requests and keys elsewhere, let tools run without asking, or start programs.",
        err=True,
    )
    answer: str = click.prompt(
        "Trust this folder? [y] yes, remember · [o] only this time · [n] no, remember",
        default="n",
        show_default=False,
        err=True,
    )
    return answer.strip().lower()[:1]


def decide(
    cwd: Path,
    cli_items: list[str],
    *,
    flag: bool | None,
    env: Mapping[str, str],
    trusted_folders: Sequence[str],
    ask: bool,
) -> Trust:
    """Whether this run trusts ``cwd``: a flag, the variable, the user's list, a remembered answer, or (on a
    terminal, when ``ask``) the user's answer now; with none of them, not trusted.
    """  # noqa: D205
    from openagent.settings import project_digest, untrusted_settings

    folder = os.path.realpath(cwd)
    items = [*cli_items, *untrusted_settings(cwd)]
    if not items:
        return Trust(False, folder=folder)
    digest = project_digest(cwd)
    made = Trust(False, items, digest, "not trusted", folder)
    word = env.get(TRUST_ENV, "").strip().lower()
    if flag is not None:
        made.trusted, made.how = flag, "--trust" if flag else "--no-trust"
    elif word in _YES + _NO:
        made.trusted, made.how = word in _YES, f"{TRUST_ENV}={word}"
    elif _listed(folder, trusted_folders):
        made.trusted, made.how = True, "trusted_folders"
    elif (known := _load().get(folder)) and isinstance(known, dict) and known.get("digest") == digest:
        made.trusted, made.how = known.get("trusted") is True, "remembered"
    elif ask and sys.stdin.isatty() and sys.stderr.isatty():
        answer = _ask(folder, items)
        made.trusted, made.how = answer in ("y", "o"), "answered"
        if answer != "o":
            remember(folder, digest, made.trusted)
    return made
