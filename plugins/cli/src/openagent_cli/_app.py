"""The ``openagent`` click group, the options ``run`` and ``chat`` share, and ``openagent run``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from openagent.plugin import ConfigError, OpenAgentError, mask_url

from ._settings import PERMISSION_MODES, Settings, load_settings, user_file

__all__ = [
    "PluginGroup",
    "PluginSubgroup",
    "cli",
    "fail",
    "main",
    "model_options",
    "options_from",
    "settings_from",
]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FAILURE = 1
EXIT_USAGE = 2
LOCAL_KEEP_ALIVE = 300
"""Seconds a local model's engine started by a command stays up for the next command."""


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print one clear line on stderr (credentials in URLs masked) and exit with ``code``."""
    click.echo(f"openagent: error: {mask_url(message)}", err=True)
    sys.exit(code)


class PluginGroup(click.Group):
    """A group that adds the commands plugins register (``register_commands``) the first time it is asked.

    Loading plugins imports them all, so it happens only when a command name is not a built-in one (or
    for ``--help``); a plugin whose registration raises is reported in ``openagent plugins``, not fatal.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plugin_commands: dict[str, list[str]] = {}
        """Commands added by each plugin, by plugin name."""
        self.plugin_errors: dict[str, str] = {}
        """Plugins whose ``register_commands`` raised, with the error."""
        self._loaded = False

    def load_plugin_commands(self) -> None:
        """Call every plugin's ``register_commands(cli=self)`` once."""
        if self._loaded:
            return
        self._loaded = True
        from openagent.plugin import registry

        manager = registry().manager
        for impl in manager.hook.register_commands.get_hookimpls():
            before = set(self.commands)
            try:
                impl.function(cli=self)
            except Exception as exc:  # one broken plugin must not take the command line down
                self.plugin_errors[impl.plugin_name] = (
                    f"register_commands failed: {type(exc).__name__}: {exc}"
                )
            self.plugin_commands[impl.plugin_name] = sorted(set(self.commands) - before)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load_plugin_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            self.load_plugin_commands()
        return super().get_command(ctx, cmd_name)


class PluginSubgroup(click.Group):
    """A built-in group plugins may add subcommands to (``openagent sessions serve``).

    Before it answers for a name it lacks, or lists its commands, the root group loads the plugins' commands.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load_plugins(ctx)
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            _load_plugins(ctx)
        return super().get_command(ctx, cmd_name)


def _load_plugins(ctx: click.Context) -> None:
    root = ctx.find_root().command
    if isinstance(root, PluginGroup):
        root.load_plugin_commands()


@click.group(cls=PluginGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="openagent-cli", prog_name="openagent")
@click.option("-v", "--verbose", is_flag=True, help="Log retries and plugin details on stderr.")
def cli(verbose: bool = False) -> None:
    """openagent: run agents on any model, from the command line."""
    _configure_logging(verbose)


def _configure_logging(verbose: bool) -> None:
    """Warnings as ``openagent: warning: …`` lines on stderr; retries only with ``--verbose``."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("openagent: %(levelname)s: %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger("stamina").setLevel(logging.INFO if verbose else logging.ERROR)
    # the trust notice (settings_from) already lists what an untrusted folder's settings lose
    handler.addFilter(
        lambda record: not record.getMessage().startswith("ignored until the project is trusted")
    )


