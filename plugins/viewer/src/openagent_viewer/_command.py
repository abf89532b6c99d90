"""``openagent sessions serve``: start the viewer on loopback (or, with ``--host`` and a token, elsewhere).

The web stack is imported when the command runs, not when the ``openagent`` command line loads its plugins.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ._source import Source

__all__ = ["DEFAULT_PORT", "is_loopback", "serve"]

DEFAULT_PORT = 8421


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    """A bound socket for ``host``:``port`` (port 0: a free one), or a clear error."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from exc
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)  # from here on connections wait in the backlog until the server takes them
    except OSError as exc:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from exc
    return sock


def _project(value: str) -> str:
    from openagent.plugin import project_key_for

    return project_key_for(value) if Path(value).is_dir() else value


def _source(store_url: str | None, projects: tuple[str, ...]) -> tuple[Source, str | None]:
    """The `Source` over the chosen store (the flag's, else the ``session_store`` setting's), for the current
    directory's project, and the store URL.
    """  # noqa: D205
    from openagent import OpenAgentError
    from openagent.plugin import project_key_for, resolve
    from openagent_cli._app import EXIT_USAGE, fail, settings_from

    from ._redact import Redactor
    from ._source import Source

    settings = settings_from({})
    url = store_url or settings.get("session_store")
    try:
        store = resolve("session_store", url)
    except OpenAgentError as exc:
        fail(str(exc), EXIT_USAGE)
    redactor = Redactor.from_environment(store_url=url, api_key=settings.get("api_key"))
    extra = tuple(_project(p) for p in projects)
    return Source(store, project_key_for(os.getcwd()), projects=extra, redactor=redactor), url


@click.command("serve")
@click.option(
    "--store", "store_url", metavar="URL", help="Session store URL (default: the session_store setting)."
)
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Listen address; not loopback needs a token."
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True, help="0: any free."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--token", envvar="OPENAGENT_VIEWER_TOKEN", help="Require this token (made up off loopback).")
@click.option(
    "--project", "projects", multiple=True, metavar="DIR", help="Also offer this directory's sessions."
)
def serve(
    store_url: str | None,
    host: str,
    port: int,
    open_browser: bool,
    token: str | None,
    projects: tuple[str, ...],
) -> None:
    """Show sessions in a local, read-only web page that follows running sessions live."""
    import uvicorn

    from ._app import Settings, create_app

    loopback = is_loopback(host)
    if not loopback and not token:
        token = secrets.token_urlsafe(24)
    source, url = _source(store_url, projects)
    app = create_app(source, Settings(token=token, loopback_only=loopback, store_url=url))
    sock = _bind(host, port)
    shown = f"[{host.strip('[]')}]" if ":" in host.strip("[]") else host
    address = f"http://{shown}:{sock.getsockname()[1]}/" + (f"?token={token}" if token else "")
    click.echo(f"openagent sessions: serving {address} (read-only; Ctrl-C stops)")
    if not loopback:
        click.echo(
            f"openagent sessions: listening on {host}: anyone who can reach it needs the token", err=True
        )
    if open_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(address,), daemon=True).start()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn hands Ctrl-C back once it has shut down: that is the way to stop
        pass
    click.echo("openagent sessions: stopped", err=True)
