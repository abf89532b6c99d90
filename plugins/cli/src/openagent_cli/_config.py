"""``openagent config show`` (the merged settings and where each came from) and ``openagent trust``."""

from __future__ import annotations

from pathlib import Path

import click

from openagent.errors import ConfigError

from ._app import EXIT_USAGE, cli, fail
from ._settings import KEYS, Settings, load_settings, project_file, shown, user_file
from ._trust import TRUST_ENV, forget, remember

__all__ = ["config", "trust"]


def _settings() -> Settings:
    try:
        return load_settings({}, Path.cwd())
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)


@cli.group()
def config() -> None:
    """Show the settings: user file < project file < environment < flags."""


@config.command()
def show() -> None:
    """Print every setting with its value and where it came from."""
    from rich.console import Console
    from rich.table import Table

    cwd = Path.cwd()
    settings = _settings()
    console = Console()
    for label, path in (("user file", user_file()), ("project file", project_file(cwd))):
        state = "" if path.exists() else " (not present)"
        console.print(f"{label}: {path}{state}", markup=False, highlight=False)
    table = Table()
    table.add_column("setting", no_wrap=True)
    table.add_column("value")
    table.add_column("from")
    for key in KEYS:
        if key in settings.values:
            table.add_row(key, shown(key, settings.values[key]), settings.sources[key])
        else:
            table.add_row(key, "[dim]-[/]", "[dim]default[/]")
    console.print(table)
    for item in settings.trust.items if not settings.trust.trusted else ():
        console.print(f"ignored (folder not trusted): {item}", markup=False, highlight=False)
    if settings.trust.items:
        state = f"trusted ({settings.trust.how})" if settings.trust.trusted else "not trusted"
        console.print(f"this folder: {state}", markup=False, highlight=False)
    console.print("[dim]precedence: flags > OPENAGENT_* variables > project file > user file[/]")


@cli.command()
@click.option("--revoke", is_flag=True, help="Forget this folder's trust (it is asked again).")
def trust(revoke: bool) -> None:
    """Trust this folder's settings files as they are now (headless runs then apply them).

    Its settings that change where requests and keys go, widen permissions or start programs apply from
    then on, until one of its settings files changes. Also: --trust, OPENAGENT_TRUST=1, or trusted_folders
    in the user settings file.
    """
    from openagent.settings import project_digest

    settings = _settings()
    folder = settings.trust.folder or str(Path.cwd().resolve())
    if revoke:
        found = forget(folder)
        click.echo(f"{folder}: {'no longer trusted' if found else 'was not remembered'}")
        return
    if not settings.trust.items:
        click.echo(f"{folder}: nothing in its settings needs trust")
        return
    remember(folder, project_digest(Path.cwd()), True)
    click.echo(f"{folder}: trusted; these settings now apply (until a settings file changes):")
    for item in settings.trust.items:
        click.echo(f"  {item}")
    click.echo(f"(for one run only: --trust or {TRUST_ENV}=1)")