def model_options(func: F) -> F:
    """The options ``run`` and ``chat`` share: model, endpoint, tools, permissions, limits, session."""
    decorators = [
        click.option("-m", "--model", help="provider:model, e.g. ollama:qwen3 or test:echo."),
        click.option("--base-url", help="Endpoint URL, overriding the provider's default."),
        click.option("--system", "system_prompt", help="System prompt."),
        click.option("--tools", help="Comma-separated tool names to enable, e.g. Read,Grep."),
        click.option(
            "--allow", "allowed_tools", multiple=True, help="Allow rule, e.g. 'Bash(git *)'; repeatable."
        ),
        click.option("--deny", "disallowed_tools", multiple=True, help="Deny rule; repeatable."),
        click.option(
            "--permission-mode", type=click.Choice(PERMISSION_MODES), help="How tool calls are allowed."
        ),
        click.option("--max-turns", type=click.IntRange(min=1), help="Stop after this many model turns."),
        click.option(
            "--sandbox/--no-sandbox", default=None, help="Run Bash commands in a bubblewrap sandbox (Linux)."
        ),
        click.option(
            "--resume", "resume", metavar="ID", help="Continue the session with this id (or prefix)."
        ),
        click.option(
            "-c", "--continue", "continue_", is_flag=True, help="Continue the most recent session here."
        ),
        click.option(
            "--trust/--no-trust",
            default=None,
            help="Trust this folder's settings files for this run (or not), without asking.",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def settings_from(params: dict[str, Any]) -> Settings:
    """Settings merged from the files, the environment and the flags in ``params``; asks on a terminal
    whether to trust the folder when its settings need it, and says on stderr what an untrusted one loses.
    """  # noqa: D205
    flags = {
        key: params.get(key)
        for key in ("model", "base_url", "system_prompt", "permission_mode", "max_turns", "sandbox")
    }
    flags["tools"] = params.get("tools")
    flags["allowed_tools"] = list(params.get("allowed_tools") or ()) or None
    flags["disallowed_tools"] = list(params.get("disallowed_tools") or ()) or None
    try:
        settings = load_settings(flags, Path.cwd(), trust=params.get("trust"), ask=True)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    if notice := settings.trust.notice(user_file()):
        click.echo(notice, err=True)
    if settings.get("model") is None:
        from ._embedded import embedded_model

        if model := embedded_model():
            settings.values["model"] = model
            settings.sources["model"] = "embedded default (openagent-local)"
            click.echo(
                f"openagent: no model configured: using {model}, a small model that runs offline on this "
                "machine (llama.cpp); --model or OPENAGENT_MODEL picks another.",
                err=True,
            )
    if str(settings.get("model") or "").startswith("local:"):
        # One command after another reuses the engine, as Ollama keeps a model loaded between requests.
        os.environ.setdefault("OPENAGENT_LOCAL_KEEP_ALIVE", str(LOCAL_KEEP_ALIVE))
    return settings


def options_from(settings: Settings, **more: Any) -> Any:
    """`AgentOptions` for the merged settings plus ``more`` (resume, partial messages, callbacks)."""
    from openagent import AgentOptions

    fields = {
        key: settings.get(key)
        for key in ("model", "base_url", "api_key", "system_prompt", "max_turns", "session_store", "sandbox")
        if settings.get(key) is not None
    }
    for key in ("tools", "allowed_tools", "disallowed_tools"):
        fields[key] = list(settings.get(key) or ())
    fields["permission_mode"] = settings.get("permission_mode") or "default"
    fields["setting_sources"] = ["user", "project", "local"]  # prompts load anywhere; power needs trust
    fields["trust_project"] = settings.trust.option()
    return AgentOptions(**fields, **more)


def host_execution_warning(settings: Settings) -> str | None:
    """The warning to print when Bash is enabled: it runs on this machine, there is no sandbox."""
    if "Bash" not in (settings.get("tools") or ()):
        return None
    mode = settings.get("permission_mode") or "default"
    unasked = mode == "bypassPermissions" or any(
        r.startswith("Bash") for r in settings.get("allowed_tools") or ()
    )
    how = "without asking, for the commands your rules allow" if unasked else "after approval"
    sandbox = settings.get("sandbox")
    if sandbox is True or isinstance(sandbox, dict) and sandbox.get("enabled"):
        return (
            "warning: Bash is enabled: commands the model writes run on this machine in a bubblewrap "
            f"sandbox (writable: {Path.cwd()}; no network), without asking unless its settings say "
            "otherwise; where the sandbox cannot run, Bash says so and asks."
        )
    return (
        f"warning: Bash is enabled: commands the model writes run directly on this machine, as you, in "
        f"{Path.cwd()}, with no sandbox ({how})."
    )


def resolve_session(settings: Settings, session_id: str) -> str:
    """The full id of session ``session_id`` (an id or a unique prefix) in this project; exits 2 if none."""
    import anyio

    from ._sessions import find_session

    try:
        return anyio.run(find_session, settings, session_id)
    except OpenAgentError as exc:
        fail(str(exc), EXIT_USAGE)


def _read_prompt(prompt: str) -> str:
    text = sys.stdin.read() if prompt == "-" else prompt
    if not text.strip():
        fail("the prompt is empty" + (" (nothing on stdin)" if prompt == "-" else ""), EXIT_USAGE)
    return text


def _output_format(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"--output-schema {path}: not a readable JSON file: {exc}", EXIT_USAGE)
    if not isinstance(schema, dict):
        fail(f"--output-schema {path}: a JSON schema must be an object", EXIT_USAGE)
    return {"type": "json_schema", "schema": schema}


@cli.command()
@click.argument("prompt")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print every message as one JSON object per line.")
@click.option("--include-partial-messages", is_flag=True, help="With --json: also print the streamed deltas.")
@click.option(
    "--output-schema",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A JSON schema file the final answer must match.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="At most this many tokens per model answer.")
def run(
    prompt: str,
    as_json: bool,
    include_partial_messages: bool,
    output_schema: Path | None,
    max_tokens: int | None,
    **params: Any,
) -> None:
    """Run one prompt headless; PROMPT '-' reads it from stdin.

    The answer streams to stdout; tool calls and results go to stderr as one-line events. Exit status: 0
    on success, 1 when the model or a tool failed, 2 on bad usage.
    """
    from ._run import run_headless

    settings = settings_from(params)
    text = _read_prompt(prompt)
    output_format = _output_format(output_schema)
    resume = resolve_session(settings, params["resume"]) if params["resume"] else None
    warning = host_execution_warning(settings)
    if warning:
        click.echo(warning, err=True)
    try:
        options = options_from(
            settings,
            resume=resume,
            continue_conversation=params["continue_"],
            output_format=output_format,
            include_partial_messages=include_partial_messages or not as_json,
            max_tokens=max_tokens,
        )
    except (TypeError, ConfigError) as exc:
        fail(str(exc), EXIT_USAGE)
    sys.exit(run_headless(text, options, as_json=as_json))


def main() -> None:
    """The console script: ``openagent``."""
    try:
        cli(prog_name="openagent")
    except SystemExit as exc:
        _exit_now(exc.code)
    _exit_now(0)


def _exit_now(code: object) -> NoReturn:
    """End the process once the command is done: exit handlers run, output flushed, then ``os._exit``.

    The interpreter's own teardown (clearing every module a run imported, a last garbage collection) costs
    50-80 ms of a one-prompt ``openagent run`` on a small machine and does nothing a finished command needs:
    files are closed by their owners, exit handlers (the local engine's shutdown, logging's) are run here.
    """
    import atexit

    if isinstance(code, str):  # sys.exit("message"), as the interpreter would print it
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or a closed stream: nothing left to say
            pass
    os._exit(code if isinstance(code, int) else 0)
