"""``openagent sessions list | show | fork | delete``, over core's session helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio
import click

from openagent import (
    AssistantMessage,
    Message,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
    delete_session,
    fork_session,
    get_session_messages,
    list_sessions,
)
from openagent.plugin import OpenAgentError, SessionError

from ._app import EXIT_USAGE, PluginSubgroup, cli, fail
from ._events import call_line, result_line, short
from ._settings import Settings, load_settings

__all__ = ["SessionSummary", "find_session", "render_transcript", "sessions", "summarize"]


@dataclass
class SessionSummary:
    """One row of ``openagent sessions list``."""

    session_id: str
    title: str
    """The first prompt, on one line."""
    model: str
    turns: int
    """Prompts the user sent."""
    updated: datetime


def summarize(session_id: str, mtime: int, messages: list[Message]) -> SessionSummary:
    """The list row for a session's messages."""
    prompts = [m for m in messages if isinstance(m, UserMessage) and isinstance(m.content, str)]
    models = [m.model for m in messages if isinstance(m, AssistantMessage)]
    init = [m.data.get("model", "") for m in messages if isinstance(m, SystemMessage) and m.subtype == "init"]
    return SessionSummary(
        session_id=session_id,
        title=short(str(prompts[0].content), 50) if prompts else "(no prompt)",
        model=(models or init or ["?"])[-1],
        turns=len(prompts),
        updated=datetime.fromtimestamp(mtime / 1000).astimezone(),
    )


def _store(settings: Settings) -> str | None:
    return settings.get("session_store")  # type: ignore[no-any-return]


def _settings() -> Settings:
    from pathlib import Path

    try:
        return load_settings({}, Path.cwd())
    except OpenAgentError as exc:
        fail(str(exc), EXIT_USAGE)


async def _summaries(store: str | None) -> list[SessionSummary]:
    rows = []
    for entry in await list_sessions(store=store):
        messages = await get_session_messages(entry["session_id"], store=store)
        rows.append(summarize(entry["session_id"], entry["mtime"], messages))
    return rows


async def find_session(settings: Settings, session_id: str) -> str:
    """The full id of the session named by an id or a unique id prefix, in this directory's project.

    Raises:
        SessionError: No session, or several, match.
    """
    entries = await list_sessions(store=_store(settings))
    ids = [e["session_id"] for e in entries]
    if session_id in ids:
        return session_id
    matches = [i for i in ids if i.startswith(session_id)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise SessionError(f"session prefix {session_id!r} is ambiguous: {', '.join(matches[:5])}")
    raise SessionError(f"no session {session_id!r} in this directory (openagent sessions list shows them)")


@cli.group(cls=PluginSubgroup)
def sessions() -> None:
    """List, show, fork and delete the saved sessions of this directory."""


@sessions.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session instead of a table.")
def list_command(as_json: bool = False) -> None:
    """The sessions of this directory, most recent first."""
    from rich.console import Console
    from rich.table import Table

    rows = _run(_summaries, _store(_settings()))
    if as_json:
        for row in rows:
            data = {**row.__dict__, "updated": row.updated.isoformat(timespec="seconds")}
            click.echo(json.dumps(data, ensure_ascii=False))
        return
    console = Console()
    if not rows:
        console.print(
            "No sessions in this directory yet: [bold]openagent chat[/] or [bold]openagent run[/] start one."
        )
        return
    table = Table()
    table.add_column("id", no_wrap=True, min_width=36)
    table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=50)
    table.add_column("model", no_wrap=True, overflow="ellipsis", max_width=30)
    table.add_column("turns", justify="right")
    table.add_column("updated", no_wrap=True)
    for row in rows:
        table.add_row(
            row.session_id, row.title, row.model, str(row.turns), row.updated.strftime("%Y-%m-%d %H:%M")
        )
    console.print(table)


def _run(func: Any, *args: Any) -> Any:
    try:
        return anyio.run(func, *args)
    except OpenAgentError as exc:
        fail(str(exc), EXIT_USAGE if isinstance(exc, SessionError) else 1)


def _resolve(session_id: str) -> tuple[str, str | None]:
    settings = _settings()
    try:
        return anyio.run(find_session, settings, session_id), _store(settings)
    except OpenAgentError as exc:
        fail(str(exc), EXIT_USAGE)


def render_transcript(messages: list[Message], console: Any) -> None:
    """Print a transcript: prompts, answers as markdown, thinking dimmed, tool calls and results."""
    from rich.markdown import Markdown

    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, UserMessage) and message.parent_tool_use_id is None:
            if isinstance(message.content, str):
                console.print(f"\n[bold cyan]› {message.content}[/]")
                continue
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    console.print(
                        result_line(block, names.get(block.tool_use_id, "")), style="dim", markup=False
                    )
        elif isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
            for part in message.content:
                if isinstance(part, ThinkingBlock):
                    console.print(part.thinking, style="dim italic", markup=False)
                elif isinstance(part, TextBlock):
                    console.print(Markdown(part.text))
                elif isinstance(part, ToolUseBlock | ToolUseError):
                    names[part.id] = part.name
                    console.print(call_line(part), style="yellow", markup=False)
        elif isinstance(message, ResultMessage) and message.is_error:
            console.print(f"[red]({message.subtype}: {message.result or ''})[/]")


@sessions.command()
@click.argument("session_id")
def show(session_id: str) -> None:
    """Print the transcript of a session (an id or a unique prefix)."""
    from rich.console import Console

    full, store = _resolve(session_id)
    messages = _run(lambda: get_session_messages(full, store=store))
    console = Console()
    console.print(f"[bold]session {full}[/]")
    render_transcript(messages, console)


@sessions.command()
@click.argument("session_id")
def fork(session_id: str) -> None:
    """Copy a session under a new id (printed) and leave the original as it is."""
    full, store = _resolve(session_id)
    click.echo(_run(lambda: fork_session(full, store=store)))


@sessions.command()
@click.argument("session_id")
def delete(session_id: str) -> None:
    """Delete a session."""
    full, store = _resolve(session_id)
    _run(lambda: delete_session(full, store=store))
    click.echo(f"deleted {full}")
