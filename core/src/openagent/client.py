"""`Client`: a multi-turn conversation, with the Claude Agent SDK's ``ClaudeSDKClient`` methods."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import Any

import anyio

from .errors import ConfigError
from .loop import Conversation
from .models import resolve_provider
from .options import AgentOptions
from .query import MessageStream
from .types import AssistantMessage, Message, Usage, UserMessage

__all__ = ["Client"]


class Client:
    """A conversation that spans many prompts, with interrupts and client-side tool results.

    ::

        async with Client(AgentOptions(model="ollama:qwen3")) as client:
            await client.query("Hello")
            async for message in client.receive_response():
                print(message)
    """

    def __init__(self, options: AgentOptions | None = None) -> None:
        self.options = options or AgentOptions()
        self._conversation: Conversation | None = None
        self._prompts: deque[str | UserMessage | Mapping[str, Any]] = deque()
        self._arrived = anyio.Event()
        self._closed = False

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

    async def connect(self, prompt: str | None = None) -> None:
        """Resolve the provider, open (or resume) the session, and optionally queue a first prompt."""
        if self._conversation is None:
            self._conversation = Conversation(self.options)
            await self._conversation.start()
        if prompt is not None:
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
        """The messages of the next queued prompt, up to and including its `ResultMessage`."""
        return MessageStream(self._response())

    def receive_messages(self) -> MessageStream[Message]:
        """Every message of every queued prompt, waiting for new prompts until `disconnect`."""
        return MessageStream(self._messages())

    async def _response(self) -> AsyncGenerator[Message, None]:
        if self._prompts:
            async with aclosing(self.conversation.run(self._prompts.popleft())) as messages:
                async for message in messages:
                    yield message

    async def _messages(self) -> AsyncGenerator[Message, None]:
        while not self._closed:
            if not self._prompts:
                self._arrived = anyio.Event()
                await self._arrived.wait()
                continue
            async with aclosing(self._response()) as messages:
                async for message in messages:
                    yield message

    async def interrupt(self) -> None:
        """Stop the turn in flight; it ends promptly with a `ResultMessage`."""
        self.conversation.interrupt()

    async def set_model(self, model: str | None = None) -> None:
        """Switch the model for the following turns (history is kept)."""
        conversation = self.conversation
        self.options.model = model
        conversation.provider, conversation.model = resolve_provider(self.options)

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode for the following tool calls."""
        self.options.permission_mode = mode  # type: ignore[assignment]

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
