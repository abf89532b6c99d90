"""``openagent config show``: the merged settings and where each value came from."""

from __future__ import annotations

from pathlib import Path

from openagent.plugin import ConfigError

from ._app import EXIT_USAGE, cli, fail
from ._settings import KEYS, SECRET_KEYS, load_settings, project_file, user_file

__all__ = ["config", "mask"]


def mask(value: str) -> str:
    """A secret shown safely: its last four characters only."""
    return "****" + value[-4:] if len(value) > 8 else "****"


@cli.group()
def config() -> None:
    """Show the settings: user file < project file < environment < flags."""


@config.command()
def show() -> None:
    """Print every setting with its value and where it came from."""
    from rich.console import Console
    from rich.table import Table

    cwd = Path.cwd()
    try:
        settings = load_settings({}, cwd)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    console = Console()
    for label, path in (("user file", user_file()), ("project file", project_file(cwd))):
        state = "" if path.exists() else " (not present)"
        console.print(f"{label}: {path}{state}", markup=False, highlight=False)
    table = Table()
    table.add_column("setting", no_wrap=True)
    table.add_column("value")
    table.add_column("from")
    for key in KEYS:
        if key not in settings.values:
            table.add_row(key, "[dim]-[/]", "[dim]default[/]")
            continue
        value = settings.values[key]
        shown = ", ".join(value) if isinstance(value, list) else str(value)
        table.add_row(key, mask(shown) if key in SECRET_KEYS else shown, settings.sources[key])
    console.print(table)
    console.print("[dim]precedence: flags > OPENAGENT_* variables > project file > user file[/]")
