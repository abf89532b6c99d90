"""`Client`: a multi-turn conversation, with the Claude Agent SDK's ``ClaudeSDKClient`` methods."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import Any, Literal, TypeAlias

import anyio

from ._errors import ConfigError
from ._loop import Conversation, TurnEvents
from ._mcp import McpServers, McpStatusResponse, mcp_servers_of
from ._options import AgentOptions
from ._query import MessageStream, messages_of
from ._reports import context_usage, server_info
from ._types import AssistantMessage, Message, ResultMessage, SystemMessage, Usage, UserMessage

__all__ = ["Client", "ClientStatus"]

ClientStatus: TypeAlias = Literal["idle", "running", "finished", "error", "cancelled"]


def _status_of(result: ResultMessage) -> ClientStatus:
    if result.stop_reason == "interrupted":
        return "cancelled"
    return "error" if result.is_error else "finished"


class Client:
    """A conversation that spans many prompts, with interrupts and client-side tool results.

    ::

        async with Client(AgentOptions(model="ollama:qwen3")) as client:
            await client.query("Hello")
            async for message in client.receive_response():
                print(message)
    """

    def __init__(self, options: AgentOptions | None = None) -> None:
        self._options = options or AgentOptions()
        self._conversation: Conversation | None = None
        self._prompts: deque[str | UserMessage | Mapping[str, Any] | AsyncIterator[Any]] = deque()
        self._arrived = anyio.Event()
        self._closed = False
        self._listeners: list[tuple[Any, Callable[[Message], Any]]] = []
        self._status: ClientStatus = "idle"

    @property
    def options(self) -> AgentOptions:
        """The options in force: those given, with the model `set_model` chose (the caller's stay)."""
        return self._options

    @property
    def status(self) -> ClientStatus:
        """``idle`` (nothing run yet), ``running``, ``finished``, ``error`` or ``cancelled`` (interrupted)."""
        return self._status

    def on(
        self, event_type: str | type | None, callback: Callable[[Message], Any]
    ) -> Callable[[Message], Any]:
        """Call ``callback`` (sync or async) with every message of a type: a class (``AssistantMessage``),
        a ``type`` tag (``"assistant"``, ``"result"``, ``"stream_event"``) or ``None`` for all. Exceptions
        in callbacks are logged, never raised. Returns the callback, so it also works as a decorator factory.
        """  # noqa: D205
        self._listeners.append((event_type, callback))
        if self._conversation is not None:
            self._conversation.listen(event_type, callback)
        return callback

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.disconnect()

    @property
    def conversation(self) -> Conversation:
        """The underlying conversation (after `connect`)."""
        if self._conversation is None:
            raise ConfigError("the client is not connected: use 'async with Client(...)' or await connect()")
        return self._conversation

    async def connect(self, prompt: str | AsyncIterable[Mapping[str, Any]] | None = None) -> None:
        """Resolve the provider, open (or resume) the session, and optionally queue a first prompt.

        An async iterable of user-message dicts is read one message at a time, as responses are asked for:
        each message gets its own response.
        """
        if self._conversation is None:
            self._conversation = Conversation(self._options)
            for event_type, callback in self._listeners:
                self._conversation.listen(event_type, callback)
            await self._conversation.start()
        if isinstance(prompt, AsyncIterable):
            self._prompts.append(aiter(prompt))
            self._arrived.set()
        elif prompt is not None:
            await self.query(prompt)

    async def query(self, prompt: str | Mapping[str, Any], session_id: str = "default") -> None:
        """Queue a prompt; its messages arrive through `receive_response` / `receive_messages`."""
        self.conversation  # noqa: B018 - raises when not connected
        self._prompts.append(prompt)
        self._arrived.set()

    def add_tool_result(self, tool_use_id: str, content: Any, *, is_error: bool = False) -> None:
        """Answer a client-side tool call; once all are answered, the next response continues the turn."""
        message = self.conversation.add_tool_result(tool_use_id, content, is_error=is_error)
        if message is not None:
            self._prompts.append(message)
            self._arrived.set()

    def receive_response(self) -> MessageStream[Message]:
        """The messages of the next prompt, up to and including its `ResultMessage`.

        Waits for a prompt when none is queued (until `disconnect`): a drain loop bounds it with a timeout.
        """
        return MessageStream.of(self._response(), self._options.include_partial_messages)

    def receive_messages(self) -> MessageStream[Message]:
        """Every message of every queued prompt, waiting for new prompts until `disconnect`."""
        return MessageStream.of(self._messages(), self._options.include_partial_messages)

    async def _next_prompt(self) -> str | UserMessage | Mapping[str, Any] | None:
        """The next prompt, waiting for one; ``None`` once the client is closed."""
        while not self._closed:
            if not self._prompts:
                if self._arrived.is_set():  # waiters share one event: query() wakes them all
                    self._arrived = anyio.Event()
                await self._arrived.wait()
                continue
            head = self._prompts[0]
            if not isinstance(head, AsyncIterator):
                return self._prompts.popleft()  # type: ignore[return-value]
            try:
                return await anext(head)
            except StopAsyncIteration:
                self._prompts.popleft()
        return None

    async def _response(self) -> AsyncGenerator[Message | TurnEvents, None]:
        prompt = await self._next_prompt()
        if prompt is None:
            return
        self._status = "running"
        try:
            async with aclosing(messages_of(self.conversation, prompt)) as messages:
                async for message in messages:
                    if isinstance(message, ResultMessage):
                        self._status = _status_of(message)
                    yield message
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class() | GeneratorExit)
            self._status = "cancelled" if cancelled else "error"
            raise

    async def _messages(self) -> AsyncGenerator[Message | TurnEvents, None]:
        while not self._closed:
            async with aclosing(self._response()) as messages:
                async for message in messages:
                    yield message

    def server_info(self) -> dict[str, Any]:
        """Model, tools, slash ``commands`` (name, description, argument hint), agents, skills, MCP."""
        return server_info(self.conversation)

    def context_usage(self) -> dict[str, Any]:
        """How full the context window is, by category (system prompt, tools, memory files, messages)."""
        return context_usage(self.conversation)

    async def rewind_files(self, user_message_id: str) -> list[str]:
        """Put the files the edit tools changed since a user message back as they were then.

        Needs ``enable_file_checkpointing=True``; ``user_message_id`` is the ``uuid`` of a `UserMessage` of
        this conversation (a prompt sent with a ``uuid``, or a tool-result message). Returns the files.

        Raises:
            ConfigError: Checkpointing is off, or no user message has that id.
        """
        checkpoints = self.conversation.checkpoints
        if checkpoints is None:
            raise ConfigError("rewind_files needs enable_file_checkpointing=True")
        return [str(path) for path in checkpoints.rewind(user_message_id)]

    async def stop_task(self, task_id: str) -> None:
        """Stop a running subagent task (its id is its ``Task`` call's id); its result says it was stopped.

        Raises:
            ConfigError: No task with that id is running.
        """
        task = self.conversation.tasks.get(task_id)
        if task is None:
            raise ConfigError(f"no running task {task_id!r}")
        task.interrupt()

    async def compact(self) -> SystemMessage | None:
        """Compact the history now (``PreCompact`` fires with ``trigger="manual"``); returns the boundary."""
        return await self.conversation.compact("manual", force=True)

    async def interrupt(self) -> None:
        """Stop the turn in flight; it ends promptly with a `ResultMessage`."""
        self.conversation.interrupt()

    async def set_model(self, model: str | None = None) -> None:
        """Switch the model for the following turns (history is kept).

        The options given to the client are not changed: `options` becomes a copy with the new model.
        A provider the client made from a model string is closed; a provider instance is the caller's.
        """
        await self.conversation.set_model(model)
        self._options = self._options.replace(model=model)

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode for the following tool calls."""
        self.conversation.set_permission_mode(mode)

    async def get_mcp_status(self) -> McpStatusResponse:
        """Every configured MCP server's live status: ``{"mcpServers": [{"name", "status", ...}]}``.

        ``status`` is ``connected``, ``pending`` (starting or reconnecting), ``failed`` (with ``error``),
        ``needs-auth`` or ``disabled``; a connected server also has ``serverInfo`` and ``tools``.
        """
        servers = mcp_servers_of(self.conversation.runtime.toolsets)
        return servers.mcp_status() if servers is not None else {"mcpServers": []}

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Reconnect a failed (or connected) MCP server; raises when it cannot connect."""
        await self._mcp_servers().reconnect_mcp_server(server_name)

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Disable an MCP server (it disconnects; its tools are withdrawn) or enable it (it connects)."""
        await self._mcp_servers().toggle_mcp_server(server_name, enabled)

    def _mcp_servers(self) -> McpServers:
        servers = mcp_servers_of(self.conversation.runtime.toolsets)
        if servers is None:
            raise ConfigError("this client has no MCP servers (AgentOptions.mcp_servers)")
        return servers

    async def disconnect(self) -> None:
        """Close the session and the provider; queued prompts are dropped."""
        self._closed = True
        self._arrived.set()
        if self._conversation is not None:
            with anyio.CancelScope(shield=True):
                await self._conversation.aclose()
            self._conversation = None

    @property
    def session_id(self) -> str:
        """The session this client writes to."""
        return self.conversation.session_id

    @property
    def history(self) -> list[UserMessage | AssistantMessage]:
        """The messages the model sees next turn."""
        return self.conversation.history

    @property
    def usage(self) -> Usage:
        """Tokens used by this client so far."""
        return self.conversation.usage
