"""`EventReader`: a model stream read one event at a time, each read interruptible on its own.

With partial messages on, the loop hands every event on as it arrives, so `Conversation.interrupt` must be
able to stop a read that is waiting, and never the caller's own code while an event is being handed on (a
cancel scope cannot be held across a ``yield``). A cancel scope per read costs more than handling the event
(about 3 µs on asyncio, 9 µs on trio, against a 300-delta answer). On asyncio, a waiting read is interrupted
the way ``asyncio.timeout`` ends one: the task is cancelled and, once the read has stopped, ``uncancel``
takes the cancellation back, so nothing is paid per read. Other event loops get a cancel scope per read,
made from the loop's own scope class (anyio's generic constructor looks the loop up each time).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio

from ._models import ModelEvent

__all__ = ["EventReader"]


class EventReader:
    """Reads ``stream`` one event at a time; `interrupt` (from another task) stops the read in flight."""

    __slots__ = ("_cancelled", "_reading", "_scope", "_scope_type", "_stream", "_task")

    def __init__(self, stream: AsyncIterator[ModelEvent]) -> None:
        self._stream = stream
        self._task: Any = None
        self._scope_type: type[anyio.CancelScope] | None = None
        self._scope: anyio.CancelScope | None = None
        self._reading = self._cancelled = False
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio)
            self._scope_type = type(anyio.CancelScope())
        else:
            self._task = asyncio.current_task()

    async def next(self) -> ModelEvent | None:
        """The next event; ``None`` at the end of the stream, or when `interrupt` stopped the read."""
        if self._task is None:
            return await self._scoped()
        import asyncio

        self._reading = True
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            if self._cancelled and self._task.uncancel() == 0:  # ours alone: the read was interrupted
                return None
            raise
        finally:
            self._reading = self._cancelled = False

    async def _scoped(self) -> ModelEvent | None:
        assert self._scope_type is not None
        self._scope = self._scope_type()
        with self._scope:
            try:
                return await self._stream.__anext__()
            except StopAsyncIteration:
                return None
        return None  # cancelled by interrupt()

    def interrupt(self) -> None:
        """Stop the read in flight, if one is waiting (call from another task of the same event loop)."""
        if self._task is not None:
            if self._reading and not self._cancelled:
                self._cancelled = True
                self._task.cancel()
        elif self._scope is not None:
            self._scope.cancel()
