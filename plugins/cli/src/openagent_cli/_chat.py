"""``openagent chat``: an interactive conversation with streaming markdown, approvals and slash commands.

The chat runs on asyncio (prompt-toolkit's input is asyncio-only). Ctrl-C during a turn interrupts the turn
(`Client` ends it promptly with a ``ResultMessage``); at the prompt it clears the line; Ctrl-D or ``/exit``
leaves. Every turn is saved in the session, so ``openagent chat --continue`` picks up where it stopped.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

import anyio
import anyio.to_thread
import click

from openagent import (
    AssistantMessage,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseError,
    UserMessage,
)
from openagent.plugin import ConfigError, OpenAgentError

from ._app import (
    EXIT_USAGE,
    cli,
    fail,
    host_execution_warning,
    model_options,
    options_from,
    resolve_session,
    settings_from,
)
from ._events import call_line, result_line, short
from ._settings import Settings

__all__ = ["ChatApp", "TurnView", "chat"]

HELP = """\
/model [NAME]   show or switch the model (provider:model)
/resume [ID]    list this directory's sessions, or switch to one
/clear          start a new session
/cost           tokens and cost of this chat so far
/exit           leave (Ctrl-D too); Ctrl-C interrupts a turn"""

APPROVAL = "Allow? [y] once · [a] always this session · [n] deny › "


class TurnView:
    """Renders one turn as it streams: a spinner until output, answer text as live markdown, thinking
    dimmed, tool calls and results as one-line events.
    """  # noqa: D205

    def __init__(self, console: Any) -> None:
        self.console = console
        self.status: Any = None
        self.live: Any = None
        self.text = ""
        self.in_thinking = False
        self.names: dict[str, str] = {}
        self.result: ResultMessage | None = None

    def spin(self, label: str = "thinking…") -> None:
        """Show the spinner until the next output."""
        self.pause()
        self.status = self.console.status(label, spinner="dots")
        self.status.start()

    def pause(self) -> None:
        """Stop the spinner and the live area (before a prompt, or when the turn ends)."""
        if self.status is not None:
            self.status.stop()
            self.status = None
        if self.live is not None:
            self.live.stop()
            self.live = None
        if self.in_thinking:
            self.console.print()
            self.in_thinking = False

    def _stream(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "content_block_start":
            self.pause()
            block = event.get("content_block") or {}
            if block.get("type") == "text":
                from rich.live import Live
                from rich.markdown import Markdown

                self.text = ""
                self.live = Live(
                    Markdown(""), console=self.console, refresh_per_second=15, vertical_overflow="visible"
                )
                self.live.start()
            elif block.get("type") == "thinking":
                self.in_thinking = True
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta" and self.live is not None:
                from rich.markdown import Markdown

                self.text += delta.get("text", "")
                self.live.update(Markdown(self.text))
            elif delta.get("type") == "thinking_delta":
                self.console.print(
                    delta.get("thinking", ""), style="dim italic", end="", markup=False, highlight=False
                )
        elif kind == "content_block_stop":
            self.pause()

    def __call__(self, message: Message) -> None:
        """Show one message of the turn."""
        if isinstance(message, StreamEvent):
            self._stream(message.event)
        elif isinstance(message, AssistantMessage):
            calls = [b for b in message.content if isinstance(b, ToolUseBlock | ToolUseError)]
            for block in calls:
                self.pause()
                self.names[block.id] = block.name
                self.console.print(call_line(block), style="yellow", markup=False, highlight=False)
            if calls:
                self.spin(f"running {', '.join(b.name for b in calls)}…")
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            self.pause()
            for part in message.content:
                if isinstance(part, ToolResultBlock):
                    line = result_line(part, self.names.get(part.tool_use_id, ""))
                    self.console.print(
                        line, style="red" if part.is_error else "dim", markup=False, highlight=False
                    )
            self.spin()
        elif isinstance(message, ResultMessage):
            self.pause()
            self.result = message
            if message.stop_reason == "interrupted":
                self.console.print("(interrupted)", style="bold red")
            elif message.is_error:
                self.console.print(
                    f"({message.subtype}: {short(message.result or '', 200)})", style="bold red"
                )


class ChatApp:
    """The interactive loop: reads prompts and slash commands, runs turns on one `Client`."""

    def __init__(self, settings: Settings, console: Any) -> None:
        self.settings = settings
        self.console = console
        self.client: Any = None
        self.view: TurnView | None = None
        self.always: set[str] = set()
        """Tools the user allowed for the rest of this chat."""
        self.model = settings.get("model")
        self._prompt: Any = None
        if sys.stdin.isatty():
            from prompt_toolkit import PromptSession

            self._prompt = PromptSession()

    async def ask(self, message: str) -> str:
        """Read one line (prompt-toolkit on a terminal; plain lines otherwise). EOFError at the end."""
        if self._prompt is not None:
            return str(await self._prompt.prompt_async(message))
        self.console.print(message, end="", markup=False, highlight=False)
        line: str = await anyio.to_thread.run_sync(sys.stdin.readline)
        self.console.print()  # the input is not echoed: end the prompt's line
        if not line:
            raise EOFError
        return line.rstrip("\n")

    async def approve(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        """The run's ``can_use_tool``: ask once / always for this chat / deny."""
        if tool_name in self.always:
            return PermissionResultAllow()
        if self.view is not None:
            self.view.pause()
        block = ToolUseBlock(id=context.tool_use_id or "?", name=tool_name, input=tool_input)
        self.console.print(f"[bold yellow]permission[/] {call_line(block)[2:]}", highlight=False)
        while True:
            try:
                answer = (await self.ask(APPROVAL)).strip().lower()
            except (KeyboardInterrupt, EOFError):
                return PermissionResultDeny(
                    message="the user interrupted instead of answering", interrupt=True
                )
            if answer in ("y", "yes"):
                result: PermissionResultAllow | PermissionResultDeny = PermissionResultAllow()
                break
            if answer in ("a", "always"):
                self.always.add(tool_name)
                result = PermissionResultAllow()
                break
            if answer in ("n", "no"):
                result = PermissionResultDeny(message=f"the user denied this {tool_name} call")
                break
            self.console.print("answer y, a or n", style="dim")
        if self.view is not None:
            self.view.spin(f"running {tool_name}…")
        return result

    def _ask_tool(self) -> Any:
        """AskUserQuestion answered at this terminal (the tools plugin's tool, given our callback)."""
        try:
            from openagent_tools import ask_user_question
        except ImportError:
            return "AskUserQuestion"  # the run reports the unknown tool, naming the plugin to install
        return ask_user_question(self.answer_questions)

    async def answer_questions(self, questions: list[dict[str, Any]]) -> dict[str, str]:
        """Ask the model's questions here: options by number (``1,3`` when several), or typed answers."""
        if self.view is not None:
            self.view.pause()
        answers: dict[str, str] = {}
        for question in questions:
            options = [o["label"] for o in question.get("options", [])]
            self.console.print(f"[bold cyan]? {question['question']}[/]", highlight=False)
            for number, option in enumerate(question.get("options", []), 1):
                detail = f" — {option['description']}" if option.get("description") else ""
                self.console.print(f"  {number}. {option['label']}{detail}", markup=False, highlight=False)
            try:
                reply = (await self.ask("answer › ")).strip()
            except (KeyboardInterrupt, EOFError):
                from openagent.plugin import ToolError

                raise ToolError("the user dismissed the questions") from None
            picks = [p.strip() for p in reply.split(",")] if question.get("multiSelect") else [reply]
            if all(p.isdigit() and 1 <= int(p) <= len(options) for p in picks):
                reply = ", ".join(options[int(p) - 1] for p in picks)
            answers[question["question"]] = reply
        if self.view is not None:
            self.view.spin()
        return answers

    async def connect(self, *, resume: str | None = None, continue_: bool = False) -> None:
        """(Re)open the conversation: a new session, a resumed one, or the most recent one."""
        from openagent import Client

        if self.client is not None:
            await self.client.disconnect()
        options = options_from(
            self.settings,
            resume=resume,
            continue_conversation=continue_,
            include_partial_messages=True,
            can_use_tool=self.approve,
        )
        if self.model:
            options = options.replace(model=self.model)
        tools = [self._ask_tool() if t == "AskUserQuestion" else t for t in options.tools]
        self.client = Client(options.replace(tools=tools))
        await self.client.connect()
        turns = sum(
            1 for m in self.client.history if isinstance(m, UserMessage) and isinstance(m.content, str)
        )
        what = f"resumed, {turns} earlier prompts" if turns else "new"
        self.console.print(f"[dim]session {self.client.session_id} ({what})[/]", highlight=False)

    async def turn(self, prompt: str) -> None:
        """Send one prompt and render its response; Ctrl-C interrupts it."""
        import asyncio

        client = self.client
        self.view = view = TurnView(self.console)
        loop = asyncio.get_running_loop()

        def interrupt() -> None:
            view.pause()
            self.console.print("interrupting…", style="dim")
            client.conversation.interrupt()

        await client.query(prompt)
        view.spin()
        loop.add_signal_handler(signal.SIGINT, interrupt)
        try:
            async for message in client.receive_response():
                view(message)
        except OpenAgentError as exc:
            view.pause()
            self.console.print(f"error: {type(exc).__name__}: {exc}", style="bold red", markup=False)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            view.pause()
            self.view = None

    async def command(self, line: str) -> bool:
        """Run a slash command; False means leave."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self.console.print(HELP, markup=False, highlight=False)
        elif name == "/model":
            await self._model(arg)
        elif name == "/resume":
            await self._resume(arg)
        elif name == "/clear":
            await self.connect()
        elif name == "/cost":
            self._cost()
        else:
            self.console.print(f"unknown command {name}; /help lists them", style="red", markup=False)
        return True

    async def _model(self, arg: str) -> None:
        if not arg:
            self.console.print(f"model: {self.client.options.model}", markup=False, highlight=False)
            return
        try:
            await self.client.set_model(arg)  # changes nothing when the model cannot be used
        except OpenAgentError as exc:
            self.console.print(f"error: {exc}", style="red", markup=False)
            return
        self.model = arg
        self.console.print(f"model: {arg}", markup=False, highlight=False)

    async def _resume(self, arg: str) -> None:
        from ._sessions import find_session, list_command

        if not arg:
            await anyio.to_thread.run_sync(lambda: list_command.callback())  # type: ignore[misc]
            return
        try:
            session_id = await find_session(self.settings, arg)
        except OpenAgentError as exc:
            self.console.print(f"error: {exc}", style="red", markup=False)
            return
        await self.connect(resume=session_id)

    def _cost(self) -> None:
        usage = self.client.usage
        cost = self.client.conversation.total_cost_usd
        price = f"${cost:.4f}" if cost is not None else "unknown for this provider"
        self.console.print(
            f"tokens: {usage.input_tokens} in, {usage.output_tokens} out · cost: {price}",
            markup=False,
            highlight=False,
        )

    async def main(self, *, resume: str | None, continue_: bool) -> int:
        """The loop; returns the exit status."""
        try:
            await self.connect(resume=resume, continue_=continue_)
        except ConfigError as exc:
            click.echo(f"openagent: error: {exc}", err=True)
            return EXIT_USAGE
        self.console.print(
            f"[bold]openagent chat[/] · {self.client.options.model} · /help for commands, Ctrl-C interrupts, "
            "Ctrl-D leaves",
            highlight=False,
        )
        try:
            while True:
                try:
                    line = (await self.ask("› ")).strip()
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
                if not line:
                    continue
                if line.startswith("/"):
                    if not await self.command(line):
                        break
                    continue
                await self.turn(line)
        finally:
            session_id = self.client.session_id
            await self.client.disconnect()
        self.console.print(f"[dim]saved: openagent chat --resume {session_id}[/]", highlight=False)
        return 0


@cli.command()
@model_options
def chat(**params: Any) -> None:
    """Chat with an agent in the terminal; tool calls ask for approval unless rules allow them."""
    from rich.console import Console

    settings = settings_from(params)
    resume = resolve_session(settings, params["resume"]) if params["resume"] else None
    warning = host_execution_warning(settings)
    if warning:
        click.echo(warning, err=True)
    app = ChatApp(settings, Console(highlight=False))
    try:
        code = anyio.run(lambda: app.main(resume=resume, continue_=params["continue_"]), backend="asyncio")
    except OpenAgentError as exc:
        fail(f"{type(exc).__name__}: {exc}")
    sys.exit(code)
