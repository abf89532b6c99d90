"""``openagent plugins``: what is installed, what each plugin registered, and which are broken."""

from __future__ import annotations

import click

from ._app import PluginGroup, cli

__all__ = ["plugins"]


def _version(name: str, version: str | None) -> str:
    if version is None and name == "openagent":
        from importlib.metadata import version as installed

        return installed("openagent")
    return version or "?"


@cli.command()
@click.pass_context
def plugins(ctx: click.Context) -> None:
    """Installed plugins, their versions, what each registered; broken ones with their error."""
    from rich.console import Console
    from rich.table import Table

    from openagent.plugin import list_plugins

    group = ctx.find_root().command
    assert isinstance(group, PluginGroup)
    group.load_plugin_commands()
    table = Table()
    table.add_column("plugin", no_wrap=True)
    table.add_column("version", no_wrap=True)
    table.add_column("registered")
    broken = 0
    for info in sorted(list_plugins(), key=lambda p: p.name):
        kinds = [
            ("providers", info.providers),
            ("tools", info.tools),
            ("session stores", info.session_stores),
            ("retry policies", info.retry_policies),
            ("commands", group.plugin_commands.get(info.name, [])),
        ]
        what = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in kinds if names) or "nothing"
        error = info.error or group.plugin_errors.get(info.name)
        if error:
            broken += 1
            what = f"[red]BROKEN: {error}[/]" + (f"\n{what}" if what != "nothing" else "")
        table.add_row(info.name, _version(info.name, info.version), what)
    console = Console()
    console.print(table)
    if broken:
        console.print(
            f"[red]{broken} plugin(s) failed[/]; the others work. Reinstall or remove the broken ones."
        )
