"""A synchronous API for scripts and notebooks: the same messages, from plain ``for`` loops.

An event loop runs in a background thread (an anyio blocking portal); each call hands work to it and waits::

    from openagent.sync import Client, query_sync

    for message in query_sync("What is 2 + 3?", AgentOptions(model="ollama:qwen3", tools=[add])):
        print(message)

    with Client(AgentOptions(model="ollama:qwen3")) as client:
        client.query("Hello")
        for message in client.receive_response():
            print(message)
        client.interrupt()   # from another thread, to stop a turn in flight
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from ._client import Client as AsyncClient
from ._client import ClientStatus
from ._options import AgentOptions
from ._query import query
from ._types import AssistantMessage, Message, Usage, UserMessage

__all__ = ["Client", "query_sync"]


def _iterate(portal: BlockingPortal, messages: AsyncIterator[Message]) -> Iterator[Message]:
    """Pull an async iterator from the portal's loop, closing it if the caller stops early."""
    try:
        while True:
            try:
                yield portal.call(messages.__anext__)
            except StopAsyncIteration:
                return
    finally:
        close = getattr(messages, "aclose", None)
        if close is not None:
            portal.call(close)


def query_sync(prompt: str, options: AgentOptions | None = None) -> Iterator[Message]:
    """`openagent._query` for synchronous code: yields the same messages, in the same order."""
    with start_blocking_portal() as portal:
        yield from _iterate(portal, query(prompt=prompt, options=options))


class Client:
    """`openagent.Client` for synchronous code; `interrupt` may be called from any thread."""

    def __init__(self, options: AgentOptions | None = None) -> None:
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._client = AsyncClient(options)

    def __enter__(self) -> Client:
        self.connect()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.disconnect()

    @property
    def portal(self) -> BlockingPortal:
        """The portal to the background event loop (started by `connect`)."""
        if self._portal is None:
            self.connect()
        assert self._portal is not None
        return self._portal

    def connect(self) -> None:
        """Start the background loop and connect the client."""
        if self._portal is None:
            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
            self._portal.call(self._client.connect)

    def query(self, prompt: str | Mapping[str, Any]) -> None:
        """Queue a prompt."""
        self.portal.call(self._client.query, prompt)

    def receive_response(self) -> Iterator[Message]:
        """The messages of the next queued prompt, up to its `ResultMessage`."""
        return _iterate(self.portal, self._client.receive_response())

    def add_tool_result(self, tool_use_id: str, content: Any, *, is_error: bool = False) -> None:
        """Answer a client-side tool call."""
        self._client.add_tool_result(tool_use_id, content, is_error=is_error)

    def interrupt(self) -> None:
        """Stop the turn in flight (safe from another thread)."""
        self.portal.call(self._client.interrupt)

    def on(self, event_type: str | type | None, callback: Any) -> Any:
        """See `openagent.Client.on`; callbacks run in the background loop's thread."""
        return self._client.on(event_type, callback)

    def disconnect(self) -> None:
        """Close the conversation and stop the background loop."""
        if self._portal is not None and self._portal_cm is not None:
            self._portal.call(self._client.disconnect)
            self._portal_cm.__exit__(None, None, None)
        self._portal = self._portal_cm = None

    @property
    def status(self) -> ClientStatus:
        """See `openagent.Client.status`."""
        return self._client.status

    @property
    def session_id(self) -> str:
        """The session this client writes to."""
        return self._client.session_id

    @property
    def history(self) -> list[UserMessage | AssistantMessage]:
        """The messages the model sees next turn."""
        return self._client.history

    @property
    def usage(self) -> Usage:
        """Tokens used so far."""
        return self._client.usage
